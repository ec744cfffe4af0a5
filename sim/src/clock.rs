//! Per-node clocks: true simulated time seen through an offset, a rate and
//! steps.
//!
//! Like TigerBeetle's `testing/time.zig`, the model is small and explicit. A
//! node has two clocks:
//! - a **monotonic** clock: starts at 0 with the world and advances at the
//!   node's rate (1.0 = true speed, 1.1 = 10% fast). It never steps.
//! - a **wall** clock: the monotonic reading plus an offset that skew
//!   (`offset`) and jumps (`jump`, forward or back) change at once.
//!
//! Rates are kept in parts per million and arithmetic is integer, so readings
//! are identical on every machine.
//!
//! ```
//! use sim::clock::Clock;
//! use std::time::Duration;
//! let mut c = Clock::default();
//! c.set_rate(0, 1.5);                         // 50% fast from t = 0
//! assert_eq!(c.mono_ns(2_000_000_000), 3_000_000_000);
//! c.jump(2_000_000_000, -5_000_000_000);      // wall clock steps back 5 s
//! assert_eq!(c.wall_ns(2_000_000_000), -2_000_000_000);
//! assert_eq!(c.mono_ns(2_000_000_000), 3_000_000_000); // monotonic unaffected
//! // A 3 s timer on this clock fires after 2 s of true time.
//! assert_eq!(c.true_after(Duration::from_secs(3)), Duration::from_secs(2));
//! ```

use std::time::Duration;

/// One part per million: the unit of clock rates.
const PPM: i128 = 1_000_000;

/// A node's clocks as a function of true time (nanoseconds since the start).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Clock {
    /// True time of the last rate change.
    anchor_true_ns: u64,
    /// Monotonic reading at `anchor_true_ns`.
    anchor_mono_ns: i128,
    /// Monotonic nanoseconds per true second, in millionths (1_000_000 = 1.0).
    rate_ppm: u64,
    /// Wall clock minus monotonic clock.
    wall_offset_ns: i64,
}

impl Default for Clock {
    fn default() -> Self {
        Clock {
            anchor_true_ns: 0,
            anchor_mono_ns: 0,
            rate_ppm: PPM as u64,
            wall_offset_ns: 0,
        }
    }
}

impl Clock {
    /// Monotonic reading at true time `t_ns`. `t_ns` must not precede the
    /// last rate change.
    pub fn mono_ns(&self, t_ns: u64) -> i64 {
        assert!(
            t_ns >= self.anchor_true_ns,
            "clock read before its last rate change"
        );
        let elapsed = i128::from(t_ns - self.anchor_true_ns);
        let mono = self.anchor_mono_ns + elapsed * i128::from(self.rate_ppm) / PPM;
        i64::try_from(mono).expect("monotonic clock overflow")
    }

    /// Wall clock reading at true time `t_ns`.
    pub fn wall_ns(&self, t_ns: u64) -> i64 {
        self.mono_ns(t_ns).saturating_add(self.wall_offset_ns)
    }

    /// Sets the rate from true time `t_ns` on (`1.0` = true speed).
    pub fn set_rate(&mut self, t_ns: u64, rate: f64) {
        assert!(
            rate > 0.0 && rate.is_finite(),
            "clock rate must be positive"
        );
        self.anchor_mono_ns = i128::from(self.mono_ns(t_ns));
        self.anchor_true_ns = t_ns;
        // Rounded once, here; every later reading is exact integer arithmetic.
        self.rate_ppm = (rate * PPM as f64).round().max(1.0) as u64;
    }

    /// Current rate as a float, for display.
    pub fn rate(&self) -> f64 {
        self.rate_ppm as f64 / PPM as f64
    }

    /// Sets the wall clock to read `offset_ns` away from true time at `t_ns`.
    pub fn set_offset(&mut self, t_ns: u64, offset_ns: i64) {
        let target = (t_ns as i64).saturating_add(offset_ns);
        self.wall_offset_ns = target - self.mono_ns(t_ns);
    }

    /// Steps the wall clock by `delta_ns` (negative: back in time).
    pub fn jump(&mut self, _t_ns: u64, delta_ns: i64) {
        self.wall_offset_ns = self.wall_offset_ns.saturating_add(delta_ns);
    }

    /// True time it takes this clock's monotonic reading to advance by
    /// `local` at the current rate (what a timer set for `local` waits).
    pub fn true_after(&self, local: Duration) -> Duration {
        let ns = local.as_nanos() * PPM as u128 / u128::from(self.rate_ppm);
        Duration::from_nanos(u64::try_from(ns).unwrap_or(u64::MAX))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    #[test]
    fn a_true_clock_reads_true_time() {
        let c = Clock::default();
        assert_eq!(c.mono_ns(7 * S), 7 * S as i64);
        assert_eq!(c.wall_ns(7 * S), 7 * S as i64);
    }

    #[test]
    fn drift_accumulates_piecewise() {
        let mut c = Clock::default();
        c.set_rate(10 * S, 1.1);
        assert_eq!(c.mono_ns(20 * S), 21 * S as i64);
        c.set_rate(20 * S, 0.5);
        assert_eq!(c.mono_ns(30 * S), 26 * S as i64);
        assert_eq!(c.rate(), 0.5);
    }

    #[test]
    fn offset_is_absolute_and_jump_is_relative() {
        let mut c = Clock::default();
        c.set_offset(S, 5 * S as i64);
        assert_eq!(c.wall_ns(S), 6 * S as i64);
        c.jump(S, -2 * S as i64);
        assert_eq!(c.wall_ns(2 * S), 5 * S as i64);
        // Offset again: absolute, forgets the jump.
        c.set_offset(2 * S, 0);
        assert_eq!(c.wall_ns(3 * S), 3 * S as i64);
        assert_eq!(c.mono_ns(3 * S), 3 * S as i64);
    }

    #[test]
    fn monotonic_never_goes_back() {
        let mut c = Clock::default();
        c.set_rate(0, 3.0);
        c.jump(S, -100 * S as i64);
        let mut last = i64::MIN;
        for t in 0..100 {
            let m = c.mono_ns(t * S / 10);
            assert!(m >= last);
            last = m;
        }
    }

    #[test]
    fn slow_clocks_make_timers_late() {
        let mut c = Clock::default();
        c.set_rate(0, 0.5);
        assert_eq!(
            c.true_after(Duration::from_secs(10)),
            Duration::from_secs(20)
        );
    }
}
