//! Faults: a closed set of kinds, each in its own file, each fired at a true
//! time or right after a journal event.
//!
//! ```
//! use sim::fault::{Fault, Pause, ScheduledFault, Trigger};
//! use std::time::Duration;
//! // Pause client1 for 15 s right after its first `acquired` event. The pause
//! // takes effect before client1's next action.
//! let f = ScheduledFault {
//!     fault: Fault::Pause(Pause { node: "client1".into(), duration: Duration::from_secs(15) }),
//!     trigger: Trigger::after("client1", "acquired"),
//! };
//! assert_eq!(f.fault.kind(), "pause");
//! ```

pub mod random;

use std::time::Duration;

use crate::actor::{Message, NodeId};
use crate::events::{self, field};
use crate::world::World;
use random::{Draw, Sizes, Targets};

/// Every kind, one line each: its file, its [`Fault`] variant and its
/// type, in the order of the variants (the order the scenario format's
/// reference and the loader's messages list them). A new kind is its file,
/// a line here, and its place in [`KINDS`] and [`WEIGHTS`].
///
/// `cargo fmt` does not reach the files this list declares (rustfmt follows
/// only declared modules): format them by name, `rustfmt --edition 2021
/// sim/src/fault/*.rs src/scenario/fault_kind/*.rs`, as CI checks them.
///
/// It calls `$callback!` with the lines, so that a crate that gives each
/// kind a file of its own (the scenario layer does) registers them all from
/// this one list: `sim::fault_kinds!(register)` expands to
/// `register! { pause: Pause(Pause), … }`.
#[macro_export]
macro_rules! fault_kinds {
    ($callback:ident) => {
        $callback! {
            /// The node stops running (a GC pause, a VM freeze).
            pause: Pause(Pause),
            /// The node's clock changes: skew, drift or a jump.
            clock: Clock(ClockChange),
            /// Messages on a link are held back.
            delay: Delay(Delay),
            /// Messages on a link are lost.
            drop: Drop(Drop),
            /// Messages on a link are delivered twice.
            duplicate: Duplicate(Duplicate),
            /// Groups of nodes cannot reach each other.
            partition: Partition(Partition),
            /// The node crashes, and may restart.
            crash: Crash(Crash),
        }
    };
}

/// What each kind's file gives [`Fault`]: its name and weight, its random
/// generator, the nodes it names, its magnitude and scope, and how it
/// fires.
pub(crate) trait Kind: Sized {
    /// The kind's name, as scenario files spell it.
    const NAME: &'static str;
    /// Its weight in random draws.
    const WEIGHT: u32;

    /// A random fault of this kind (see [`Fault::random`]).
    fn draw(d: &mut dyn Draw, t: &dyn Targets, sizes: &Sizes) -> Self;

    /// Every node name it refers to.
    fn nodes(&self) -> Vec<&str>;

    /// See [`Fault::magnitude`]; `None` by default.
    fn magnitude(&self) -> Option<Duration> {
        None
    }

    /// See [`Fault::set_magnitude`]; no change by default.
    fn set_magnitude(&mut self, d: Duration) {
        let _ = d;
    }

    /// See [`Fault::scope_mut`]; `None` by default.
    fn scope_mut(&mut self) -> Option<&mut Scope> {
        None
    }

    /// Fires it in the world.
    fn apply<M: Message>(&self, w: &mut World<M>);
}

/// Declares each kind's module and the [`Fault`] enum, whose methods
/// dispatch to each kind's [`Kind`].
macro_rules! declare {
    ($( $(#[$doc:meta])* $module:ident : $variant:ident($ty:ident) ),* $(,)?) => {
        $(
            mod $module;
            pub use $module::$ty;
        )*

        /// One fault.
        #[derive(Clone, Debug, PartialEq)]
        pub enum Fault {
            $( $(#[$doc])* $variant($ty), )*
        }

        impl Fault {
            /// The kind's name, as in scenario files.
            pub fn kind(&self) -> &'static str {
                match self {
                    $( Fault::$variant(_) => <$ty as Kind>::NAME, )*
                }
            }

            /// Every node name the fault refers to.
            pub fn nodes(&self) -> Vec<&str> {
                match self {
                    $( Fault::$variant(f) => f.nodes(), )*
                }
            }

            /// A random fault of one of `kinds` (picked by
            /// [`WEIGHTS`]), drawn by its kind's own generator.
            ///
            /// # Panics
            /// If `kinds` names no kind.
            pub fn random(
                d: &mut dyn Draw,
                kinds: &[impl AsRef<str>],
                t: &dyn Targets,
                sizes: &Sizes,
            ) -> Fault {
                let kind = random::pick_kind(d, kinds);
                $(
                    if kind == <$ty as Kind>::NAME {
                        return Fault::$variant(<$ty as Kind>::draw(d, t, sizes));
                    }
                )*
                unreachable!("fault kind `{kind}` has a weight but no generator")
            }

            /// The one duration that shrinking a failing schedule reduces: a
            /// pause's or partition's `duration`, a delay's `extra`, a crash's
            /// downtime, a clock change's jump (when it only jumps). `None`
            /// for the others.
            pub fn magnitude(&self) -> Option<Duration> {
                match self {
                    $( Fault::$variant(f) => f.magnitude(), )*
                }
            }

            /// Sets [`Fault::magnitude`] (a jump keeps its sign); no change
            /// for a fault without one.
            pub fn set_magnitude(&mut self, d: Duration) {
                match self {
                    $( Fault::$variant(f) => f.set_magnitude(d), )*
                }
            }

            /// A link fault's scope (delay, drop, duplicate); `None` for the
            /// others.
            pub fn scope_mut(&mut self) -> Option<&mut Scope> {
                match self {
                    $( Fault::$variant(f) => f.scope_mut(), )*
                }
            }

            pub(crate) fn apply<M: Message>(&self, w: &mut World<M>) {
                match self {
                    $( Fault::$variant(f) => f.apply(w), )*
                }
            }
        }
    };
}

fault_kinds!(declare);

/// Each kind's weight in [`random::pick_kind`], in the order it draws them: pauses
/// most (a stalled leaseholder), then delays, drops and partitions, then the
/// rest.
pub const WEIGHTS: &[(&str, u32)] = &[
    (Pause::NAME, Pause::WEIGHT),
    (Delay::NAME, Delay::WEIGHT),
    (Drop::NAME, Drop::WEIGHT),
    (Partition::NAME, Partition::WEIGHT),
    (ClockChange::NAME, ClockChange::WEIGHT),
    (Crash::NAME, Crash::WEIGHT),
    (Duplicate::NAME, Duplicate::WEIGHT),
];

/// Every kind's name, as scenario files and the journal spell it (the
/// order in which an `[explore]` table lists them by default).
pub const KINDS: &[&str] = &[
    Pause::NAME,
    Delay::NAME,
    ClockChange::NAME,
    Crash::NAME,
    Drop::NAME,
    Duplicate::NAME,
    Partition::NAME,
];

/// How a link fault armed on every sender (a delay with no `from`) names
/// them in the journal's `link` event.
pub const ANY_SENDER: &str = "*";

/// How many messages, or for how long, a link fault applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// The next `n` messages on the link.
    Count(u64),
    /// Every message sent on the link during this window.
    Window(Duration),
}

impl Default for Scope {
    fn default() -> Self {
        Scope::Count(1)
    }
}

/// When a fault fires.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Trigger {
    /// At this true time since the start of the run.
    At(Duration),
    /// `delay` after the `nth` (from 1) event of `kind` on `node`.
    After {
        /// Node whose event triggers the fault.
        node: String,
        /// Event kind (`acquired`, `accepted`, `pause`, …).
        kind: String,
        /// Which occurrence, from 1.
        nth: u32,
        /// How long after the event (zero: before the node's next action).
        delay: Duration,
    },
}

impl Trigger {
    /// Right after the first `kind` event on `node`.
    pub fn after(node: &str, kind: &str) -> Trigger {
        Trigger::After {
            node: node.to_owned(),
            kind: kind.to_owned(),
            nth: 1,
            delay: Duration::ZERO,
        }
    }
}

/// A fault with its trigger.
#[derive(Clone, Debug, PartialEq)]
pub struct ScheduledFault {
    /// What happens.
    pub fault: Fault,
    /// When.
    pub trigger: Trigger,
}

/// The second half of a fault that lasts: undone or ended later.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum FollowUp {
    /// Ends a pause of the node's incarnation `epoch` (a crash in between
    /// already ended it).
    Resume {
        node: NodeId,
        epoch: u64,
    },
    Heal {
        pairs: Vec<(NodeId, NodeId)>,
        groups: String,
    },
    Restart(NodeId),
    Disarm(u64),
}

impl FollowUp {
    pub(crate) fn apply<M: Message>(&self, w: &mut World<M>) {
        match self {
            FollowUp::Resume { node, epoch } => pause::resume(w, *node, *epoch),
            FollowUp::Heal { pairs, groups } => partition::heal(w, pairs, groups),
            FollowUp::Restart(node) => crash::restart(w, *node),
            FollowUp::Disarm(rule) => w.net.disarm(*rule),
        }
    }
}

/// Arms a link rule for a delay, drop or duplicate fault; with no `from`,
/// on every link into `to` (journaled on `to`, with `from = "*"`).
pub(crate) fn arm_link<M: Message>(
    w: &mut World<M>,
    from: Option<&str>,
    to: &str,
    action: crate::net::RuleAction,
    scope: Scope,
) {
    let (from_id, to_id) = (from.map(|f| w.node_id(f)), w.node_id(to));
    let now = w.now_ns();
    let (remaining, until) = match scope {
        Scope::Count(n) => (Some(n), None),
        Scope::Window(d) => (None, Some(now + d.as_nanos() as u64)),
    };
    let rule = w.net.arm(from_id, to_id, action, remaining, until);
    let mut fields = vec![(field::RULE, action.name().into()), (field::TO, to.into())];
    if from_id.is_none() {
        fields.push((field::FROM, ANY_SENDER.into()));
    }
    if let crate::net::RuleAction::Delay(extra) = action {
        fields.push((field::EXTRA_MS, (extra.as_millis() as u64).into()));
    }
    match scope {
        Scope::Count(n) => fields.push((field::COUNT, n.into())),
        Scope::Window(d) => fields.push((field::DURATION_MS, (d.as_millis() as u64).into())),
    }
    w.record(Some(from_id.unwrap_or(to_id)), events::LINK, fields);
    if let Some(until) = until {
        w.schedule_follow_up(until, FollowUp::Disarm(rule));
    }
}

#[cfg(test)]
mod tests {
    use super::random::Choices;
    use super::*;

    struct Three(Vec<String>);

    impl Targets for Three {
        fn node(&self, d: &mut dyn Draw) -> String {
            self.0[d.index(self.0.len())].clone()
        }
        fn link(&self, d: &mut dyn Draw) -> (String, String) {
            let from = d.index(self.0.len());
            let to = (from + 1 + d.index(self.0.len() - 1)) % self.0.len();
            (self.0[from].clone(), self.0[to].clone())
        }
        fn all(&self) -> &[String] {
            &self.0
        }
    }

    #[test]
    fn every_kind_has_a_weight_and_a_generator() {
        let mut weighted: Vec<&str> = WEIGHTS.iter().map(|(k, _)| *k).collect();
        let mut kinds = KINDS.to_vec();
        weighted.sort_unstable();
        kinds.sort_unstable();
        assert_eq!(weighted, kinds);
        let nodes = Three(vec!["a".into(), "b".into(), "c".into()]);
        for kind in KINDS {
            for numbers in [vec![], vec![u64::MAX; 16]] {
                let f = Fault::random(
                    &mut Choices::new(numbers),
                    &[kind],
                    &nodes,
                    &Sizes::default(),
                );
                assert_eq!(f.kind(), *kind);
            }
        }
    }

    #[test]
    fn random_partitions_split_two_sides_with_a_bridge_and_delays_hold_whole_nodes() {
        use rand::SeedableRng;
        let nodes = Three(vec!["a".into(), "b".into(), "c".into()]);
        let mut rng = rand::rngs::StdRng::seed_from_u64(11);
        let (mut two_sided, mut lone, mut bridged, mut one_way) = (0, 0, 0, 0);
        for _ in 0..200 {
            let p = Partition::random(&mut rng, &nodes, &Sizes::default());
            assert_eq!(p.groups.len(), 2);
            assert!(p.groups.iter().all(|g| !g.is_empty()));
            let mut all: Vec<&String> = p.groups.iter().flatten().collect();
            all.sort();
            all.dedup();
            assert_eq!(
                all.len(),
                p.groups.iter().flatten().count(),
                "no node twice"
            );
            match all.len() {
                3 if p.groups[0].len() == 2 => two_sided += 1,
                3 => lone += 1,
                // One node on neither side: it reaches both.
                _ => bridged += 1,
            }
            one_way += usize::from(p.one_way);
        }
        assert!(
            two_sided > 10 && lone > 20 && bridged > 10 && one_way > 20,
            "{two_sided} {lone} {bridged} {one_way}"
        );
        let delays: Vec<Delay> = (0..200)
            .map(|_| Delay::random(&mut rng, &nodes, &Sizes::default()))
            .collect();
        let holds = delays.iter().filter(|d| d.from.is_none());
        assert!(holds.clone().all(|d| matches!(d.scope, Scope::Window(_))));
        assert!(holds.count() > 10);
        assert!(delays
            .iter()
            .any(|d| d.from.is_some() && matches!(d.scope, Scope::Window(_))));
    }

    #[test]
    fn shrinking_a_jump_keeps_its_direction() {
        let mut f = Fault::Clock(ClockChange {
            node: "a".into(),
            offset_ns: None,
            rate: None,
            jump_ns: Some(-20_000_000_000),
        });
        assert_eq!(f.magnitude(), Some(Duration::from_secs(20)));
        f.set_magnitude(Duration::from_secs(3));
        assert_eq!(f.magnitude(), Some(Duration::from_secs(3)));
        let Fault::Clock(c) = &f else { unreachable!() };
        assert_eq!(c.jump_ns, Some(-3_000_000_000));
        // A drift has no magnitude to shrink.
        let drift = Fault::Clock(ClockChange {
            node: "a".into(),
            offset_ns: None,
            rate: Some(1.5),
            jump_ns: None,
        });
        assert_eq!(drift.magnitude(), None);
    }
}
