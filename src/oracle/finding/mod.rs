//! The kinds of finding, declared once.
//!
//! Each kind is one file in this folder and one line in the list below.
//! The file holds its definition (module docs), its check and its
//! [`Signature`]; the line gives everything else the project spells out
//! per kind: the [`ViolationKind`] variant and its JSON name (the file's
//! name), the counter that the report, each seed of a sweep and `[expect]`
//! carry ([`Counts`]), whether it makes a run a violation, where it is
//! found (at a storage write, or in the lock's or a key's own account),
//! and the words the verdict line counts it in (`2 stale`, `1 early
//! expiries`).
//!
//! A kind's file provides two functions:
//!
//! ```ignore
//! /// Counts the findings and appends one `Violation` for each finding (or
//! /// per key, for a count that is not one per finding).
//! pub(super) fn check(history: &History<'_>, config: &OracleConfig, found: &mut Vec<Violation>) -> u64;
//! /// Fills in `sig` for the finding this check made at journal position `seq`.
//! pub(super) fn signature(history: &History<'_>, seq: u64, sig: &mut Signature);
//! ```
//!
//! The checks run in the list's order; findings at the same event keep
//! that order.

use std::fmt;

use serde::de::{self, IgnoredAny, MapAccess, Visitor};
use serde::ser::SerializeStruct;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::history::History;
use super::signature::Signature;
use super::{OracleConfig, Violation};

/// Whether findings of a kind make a run a violation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Judged {
    /// Always (a stale write, a token regression, a broken lock contract).
    Always,
    /// Only when the scenario is `strict` (a zombie write: fencing tokens
    /// cannot stop it).
    Strict,
    /// Never: counted and explained only (a late write).
    Never,
}

/// Where a kind of finding is found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// At a storage acceptance, judged against the grant it was written
    /// under (its counter is listed before the accepted and rejected
    /// writes).
    Write,
    /// In the lock's own account of its grants.
    Lock,
    /// In a storage key's final value.
    Key,
}

/// Whether the verdict line shows a kind's count when it is zero.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shown {
    /// `0 stale` is said: the headline counts.
    Always,
    /// Said only when found, so that a run without it reads as it always has.
    Found,
}

macro_rules! finding_kinds {
    ($(
        $module:ident => $variant:ident(
            $counter:ident, $judged:ident, $place:ident, $shown:ident, $words:literal, $doc:literal
        );
    )*) => {
        $(mod $module;)*

        /// What kind of finding a [`Violation`] is. Its JSON name
        /// ([`ViolationKind::as_str`]) is the name of the file that checks it.
        #[derive(
            Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
        )]
        #[serde(rename_all = "snake_case")]
        pub enum ViolationKind {
            $(#[doc = $doc] $variant,)*
        }

        impl ViolationKind {
            /// Every kind, in the order the checks run.
            pub const ALL: &'static [ViolationKind] = &[$(ViolationKind::$variant),*];

            /// The kind's name: `"stale_write"`, `"early_expiry"`, …
            pub fn as_str(self) -> &'static str {
                match self {
                    $(ViolationKind::$variant => stringify!($module),)*
                }
            }

            /// The [`Counts`] field (and `[expect]` key) that counts findings
            /// of this kind: `"stale_writes"`, `"early_expiries"`, …
            pub fn counter(self) -> &'static str {
                match self {
                    $(ViolationKind::$variant => stringify!($counter),)*
                }
            }

            /// Whether findings of this kind make a run a violation.
            pub fn judged(self) -> Judged {
                match self {
                    $(ViolationKind::$variant => Judged::$judged,)*
                }
            }

            /// Where findings of this kind are found.
            pub fn place(self) -> Place {
                match self {
                    $(ViolationKind::$variant => Place::$place,)*
                }
            }

            fn words(self) -> (&'static str, Shown) {
                match self {
                    $(ViolationKind::$variant => ($words, Shown::$shown),)*
                }
            }
        }

        /// One count per kind of finding, and the storage's accepted and
        /// rejected writes: the counters a run's report ([`Counters`]:
        /// `Counts<u64>`) and `[expect]` (`Counts<Option<u64>>`) carry,
        /// under the names of the JSON fields and of the `[expect]` keys.
        ///
        /// [`Counters`]: super::Counters
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        pub struct Counts<T> {
            $(#[doc = $doc] pub $counter: T,)*
            /// Storage `accepted` events.
            pub accepted_writes: T,
            /// Storage `rejected` events.
            pub rejected_writes: T,
        }

        impl<T> Counts<T> {
            /// The count of findings of `kind`.
            pub fn finding(&self, kind: ViolationKind) -> &T {
                match kind {
                    $(ViolationKind::$variant => &self.$counter,)*
                }
            }

            /// The count of findings of `kind`, to change.
            pub fn finding_mut(&mut self, kind: ViolationKind) -> &mut T {
                match kind {
                    $(ViolationKind::$variant => &mut self.$counter,)*
                }
            }
        }

        /// Runs every kind's check over `history`, in the list's order:
        /// the counts of findings (the writes are the caller's to count).
        pub(super) fn check_all(
            history: &History<'_>,
            config: &OracleConfig,
            found: &mut Vec<Violation>,
        ) -> Counts<u64> {
            Counts {
                $($counter: $module::check(history, config, found),)*
                accepted_writes: 0,
                rejected_writes: 0,
            }
        }

        /// Runs the check of one kind over `history`: the count of its findings.
        pub(super) fn check(
            kind: ViolationKind,
            history: &History<'_>,
            config: &OracleConfig,
            found: &mut Vec<Violation>,
        ) -> u64 {
            match kind {
                $(ViolationKind::$variant => $module::check(history, config, found),)*
            }
        }

        /// Fills in the signature of the finding of `kind` at `seq`.
        pub(super) fn signature(
            kind: ViolationKind,
            history: &History<'_>,
            seq: u64,
            sig: &mut Signature,
        ) {
            match kind {
                $(ViolationKind::$variant => $module::signature(history, seq, sig),)*
            }
        }
    };
}

/// How far a lock-side end may fall from the end a promise named and still
/// keep it: a timer's true wait is rounded to the nanosecond from its
/// clock's rate. The findings that compare ends with promises, and the
/// milestones, use it.
pub(crate) const ROUNDING_NS: u64 = 1_000;

// One line per kind: its file => its variant(its counter, when it makes a
// run a violation, where it is found, whether the verdict line shows it at
// zero, the verdict line's words, what it is).
finding_kinds! {
    stale_write => StaleWrite(stale_writes, Always, Write, Always, "stale", "The storage accepted a write after accepting one made under a newer grant.");
    zombie_write => ZombieWrite(zombie_writes, Strict, Write, Always, "zombie", "The storage accepted a write whose grant was no longer current, while another client's newer grant was current at the lock, before it had accepted any write made under a newer grant.");
    token_regression => TokenRegression(token_regressions, Always, Lock, Always, "token regressions", "The lock handed out a token not greater than an earlier grant's.");
    lost_update => LostUpdate(lost_updates, Always, Key, Always, "lost updates", "A key's final value is below the number of increments the storage applied.");
    late_write => LateWrite(late_writes, Never, Write, Always, "late", "The storage accepted a write after its grant ended, while no newer grant to another client was current: late, but never a violation.");
    double_grant => DoubleGrant(double_grants, Always, Lock, Always, "double grants", "A lock node granted the lock while its grant to another client was still live there: a broken lock contract.");
    early_expiry => EarlyExpiry(early_expiries, Always, Lock, Found, "early expiries", "A lock node ended a grant before the end its grant or latest renewal promised, on its own clock: a broken lock contract.");
    minority_acquire => MinorityAcquire(minority_acquires, Always, Lock, Found, "minority acquisitions", "A client believed an acquisition that fewer than a majority of the lock nodes had granted: a broken lock contract.");
    unbacked_acquire => UnbackedAcquire(unbacked_acquires, Always, Lock, Found, "unbacked acquisitions", "A client believed a second time an acquisition the lock granted once: a belief the lock never backed.");
    unbacked_renewal => UnbackedRenewal(unbacked_renewals, Always, Lock, Found, "unbacked renewals", "A client believed the lock renewed its lease when no lock node had renewed it since the renewals it had already counted: a belief the lock never backed.");
    overlong_lease => OverlongLease(overlong_leases, Always, Lock, Found, "overlong leases", "A client's lease check passed with time left past the end the lock promised, with no clock fault to explain it: the client's arithmetic is wrong.");
    early_takeover => EarlyTakeover(early_takeovers, Always, Lock, Found, "early takeovers", "A lock or table let a client take the lock over while the holder's latest grant or renewal there still promised time, with no clock fault to explain it: a live holder taken over.");
}

impl ViolationKind {
    /// Whether a finding of this kind makes a run a violation: zombie writes
    /// only when `strict`, late writes never, the rest always.
    pub fn counts(self, strict: bool) -> bool {
        match self.judged() {
            Judged::Always => true,
            Judged::Strict => strict,
            Judged::Never => false,
        }
    }
}

impl fmt::Display for ViolationKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One of the [`Counts`]: a kind of finding's, or the storage's accepted
/// or rejected writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Counter {
    /// The findings of a kind.
    Finding(ViolationKind),
    /// The storage's `accepted` events.
    AcceptedWrites,
    /// The storage's `rejected` events.
    RejectedWrites,
}

impl Counter {
    /// Every counter, in the order outputs list them: the findings made at
    /// a write, the accepted and rejected writes, then the other findings.
    pub fn all() -> impl Iterator<Item = Counter> {
        let at_write = |write: bool| {
            ViolationKind::ALL
                .iter()
                .filter(move |k| (k.place() == Place::Write) == write)
                .map(|&k| Counter::Finding(k))
        };
        at_write(true)
            .chain([Counter::AcceptedWrites, Counter::RejectedWrites])
            .chain(at_write(false))
    }

    /// The counter's name, as JSON fields and `[expect]` keys spell it:
    /// `"stale_writes"`, `"accepted_writes"`, …
    pub fn name(self) -> &'static str {
        match self {
            Counter::Finding(kind) => kind.counter(),
            Counter::AcceptedWrites => "accepted_writes",
            Counter::RejectedWrites => "rejected_writes",
        }
    }

    /// The counter named `name`.
    pub fn named(name: &str) -> Option<Counter> {
        Counter::all().find(|c| c.name() == name)
    }
}

impl<T> Counts<T> {
    /// The value of one counter.
    pub fn get(&self, counter: Counter) -> &T {
        match counter {
            Counter::Finding(kind) => self.finding(kind),
            Counter::AcceptedWrites => &self.accepted_writes,
            Counter::RejectedWrites => &self.rejected_writes,
        }
    }

    /// The value of one counter, to change.
    pub fn get_mut(&mut self, counter: Counter) -> &mut T {
        match counter {
            Counter::Finding(kind) => self.finding_mut(kind),
            Counter::AcceptedWrites => &mut self.accepted_writes,
            Counter::RejectedWrites => &mut self.rejected_writes,
        }
    }

    /// Every counter with its value, in [`Counter::all`]'s order.
    pub fn iter(&self) -> impl Iterator<Item = (Counter, &T)> {
        Counter::all().map(move |c| (c, self.get(c)))
    }

    /// The counts that `value` gives each counter, asked in
    /// [`Counter::all`]'s order; the first error stops it.
    pub fn try_from_fn<E>(mut value: impl FnMut(Counter) -> Result<T, E>) -> Result<Self, E>
    where
        T: Default,
    {
        let mut counts = Counts::default();
        for c in Counter::all() {
            *counts.get_mut(c) = value(c)?;
        }
        Ok(counts)
    }
}

impl Counts<u64> {
    /// The findings in words, as the verdict line says them: `1 stale, 0
    /// zombie, 0 late, 0 token regressions, 0 lost updates, 0 double
    /// grants`, and the rarer kinds only when found (`, 1 early expiries`).
    pub fn found_text(&self) -> String {
        let mut text = String::new();
        for (c, n) in self.iter() {
            let Counter::Finding(kind) = c else { continue };
            let (words, shown) = kind.words();
            if shown == Shown::Found && *n == 0 {
                continue;
            }
            if !text.is_empty() {
                text.push_str(", ");
            }
            text += &format!("{n} {words}");
        }
        text
    }
}

/// The JSON form: one field per counter, in [`Counter::all`]'s order.
impl<T: Serialize> Serialize for Counts<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("Counts", Counter::all().count())?;
        for (c, n) in self.iter() {
            s.serialize_field(c.name(), n)?;
        }
        s.end()
    }
}

/// Reads the JSON form back; other fields beside the counters (a report's
/// or a seed's own) are skipped, as a flattened struct's are.
impl<'de> Deserialize<'de> for Counts<u64> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct CountsVisitor;
        impl<'de> Visitor<'de> for CountsVisitor {
            type Value = Counts<u64>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("the counters of a report")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Counts<u64>, A::Error> {
                let mut read: Counts<Option<u64>> = Counts::default();
                while let Some(key) = map.next_key::<String>()? {
                    match Counter::named(&key) {
                        Some(c) => *read.get_mut(c) = Some(map.next_value()?),
                        None => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Counts::try_from_fn(|c| {
                    read.get(c)
                        .ok_or_else(|| de::Error::missing_field(c.name()))
                })
            }
        }
        deserializer.deserialize_map(CountsVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The JSON fields of a report's counters, in the order `run --json`
    /// and each seed of `explore --json` have always printed them; a kind
    /// added to the list comes after them.
    #[test]
    fn counters_serialize_under_their_public_names_in_order() {
        let counts = Counts::<u64> {
            stale_writes: 1,
            accepted_writes: 2,
            minority_acquires: 3,
            ..Counts::default()
        };
        let json = serde_json::to_string(&counts).unwrap();
        assert!(
            json.starts_with(
                "{\"stale_writes\":1,\"zombie_writes\":0,\"late_writes\":0,\"accepted_writes\":2,\
                 \"rejected_writes\":0,\"token_regressions\":0,\"lost_updates\":0,\
                 \"double_grants\":0,\"early_expiries\":0,\"minority_acquires\":3"
            ),
            "{json}"
        );
        let back: Counts<u64> = serde_json::from_str(&json).unwrap();
        assert_eq!(back, counts);
    }

    #[test]
    fn reading_counters_skips_other_fields_and_names_a_missing_one() {
        let mut json = serde_json::to_value(Counts::<u64>::default()).unwrap();
        json["seed"] = 7.into();
        let back: Counts<u64> = serde_json::from_value(json.clone()).unwrap();
        assert_eq!(back, Counts::default());
        json.as_object_mut().unwrap().remove("minority_acquires");
        let err = serde_json::from_value::<Counts<u64>>(json).unwrap_err();
        assert!(err.to_string().contains("minority_acquires"), "{err}");
    }

    #[test]
    fn the_verdict_line_names_rare_kinds_only_when_found() {
        let mut counts = Counts::<u64> {
            stale_writes: 2,
            ..Counts::default()
        };
        assert_eq!(
            counts.found_text(),
            "2 stale, 0 zombie, 0 late, 0 token regressions, 0 lost updates, 0 double grants"
        );
        counts.early_expiries = 1;
        assert!(counts
            .found_text()
            .ends_with(", 0 double grants, 1 early expiries"));
    }

    #[test]
    fn each_kind_is_named_after_its_file_and_counted_once() {
        let mut counters: Vec<&str> = Counter::all().map(Counter::name).collect();
        assert_eq!(counters.len(), ViolationKind::ALL.len() + 2);
        counters.sort_unstable();
        counters.dedup();
        assert_eq!(counters.len(), ViolationKind::ALL.len() + 2);
        for &kind in ViolationKind::ALL {
            let json = serde_json::to_string(&kind).unwrap();
            assert_eq!(json, format!("\"{}\"", kind.as_str()));
            assert_eq!(Counter::named(kind.counter()), Some(Counter::Finding(kind)));
        }
    }
}
