//! The OS clocks read the stepping node's clocks: `SystemTime::now()` its
//! wall clock and `Instant::now()` its monotonic clock, as [`Context`] and
//! the process [`Handle`] do, so code that reads time the ordinary way (std,
//! chrono, the `time` crate, `madsim::time::Instant`) sees skew, drift, rate
//! changes and jumps too.
//!
//! madsim answers `clock_gettime` and `gettimeofday` from its one global
//! clock; its clock hook (`TimeHandle::set_clock_hook`, sim/madsim/PATCH.md)
//! lets the world answer instead. Time does not pass inside a step, so the
//! world hands the hook the node's two readings as the step begins, in a
//! thread-local of this module: the hook never borrows the world (which is
//! borrowed while a step runs), and a step costs two stores. Outside a step
//! the hook answers nothing, and madsim's true time applies.
//!
//! [`Context`]: crate::Context
//! [`Handle`]: crate::process::Handle

use std::cell::Cell;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use madsim::time::{OsClock, TimeHandle};

thread_local! {
    /// The stepping node's monotonic and wall readings, in nanoseconds since
    /// the world's start, as its handler sees them.
    static STEP: Cell<Option<(i64, i64)>> = const { Cell::new(None) };
}

/// Makes the runtime's OS clocks read the stepping node's from now on. The
/// node clocks' zero is now: the world's start.
pub(super) fn install(time: &TimeHandle) {
    // madsim's `Instant`s are on the scale of `elapsed`, and its realtime is
    // a fixed epoch plus `elapsed`: each node clock is laid on both from here.
    let mono_zero_ns = time.elapsed().as_nanos() as i128;
    let real_zero_ns = time
        .now_time()
        .duration_since(SystemTime::UNIX_EPOCH)
        .expect("madsim's time is after 1970")
        .as_nanos() as i128;
    time.set_clock_hook(Some(Arc::new(move |clock| {
        // A thread-local being torn down: outside any step.
        let (mono_ns, wall_ns) = STEP.try_with(Cell::get).ok().flatten()?;
        let (zero, reading) = match clock {
            OsClock::Monotonic => (mono_zero_ns, mono_ns),
            OsClock::Realtime => (real_zero_ns, wall_ns),
        };
        // A wall clock stepped back before 1970 reads 1970: the OS clocks
        // cannot go below it.
        let ns = (zero + i128::from(reading)).clamp(0, i128::from(u64::MAX));
        Some(Duration::from_nanos(ns as u64))
    })));
}

/// While alive, the OS clocks read one node's clocks: made as a handler is
/// called, dropped (a panic included) when it returns.
pub(super) struct StepClocks {
    outer: Option<(i64, i64)>,
}

impl StepClocks {
    pub(super) fn enter(mono_ns: i64, wall_ns: i64) -> StepClocks {
        StepClocks {
            outer: STEP.with(|s| s.replace(Some((mono_ns, wall_ns)))),
        }
    }
}

impl Drop for StepClocks {
    fn drop(&mut self) {
        let _ = STEP.try_with(|s| s.set(self.outer));
    }
}
