//! The signature of a finding: which writes show it, and how their grants
//! stood. Two runs whose findings share a signature broke the design the
//! same way, at the same writes; `shrink` keeps a failure's signature while
//! it removes and simplifies faults, so a shrunk schedule tells the story
//! the seed told, not merely any violation of the same kind.
//!
//! ```
//! use fencesim::oracle::signature::signatures;
//! use sim::journal::{Event, Journal};
//!
//! let s = 1_000_000_000u64;
//! let e = |t: u64, node: &str, kind: &str| Event::new(0, t, node, t as i64, kind);
//! let journal = Journal::from_events([
//!     e(0, "client1", "acquired").with("lease", 1u64).with("token", 33u64),
//!     e(10 * s, "lock", "expired").with("client", "client1").with("lease", 1u64),
//!     e(10 * s, "client2", "acquired").with("lease", 2u64).with("token", 34u64),
//!     e(11 * s, "client2", "wrote").with("write", "client2/1").with("token", 34u64),
//!     e(11 * s, "storage", "accepted").with("write", "client2/1").with("client", "client2"),
//!     e(15 * s, "client1", "wrote").with("write", "client1/1").with("token", 33u64),
//!     e(16 * s, "storage", "accepted").with("write", "client1/1").with("client", "client1"),
//! ]);
//! let found = signatures(&journal);
//! assert_eq!(found.len(), 1);
//! assert_eq!(
//!     found[0].to_string(),
//!     "stale_write by client1 (grant client1#1) after client2 (grant client2#1)"
//! );
//! ```

use std::fmt;

use sim::journal::Journal;

use super::history::{History, Outcome};
use super::{check, OracleConfig, ViolationKind};

/// A grant, named by its client and its place among that client's grants:
/// `client1#2` is client1's second grant.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct GrantRef {
    /// The client the lock granted it to.
    pub client: String,
    /// 1 for the client's first grant, 2 for its second, …
    pub nth: u32,
}

impl fmt::Display for GrantRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}#{}", self.client, self.nth)
    }
}

/// What a finding is, at which writes: its kind, the client whose write
/// (or grant, for a token regression) shows it, the client holding the
/// newer grant that makes it one, those grants in the lock's order, and
/// whether the writer's grant reached its client late (after the lock had
/// already ended it).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Signature {
    /// The kind of finding.
    pub kind: ViolationKind,
    /// The writer (stale, zombie and late writes), or the client handed the
    /// regressed token; `None` for a lost update, which belongs to a key.
    pub writer: Option<String>,
    /// The holder of the newer grant: the client whose earlier accepted
    /// write makes a stale write stale, the client whose newer grant was
    /// current at a zombie write, the client the lock granted anew before a
    /// late write (`None` when the writer's grant had only expired or been
    /// released), or the client of the larger earlier token of a regression.
    pub newer_holder: Option<String>,
    /// The writer's grant and the newer one, in the order the lock made
    /// them (its `granted` events).
    pub grants: Vec<GrantRef>,
    /// The lock had ended the writer's grant before its client heard of it
    /// (a late grant), rather than while the client held it.
    pub late_grant: bool,
}

impl fmt::Display for Signature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.kind)?;
        let grant_of = |client: &str| {
            self.grants
                .iter()
                .find(|g| g.client == client)
                .map_or(String::new(), |g| format!(" (grant {g})"))
        };
        if let Some(w) = &self.writer {
            write!(f, " by {w}{}", grant_of(w))?;
        }
        if self.late_grant {
            f.write_str(", granted late")?;
        }
        if let Some(n) = &self.newer_holder {
            // The newer grant is the later of the two when both are one
            // client's.
            let newer = self
                .grants
                .iter()
                .rev()
                .find(|g| g.client == *n)
                .map_or(String::new(), |g| format!(" (grant {g})"));
            write!(f, " after {n}{newer}")?;
        }
        Ok(())
    }
}

/// The signature of every finding in `journal`, in journal order (as
/// [`super::Report::violations`] lists them), zombie writes included.
pub fn signatures(journal: &Journal) -> Vec<Signature> {
    let roles = super::Roles::default();
    let history = History::index(journal, &roles);
    let report = check(
        journal,
        &OracleConfig {
            strict: true,
            ..OracleConfig::default()
        },
    );
    report
        .violations
        .iter()
        .map(|v| of(&history, v.kind, v.seq))
        .collect()
}

/// The signature of the finding of `kind` shown at journal position `seq`:
/// what its kind's file says of it.
fn of(history: &History<'_>, kind: ViolationKind, seq: u64) -> Signature {
    let mut sig = Signature {
        kind,
        writer: None,
        newer_holder: None,
        grants: Vec::new(),
        late_grant: false,
    };
    super::finding::signature(kind, history, seq, &mut sig);
    sig
}

/// The signature of a finding made at the storage's acceptance `seq` (a
/// stale, zombie or late write): its writer, and the newer grant that
/// `newer` finds for the writer's grant (by its index), if any.
pub(super) fn at_write(
    history: &History<'_>,
    seq: u64,
    sig: &mut Signature,
    newer: impl FnOnce(&Outcome<'_>, usize) -> Option<usize>,
) {
    let Some(outcome) = history.outcomes.iter().find(|o| o.seq == seq && o.accepted) else {
        return;
    };
    sig.writer = Some(outcome.client.to_owned());
    let Some(g) = outcome.grant else { return };
    let mut involved = vec![g];
    sig.late_grant = history.grants[g]
        .end
        .is_some_and(|e| e.seq < history.grants[g].seq);
    if let Some(n) = newer(outcome, g) {
        sig.newer_holder = Some(history.grants[n].client.to_owned());
        involved.push(n);
    }
    involved.sort_by_key(|&i| (history.grants[i].lock_seq, i));
    sig.grants = involved.iter().map(|&i| grant_ref(history, i)).collect();
}

/// Grant `index` as `client#n`.
pub(super) fn grant_ref(history: &History<'_>, index: usize) -> GrantRef {
    let grant = &history.grants[index];
    let nth = history.grants[..=index]
        .iter()
        .filter(|g| g.client == grant.client)
        .count() as u32;
    GrantRef {
        client: grant.client.to_owned(),
        nth,
    }
}
