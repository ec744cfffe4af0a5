//! The time axis of the HTML timeline and the SVG figure: true time to
//! scale, `px_per_ms` pixels per millisecond, except that a quiet stretch
//! (no event) wider than `cut_px` is cut to `break_px` and labelled with its
//! length. With `cut: None` the whole run is to scale.
//!
//! ```
//! use fencesim::report::axis::{Axis, Cut};
//!
//! let ms = 1_000_000u64;
//! // Events at 0, 5 ms and 10 s: 4 px/ms, stretches over 160 px cut to 56 px.
//! let axis = Axis::new([0, 5 * ms, 10_000 * ms], 100.0, 4.0, Some(Cut { cut_px: 160.0, break_px: 56.0 }));
//! assert_eq!(axis.x(5 * ms), 120.0);
//! assert_eq!(axis.x(10_000 * ms), 176.0);
//! assert_eq!(axis.cuts().len(), 1);
//! assert_eq!(axis.cuts()[0].t0_ns, 5 * ms);
//! // In a cut, time still moves right, linearly across the break.
//! assert!(axis.x(6_000 * ms) > 120.0 && axis.x(6_000 * ms) < 176.0);
//! ```
//!
//! The page's script (`timeline.js`, `axisOf`) computes the same mapping
//! when the reader zooms; the two are kept in step by the page's self-test
//! (the cursor's x at load is the one this module computed).

/// When quiet stretches are cut.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cut {
    /// A quiet stretch wider than this, at the axis' scale, is cut.
    pub cut_px: f64,
    /// The width it is cut to.
    pub break_px: f64,
}

/// A quiet stretch cut out of the axis.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Break {
    /// True time of the event before it.
    pub t0_ns: u64,
    /// True time of the event after it.
    pub t1_ns: u64,
    /// Where it starts on the axis.
    pub x0: f64,
    /// Where it ends.
    pub x1: f64,
}

/// The mapping from true time to x.
#[derive(Clone, Debug)]
pub struct Axis {
    px_per_ms: f64,
    /// Distinct event times (and 0), ascending, with their x.
    times: Vec<u64>,
    x: Vec<f64>,
    cuts: Vec<Break>,
}

impl Axis {
    /// The axis of events at `times` (true times in ns, in journal order,
    /// so non-decreasing), starting at `left` for time 0.
    pub fn new(
        times: impl IntoIterator<Item = u64>,
        left: f64,
        px_per_ms: f64,
        cut: Option<Cut>,
    ) -> Axis {
        let mut axis = Axis {
            px_per_ms,
            times: vec![0],
            x: vec![left],
            cuts: Vec::new(),
        };
        for t in times {
            let (&prev_t, &prev_x) = (axis.times.last().unwrap(), axis.x.last().unwrap());
            assert!(
                t >= prev_t,
                "journal times go backwards: {t} after {prev_t}"
            );
            if t == prev_t {
                continue;
            }
            let wide = (t - prev_t) as f64 / 1e6 * px_per_ms;
            let x = match cut {
                Some(c) if wide > c.cut_px => {
                    axis.cuts.push(Break {
                        t0_ns: prev_t,
                        t1_ns: t,
                        x0: prev_x,
                        x1: prev_x + c.break_px,
                    });
                    prev_x + c.break_px
                }
                _ => prev_x + wide,
            };
            axis.times.push(t);
            axis.x.push(x);
        }
        axis
    }

    /// The x of true time `t_ns`: exact at event times, interpolated
    /// between them (across a cut too), to scale after the last event.
    pub fn x(&self, t_ns: u64) -> f64 {
        let i = self.times.partition_point(|&t| t < t_ns);
        match self.times.get(i) {
            Some(&t) if t == t_ns => self.x[i],
            Some(&t) => {
                // i > 0: times[0] is 0 and t_ns > 0 here.
                let (a, xa) = (self.times[i - 1], self.x[i - 1]);
                xa + (self.x[i] - xa) * (t_ns - a) as f64 / (t - a) as f64
            }
            None => {
                let (a, xa) = (*self.times.last().unwrap(), *self.x.last().unwrap());
                xa + (t_ns - a) as f64 / 1e6 * self.px_per_ms
            }
        }
    }

    /// The x of the last event.
    pub fn end(&self) -> f64 {
        *self.x.last().unwrap()
    }

    /// The quiet stretches cut out, in time order.
    pub fn cuts(&self) -> &[Break] {
        &self.cuts
    }

    /// Pixels per millisecond outside the cuts.
    pub fn px_per_ms(&self) -> f64 {
        self.px_per_ms
    }

    /// Tick times: multiples of a round step (1, 2 or 5 × 10^k ms) at least
    /// `min_px` apart, outside the cuts, up to `end_ns`.
    pub fn ticks(&self, end_ns: u64, min_px: f64) -> Vec<u64> {
        let step = round_step_ns(min_px / self.px_per_ms);
        let mut out = Vec::new();
        let mut t = 0u64;
        let mut cuts = self.cuts.iter().peekable();
        while t <= end_ns {
            while cuts.next_if(|c| c.t1_ns <= t).is_some() {}
            match cuts.peek() {
                Some(c) if c.t0_ns < t => {
                    // Inside a cut: on to the first multiple after it.
                    t = c.t1_ns.div_ceil(step) * step;
                    continue;
                }
                _ => out.push(t),
            }
            t += step;
        }
        out
    }
}

/// The smallest of 1, 2, 5 × 10^k ms (k ≥ −3) not below `ms`, in ns.
pub fn round_step_ns(ms: f64) -> u64 {
    let mut base = 1_000u64;
    loop {
        for m in [1, 2, 5] {
            if (base * m) as f64 / 1e6 >= ms {
                return base * m;
            }
        }
        base *= 10;
    }
}

/// A length of time for an axis label: `9.994s`, `40ms`, `250µs`.
pub fn span_text(ns: u64) -> String {
    if ns >= 1_000_000_000 {
        trim(format!(
            "{}.{:03}",
            ns / 1_000_000_000,
            ns / 1_000_000 % 1000
        )) + "s"
    } else if ns >= 1_000_000 {
        trim(format!("{}.{:03}", ns / 1_000_000, ns / 1_000 % 1000)) + "ms"
    } else {
        format!("{}µs", ns / 1000)
    }
}

/// A true time for a tick: `12s`, `12.5s`, `12.003s`, `12.0035s`.
pub fn tick_text(ns: u64) -> String {
    let whole = ns / 1_000_000_000;
    let frac = ns % 1_000_000_000;
    if frac == 0 {
        format!("{whole}s")
    } else {
        trim(format!("{whole}.{frac:09}")) + "s"
    }
}

fn trim(s: String) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn without_cuts_every_time_is_to_scale() {
        let axis = Axis::new([0, 3 * MS, 3 * MS, 2_000 * MS], 10.0, 0.5, None);
        assert!(axis.cuts().is_empty());
        for t in [0, MS, 3 * MS, 700 * MS, 2_000 * MS, 2_500 * MS] {
            assert!(
                (axis.x(t) - (10.0 + t as f64 / 1e6 * 0.5)).abs() < 1e-9,
                "{t}"
            );
        }
    }

    #[test]
    fn a_quiet_stretch_is_cut_and_the_rest_stays_to_scale() {
        let cut = Cut {
            cut_px: 100.0,
            break_px: 40.0,
        };
        let axis = Axis::new([MS, 11 * MS, 5_000 * MS, 5_010 * MS], 0.0, 2.0, Some(cut));
        assert_eq!(axis.cuts().len(), 1);
        let c = axis.cuts()[0];
        assert_eq!(
            (c.t0_ns, c.t1_ns, c.x0, c.x1),
            (11 * MS, 5_000 * MS, 22.0, 62.0)
        );
        // 10 ms is 20 px on both sides of the cut.
        assert_eq!(axis.x(11 * MS) - axis.x(MS), 20.0);
        assert_eq!(axis.x(5_010 * MS) - axis.x(5_000 * MS), 20.0);
        // Monotone everywhere.
        let xs: Vec<f64> = (0..6_000).map(|ms| axis.x(ms * MS)).collect();
        assert!(xs.windows(2).all(|w| w[0] <= w[1]));
    }

    #[test]
    fn ticks_are_round_and_never_inside_a_cut() {
        let cut = Cut {
            cut_px: 250.0,
            break_px: 40.0,
        };
        let axis = Axis::new([0, 100 * MS, 9_000 * MS, 9_100 * MS], 0.0, 2.0, Some(cut));
        assert_eq!(axis.cuts().len(), 1);
        // 80 px at 2 px/ms: 40 ms, rounded up to 50 ms.
        let ticks = axis.ticks(9_100 * MS, 80.0);
        assert_eq!(ticks, [0, 50, 100, 9_000, 9_050, 9_100].map(|ms| ms * MS));
        assert_eq!(tick_text(9_050 * MS), "9.05s");
        assert_eq!(span_text(8_900 * MS), "8.9s");
        assert_eq!(span_text(40 * MS), "40ms");
    }
}
