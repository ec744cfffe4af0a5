//! Clocks: drift changes when timers fire in true time; jumps move the wall
//! clock (the journal's `local_ns`) but not timers; offsets set the wall clock
//! relative to true time.

use sim::fault::{ClockChange, Fault};
use sim::{run, Outcome, RunResult, WorldBuilder};

use crate::actors::{Msg, Timers};
use crate::{assert_at, at, find, limits, ms, ms_ns, only};

const S: i64 = 1_000_000_000;

fn change(node: &str) -> ClockChange {
    ClockChange {
        node: node.into(),
        offset_ns: None,
        rate: None,
        jump_ns: None,
    }
}

fn timers_with(at_ms: u64, clock: ClockChange, timers: &[u64]) -> RunResult {
    let timers: Vec<_> = timers.iter().map(|t| ms(*t)).collect();
    run(1, move || {
        let mut w = WorldBuilder::<Msg>::new(limits(ms(60_000)));
        w.node("t", Timers::new(&timers));
        w.fault(at(ms(at_ms), Fault::Clock(clock)));
        w
    })
}

#[test]
fn a_fast_clock_fires_timers_early_in_true_time() {
    let r = timers_with(
        0,
        ClockChange {
            rate: Some(2.0),
            ..change("t")
        },
        &[10_000],
    );
    assert_eq!(r.outcome, Outcome::Completed);
    let fired = only(&r.journal, "t", "fired");
    assert_at(fired.t_ns, 5_000);
    // The node itself saw 10 s pass, and the journal's local time says so.
    let mono = fired.i64("mono_ns").unwrap();
    assert!((10 * S..10 * S + 1_000_000).contains(&mono), "mono {mono}");
    assert!((10 * S..10 * S + 1_000_000).contains(&fired.local_ns));
    let clock = only(&r.journal, "t", "clock");
    assert_eq!(clock.get("rate"), Some(&sim::Value::F64(2.0)));
}

#[test]
fn a_timer_set_before_its_clock_changes_rate_fires_when_its_clock_reaches_it() {
    // A 10 s timer set at 0; at 4 s (4 s on the clock) the clock slows to
    // half speed: the 6 s left take 12 s of true time, so it fires at 16 s.
    // At double speed instead they take 3 s: it fires at 7 s. Either way
    // the node's own clock reads 10 s when it fires.
    for (rate, true_ms) in [(0.5, 16_000), (2.0, 7_000)] {
        let r = timers_with(
            4_000,
            ClockChange {
                rate: Some(rate),
                ..change("t")
            },
            &[10_000],
        );
        let fired = only(&r.journal, "t", "fired");
        assert_at(fired.t_ns, true_ms);
        let mono = fired.i64("mono_ns").unwrap();
        assert!(
            (10 * S - 1_000..10 * S + 1_000_000).contains(&mono),
            "rate {rate}: mono {mono}"
        );
    }
}

#[test]
fn a_jump_moves_local_time_but_not_timers() {
    // Timers at 500 ms and 2 s; the wall clock jumps 30 s ahead at 1 s.
    let r = timers_with(
        1_000,
        ClockChange {
            jump_ns: Some(30 * S),
            ..change("t")
        },
        &[500, 2_000],
    );
    let j = &r.journal;
    let fired = find(j, "t", "fired");
    assert_eq!(fired[0].local_ns, fired[0].t_ns as i64);
    // The 2 s timer fires at 2 s of true time: timers use the monotonic clock.
    assert_at(fired[1].t_ns, 2_000);
    assert_eq!(fired[1].local_ns, fired[1].t_ns as i64 + 30 * S);
    assert_eq!(fired[1].i64("wall_ns"), Some(fired[1].local_ns));
    assert_eq!(fired[1].i64("mono_ns"), Some(fired[1].t_ns as i64));
    let clock = only(j, "t", "clock");
    assert_eq!(clock.i64("jump_ns"), Some(30 * S));
    assert_eq!(clock.local_ns, clock.t_ns as i64 + 30 * S);
}

#[test]
fn a_backward_jump_can_make_local_time_negative() {
    let r = timers_with(
        1_000,
        ClockChange {
            jump_ns: Some(-5 * S),
            ..change("t")
        },
        &[2_000],
    );
    let fired = only(&r.journal, "t", "fired");
    assert_at(fired.t_ns, 2_000);
    assert_eq!(fired.local_ns, fired.t_ns as i64 - 5 * S);
    assert!(fired.local_ns < 0);
}

#[test]
fn an_offset_sets_the_wall_clock_relative_to_true_time() {
    let r = run(1, || {
        let mut w = WorldBuilder::<Msg>::new(limits(ms(60_000)));
        w.node("t", Timers::new(&[500, 2_000, 4_000].map(ms)));
        w.node("other", Timers::new(&[2_000].map(ms)));
        // 10 s ahead from 1 s on; then a jump, then an absolute offset again.
        w.fault(at(
            ms(1_000),
            Fault::Clock(ClockChange {
                offset_ns: Some(10 * S),
                ..change("t")
            }),
        ));
        w.fault(at(
            ms(2_500),
            Fault::Clock(ClockChange {
                jump_ns: Some(S),
                ..change("t")
            }),
        ));
        w.fault(at(
            ms(3_000),
            Fault::Clock(ClockChange {
                offset_ns: Some(-2 * S),
                ..change("t")
            }),
        ));
        w
    });
    let j = &r.journal;
    let fired = find(j, "t", "fired");
    assert_eq!(fired[0].local_ns, fired[0].t_ns as i64);
    assert_eq!(fired[1].local_ns, fired[1].t_ns as i64 + 10 * S);
    // The later offset is absolute: it forgets the earlier offset and jump.
    assert_eq!(fired[2].local_ns, fired[2].t_ns as i64 - 2 * S);
    assert_eq!(fired[2].i64("mono_ns"), Some(fired[2].t_ns as i64));
    assert_at(fired[2].t_ns, 4_000);
    // Other nodes keep true time.
    let other = only(j, "other", "fired");
    assert_eq!(other.local_ns, other.t_ns as i64);
    assert!(other.t_ns >= ms_ns(2_000));
}
