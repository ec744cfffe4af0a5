//! Time and randomness read the ordinary way: inside a step, std's clocks
//! (`SystemTime::now()`, `Instant::now()`, and so `madsim::time::Instant`)
//! read the node's wall and monotonic clocks, faults included, exactly as
//! the handle and the context do; `rand::thread_rng()` and `OsRng` draw from
//! the run's seed.

use std::time::{Instant, SystemTime};

use rand::rngs::OsRng;
use rand::{Rng, RngCore};
use sim::fault::{ClockChange, Fault};
use sim::process::Process;
use sim::{run, Actor, Context, Event, NodeId, Outcome, RunResult, TimerId, WorldBuilder};

use crate::actors::Msg;
use crate::{at, find, limits, ms};

const S: i64 = 1_000_000_000;

/// Nanoseconds since the epoch on the OS's realtime clock.
fn system_ns() -> i64 {
    let since = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH);
    i64::try_from(since.expect("after 1970").as_nanos()).unwrap()
}

/// Nanoseconds from `first` to now on std's monotonic clock, read through
/// std and through madsim.
fn instant_ns(first: Instant) -> (i64, i64) {
    let std = Instant::now().duration_since(first).as_nanos();
    let madsim = madsim::time::Instant::now()
        .duration_since(first)
        .as_nanos();
    (std as i64, madsim as i64)
}

/// A change of `node`'s clocks: an offset and a jump in seconds (0: none).
fn clock(node: &str, offset_s: i64, rate: Option<f64>, jump_s: i64) -> Fault {
    Fault::Clock(ClockChange {
        node: node.into(),
        offset_ns: (offset_s != 0).then_some(offset_s * S),
        rate,
        jump_ns: (jump_s != 0).then_some(jump_s * S),
    })
}

/// Skew, drift and a jump back: an hour ahead and 50% fast from 100 ms,
/// then 10 s back at 2.5 s.
fn faulted(w: &mut WorldBuilder<Msg>, node: &str) {
    w.fault(at(ms(100), clock(node, 3_600, Some(1.5), 0)));
    w.fault(at(ms(2_500), clock(node, 0, None, -10)));
}

/// Every `read` event of `node`: the OS clocks must read the node's own.
#[track_caller]
fn assert_reads_node_clocks<'a>(r: &'a RunResult, node: &str, reads: usize) -> Vec<&'a Event> {
    assert_eq!(r.outcome, Outcome::Completed, "{:?}", r.outcome);
    let read = find(&r.journal, node, "read");
    assert_eq!(read.len(), reads);
    let field = |e: &Event, f: &str| e.i64(f).unwrap_or_else(|| panic!("no {f}"));
    let zero = field(read[0], "system_ns") - field(read[0], "wall_ns");
    let mono_first = field(read[0], "mono_ns");
    let mut mono_last = i64::MIN;
    for e in &read {
        // The realtime clock is the wall clock on a fixed epoch: skew and
        // jumps included.
        assert_eq!(field(e, "system_ns") - field(e, "wall_ns"), zero, "{e:?}");
        // The monotonic clock is the node's: drift included.
        let mono = field(e, "mono_ns") - mono_first;
        assert_eq!(field(e, "instant_ns"), mono, "{e:?}");
        assert_eq!(field(e, "madsim_instant_ns"), mono, "{e:?}");
        assert!(mono >= mono_last, "the monotonic clock went back: {e:?}");
        mono_last = mono;
    }
    read
}

#[test]
fn a_process_reads_its_nodes_clocks_through_std() {
    let r = run(3, || {
        let mut w = WorldBuilder::<Msg>::new(limits(ms(10_000)));
        w.node(
            "p",
            Process::new(|h| async move {
                let first = Instant::now();
                for _ in 0..5 {
                    let (instant_ns, madsim_instant_ns) = instant_ns(first);
                    sim::emit!(
                        "read",
                        system_ns = system_ns(),
                        wall_ns = h.wall_ns(),
                        instant_ns = instant_ns,
                        madsim_instant_ns = madsim_instant_ns,
                        mono_ns = h.mono_ns()
                    );
                    h.sleep(ms(1_000)).await;
                }
            }),
        );
        faulted(&mut w, "p");
        w
    });
    let read = assert_reads_node_clocks(&r, "p", 5);
    // The faults did apply: the process slept 4 s on its clock, 50% fast
    // from 100 ms on, so 2.7 s of true time; and its wall clock, an hour
    // ahead, went 10 s back.
    let true_ns = read[4].t_ns - read[0].t_ns;
    assert!(
        (2_690_000_000..2_710_000_000).contains(&true_ns),
        "{true_ns}"
    );
    let system = read[4].i64("system_ns").unwrap() - read[0].i64("system_ns").unwrap();
    assert!((3_590 * S..3_600 * S).contains(&system), "{system}");
}

/// An actor that reads the OS clocks at its start and at each of its timers.
struct Reader {
    first: Option<Instant>,
    timers_ms: Vec<u64>,
    left: usize,
}

impl Reader {
    fn new(timers_ms: &[u64]) -> Reader {
        Reader {
            first: None,
            timers_ms: timers_ms.to_vec(),
            left: timers_ms.len(),
        }
    }

    fn read(&mut self, ctx: &Context<'_, Msg>) {
        let first = *self.first.get_or_insert_with(Instant::now);
        let (instant_ns, madsim_instant_ns) = instant_ns(first);
        sim::emit!(
            "read",
            system_ns = system_ns(),
            wall_ns = ctx.wall_ns(),
            instant_ns = instant_ns,
            madsim_instant_ns = madsim_instant_ns,
            mono_ns = ctx.mono_ns()
        );
    }
}

impl Actor<Msg> for Reader {
    fn on_start(&mut self, ctx: &mut Context<'_, Msg>) {
        self.read(ctx);
        for t in &self.timers_ms {
            ctx.set_timer(ms(*t), 0);
        }
    }

    fn on_message(&mut self, _: &mut Context<'_, Msg>, _: NodeId, _: Msg) {}

    fn on_timer(&mut self, ctx: &mut Context<'_, Msg>, _: TimerId, _: u64) {
        self.read(ctx);
        self.left -= 1;
    }

    fn is_done(&self) -> bool {
        self.left == 0
    }
}

#[test]
fn an_actor_reads_its_nodes_clocks_through_std() {
    let r = run(4, || {
        let mut w = WorldBuilder::<Msg>::new(limits(ms(10_000)));
        w.node("a", Reader::new(&[1_000, 2_000, 3_000, 4_000]));
        faulted(&mut w, "a");
        w
    });
    assert_reads_node_clocks(&r, "a", 5);
}

#[test]
fn two_nodes_with_different_offsets_read_different_system_times_at_once() {
    let r = run(5, || {
        let mut w = WorldBuilder::<Msg>::new(limits(ms(10_000)));
        w.node("a", Reader::new(&[1_000]));
        w.node("b", Reader::new(&[1_000]));
        w.fault(at(ms(500), clock("b", 3_600, None, 0)));
        w
    });
    let a = assert_reads_node_clocks(&r, "a", 2);
    let b = assert_reads_node_clocks(&r, "b", 2);
    // The same epoch under both wall clocks.
    let zero = |e: &Event| e.i64("system_ns").unwrap() - e.i64("wall_ns").unwrap();
    assert_eq!(zero(a[1]), zero(b[1]));
    // At 1 s both read their clocks (a millisecond apart in true time, as
    // the agenda ordered their timers): b's reads an hour ahead of a's.
    let ahead = |e: &Event| e.i64("system_ns").unwrap() - e.t_ns as i64;
    assert_eq!(ahead(b[1]) - ahead(a[1]), 3_600 * S);
    assert_eq!(ahead(b[0]), ahead(a[0]));
}

/// A process that draws from `rand`'s thread RNG and OS RNG.
fn drawing(seed: u64) -> RunResult {
    run(seed, || {
        let mut w = WorldBuilder::<Msg>::new(limits(ms(10_000)));
        w.node(
            "p",
            Process::new(|h| async move {
                for _ in 0..3 {
                    let thread: u64 = rand::thread_rng().gen();
                    sim::emit!("drew", thread = thread, os = OsRng.next_u64());
                    h.sleep(ms(10)).await;
                }
            }),
        );
        w
    })
}

fn draws(r: &RunResult) -> Vec<(u64, u64)> {
    assert_eq!(r.outcome, Outcome::Completed, "{:?}", r.outcome);
    let drew = find(&r.journal, "p", "drew");
    assert_eq!(drew.len(), 3);
    let value = |e: &Event, f: &str| match e.get(f) {
        Some(sim::Value::U64(v)) => *v,
        other => panic!("{f}: {other:?}"),
    };
    drew.iter()
        .map(|e| (value(e, "thread"), value(e, "os")))
        .collect()
}

#[test]
fn rand_draws_from_the_seed_inside_a_run() {
    let (first, again, other) = (drawing(11), drawing(11), drawing(12));
    assert_eq!(draws(&first), draws(&again));
    assert_eq!(first.journal.hash(), again.journal.hash());
    assert_ne!(draws(&first), draws(&other));
    assert_ne!(first.journal.hash(), other.journal.hash());
}
