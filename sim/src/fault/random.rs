//! Random faults: one generator per kind, beside the kind (`Pause::random`,
//! `Delay::random`, …), drawing from a [`Draw`] and picking nodes through
//! [`Targets`]. The same generators serve a seeded sweep (a [`Draw`] is any
//! `rand::Rng`) and property tests ([`Choices`], a sequence of numbers that a
//! property-testing library shrinks toward zero: the first kind, the shortest
//! durations, the first nodes).
//!
//! ```
//! use rand::SeedableRng;
//! use sim::fault::random::{Draw, Sizes, Targets};
//! use sim::fault::{Fault, KINDS};
//!
//! struct Anyone(Vec<String>);
//! impl Targets for Anyone {
//!     fn node(&self, d: &mut dyn Draw) -> String {
//!         self.0[d.index(self.0.len())].clone()
//!     }
//!     fn link(&self, d: &mut dyn Draw) -> (String, String) {
//!         let from = self.node(d);
//!         let others: Vec<&String> = self.0.iter().filter(|n| **n != from).collect();
//!         (from.clone(), others[d.index(others.len())].clone())
//!     }
//!     fn all(&self) -> &[String] {
//!         &self.0
//!     }
//! }
//! let nodes = Anyone(vec!["a".into(), "b".into(), "c".into()]);
//! let mut rng = rand::rngs::StdRng::seed_from_u64(7);
//! let f = Fault::random(&mut rng, KINDS, &nodes, &Sizes::default());
//! assert!(f.nodes().iter().all(|n| ["a", "b", "c"].contains(n)));
//! ```

use std::time::Duration;

use super::WEIGHTS;

/// A source of random choices. Every `rand::Rng` is one (each method is the
/// `rand` call a seeded sweep has always made, so recorded seeds replay);
/// [`Choices`] is one for property tests.
pub trait Draw {
    /// `true` with probability `p` (`rand`'s `gen_bool`).
    fn chance(&mut self, p: f64) -> bool;
    /// A whole number in `lo..=hi`, drawn as a `u32`.
    fn u32_in(&mut self, lo: u32, hi: u32) -> u32;
    /// A whole number in `lo..=hi`, drawn as a `u64`.
    fn u64_in(&mut self, lo: u64, hi: u64) -> u64;
    /// An index below `len` (> 0), as `rand`'s `SliceRandom::choose` draws it.
    fn index(&mut self, len: usize) -> usize;
}

impl<R: rand::Rng + ?Sized> Draw for R {
    fn chance(&mut self, p: f64) -> bool {
        self.gen_bool(p)
    }
    fn u32_in(&mut self, lo: u32, hi: u32) -> u32 {
        self.gen_range(lo..=hi)
    }
    fn u64_in(&mut self, lo: u64, hi: u64) -> u64 {
        self.gen_range(lo..=hi)
    }
    fn index(&mut self, len: usize) -> usize {
        assert!(len > 0, "a choice among no items");
        // SliceRandom::choose's own draw, for slices shorter than u32::MAX.
        self.gen_range(0..u32::try_from(len).expect("fewer than 2^32 items")) as usize
    }
}

/// Choices replayed from a list of numbers, each scaled onto the range asked
/// for, so that a smaller number is a smaller choice: 0 is the low end of
/// every range, the first item and `false`. Past the end of the list every
/// choice is 0. A property-testing library that shrinks the numbers toward
/// zero shrinks the faults drawn from them toward the first kind, the
/// shortest durations and the earliest triggers.
#[derive(Clone, Debug, Default)]
pub struct Choices {
    numbers: Vec<u64>,
    next: usize,
}

impl Choices {
    /// Choices from these numbers, in order.
    pub fn new(numbers: Vec<u64>) -> Choices {
        Choices { numbers, next: 0 }
    }

    fn take(&mut self) -> u64 {
        let n = self.numbers.get(self.next).copied().unwrap_or(0);
        self.next += 1;
        n
    }

    /// `lo + n * (hi - lo + 1) / 2^64`: monotone in the number drawn.
    fn scaled(&mut self, lo: u64, hi: u64) -> u64 {
        assert!(lo <= hi, "an empty range {lo}..={hi}");
        let span = u128::from(hi - lo) + 1;
        lo + ((u128::from(self.take()) * span) >> 64) as u64
    }
}

impl Draw for Choices {
    fn chance(&mut self, p: f64) -> bool {
        // True for the top `p` of the numbers, so that 0 is `false`.
        let threshold = ((1.0 - p.clamp(0.0, 1.0)) * u64::MAX as f64) as u64;
        let n = self.take();
        p >= 1.0 || (p > 0.0 && n >= threshold)
    }
    fn u32_in(&mut self, lo: u32, hi: u32) -> u32 {
        self.scaled(u64::from(lo), u64::from(hi)) as u32
    }
    fn u64_in(&mut self, lo: u64, hi: u64) -> u64 {
        self.scaled(lo, hi)
    }
    fn index(&mut self, len: usize) -> usize {
        assert!(len > 0, "a choice among no items");
        self.scaled(0, len as u64 - 1) as usize
    }
}

/// The nodes random faults may hit; the caller decides how likely each is.
pub trait Targets {
    /// The node of a one-node fault (pause, clock change, crash, the lone
    /// side of a partition).
    fn node(&self, d: &mut dyn Draw) -> String;
    /// The `(from, to)` of a link fault: two different nodes.
    fn link(&self, d: &mut dyn Draw) -> (String, String);
    /// The node of a crash: by default as [`Targets::node`]. A caller whose
    /// nodes differ in what a crash costs them (state that a restart may
    /// lose) can favour those.
    fn crash_target(&self, d: &mut dyn Draw) -> String {
        self.node(d)
    }
    /// Every node of the world (the other side of a partition).
    fn all(&self) -> &[String];
}

/// The largest size of each kind's random faults.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sizes {
    /// Longest pause.
    pub max_pause: Duration,
    /// Longest extra latency of a delay.
    pub max_delay: Duration,
    /// Largest clock jump or offset, either sign.
    pub max_jump: Duration,
    /// Longest partition.
    pub max_partition: Duration,
    /// Longest downtime of a crash that restarts.
    pub max_restart: Duration,
}

impl Default for Sizes {
    /// 30 s for each, 10 s of downtime.
    fn default() -> Self {
        Sizes {
            max_pause: Duration::from_secs(30),
            max_delay: Duration::from_secs(30),
            max_jump: Duration::from_secs(30),
            max_partition: Duration::from_secs(30),
            max_restart: Duration::from_secs(10),
        }
    }
}

/// The shortest random duration, in milliseconds.
pub const MIN_MS: u64 = 100;

/// One of `kinds` (names from [`super::KINDS`]), by [`WEIGHTS`].
///
/// # Panics
/// If `kinds` names no kind.
pub fn pick_kind(d: &mut dyn Draw, kinds: &[impl AsRef<str>]) -> &'static str {
    let allowed: Vec<(&'static str, u32)> = WEIGHTS
        .iter()
        .copied()
        .filter(|(k, _)| kinds.iter().any(|s| s.as_ref() == *k))
        .collect();
    let total: u32 = allowed.iter().map(|(_, w)| w).sum();
    assert!(total > 0, "no fault kind to draw from");
    let mut pick = d.u32_in(0, total - 1);
    for (kind, weight) in allowed {
        if pick < weight {
            return kind;
        }
        pick -= weight;
    }
    unreachable!("the pick is below the total weight")
}

/// A whole number of milliseconds from [`MIN_MS`] to `max`.
pub fn millis(d: &mut dyn Draw, max: Duration) -> Duration {
    let max_ms = (max.as_millis() as u64).max(MIN_MS);
    Duration::from_millis(d.u64_in(MIN_MS, max_ms))
}

/// [`millis`] in nanoseconds, either sign.
pub fn signed_ns(d: &mut dyn Draw, max: Duration) -> i64 {
    let ns = millis(d, max).as_nanos() as i64;
    if d.chance(0.5) {
        ns
    } else {
        -ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_is_the_smallest_choice() {
        let mut c = Choices::new(vec![0; 4]);
        assert!(!c.chance(0.85));
        assert_eq!(c.u64_in(100, 30_000), 100);
        assert_eq!(c.index(5), 0);
        assert_eq!(c.u32_in(3, 9), 3);
    }

    #[test]
    fn the_largest_number_is_the_largest_choice() {
        let mut c = Choices::new(vec![u64::MAX; 4]);
        assert!(c.chance(0.2));
        assert_eq!(c.u64_in(100, 30_000), 30_000);
        assert_eq!(c.index(5), 4);
        assert_eq!(c.u32_in(3, 9), 9);
    }

    #[test]
    fn past_the_end_every_choice_is_zero() {
        let mut c = Choices::new(vec![u64::MAX]);
        c.index(3);
        assert_eq!(c.u64_in(7, 9), 7);
        assert!(!c.chance(0.5));
    }
}
