//! Rendering costs work linear in the journal. Not timed: the bytes the
//! renderers allocate on this thread are counted, for a journal and one four
//! times as long. Linear work allocates about four times as much; a
//! renderer that copies what it has seen so far at every event (as the
//! step sentences once copied the belief history) allocates sixteen times
//! as much.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use fencesim::oracle::{check_and_count, OracleConfig};
use fencesim::report::step::{steps, Walk};
use fencesim::report::{html, markdown, perfetto, svg, LanesOptions, Subject};
use sim::journal::{Event, Journal};

/// The system allocator, counting the bytes each thread asks for.
struct Counting;

thread_local! {
    static ALLOCATED: Cell<u64> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size);
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

fn count(bytes: usize) {
    // `try_with`: the thread-local may already be gone at thread exit.
    let _ = ALLOCATED.try_with(|a| a.set(a.get() + bytes as u64));
}

#[global_allocator]
static COUNTING: Counting = Counting;

/// Bytes allocated on this thread by `f`.
fn allocated(f: impl FnOnce()) -> u64 {
    let before = ALLOCATED.with(Cell::get);
    f();
    ALLOCATED.with(Cell::get) - before
}

/// `rounds` rounds of two clients taking turns: acquire, a message to the
/// storage, its acceptance, release; every fourth lease expires instead, and
/// a later write of its holder is rejected.
fn journal(rounds: u64) -> Journal {
    let mut events = Vec::new();
    let s = 1_000_000_000u64;
    for r in 0..rounds {
        let t = r * 20 * s;
        let client = if r % 2 == 0 { "client1" } else { "client2" };
        let write = format!("{client}/{r}");
        // One message per round, with the round's number as its id.
        let msg = r;
        let at =
            |dt: u64, node: &str, kind: &str| Event::new(0, t + dt, node, (t + dt) as i64, kind);
        events.push(
            at(0, "lock", "granted")
                .with("client", client)
                .with("lease", r)
                .with("token", r),
        );
        events.push(
            at(s, client, "acquired")
                .with("lease", r)
                .with("token", r)
                .with("ttl_ms", 10_000u64),
        );
        events.push(
            at(2 * s, client, "wrote")
                .with("write", write.as_str())
                .with("token", r),
        );
        events.push(
            at(2 * s, client, "send")
                .with("id", msg)
                .with("to", "storage")
                .with("msg", "write"),
        );
        events.push(
            at(3 * s, "storage", "deliver")
                .with("id", msg)
                .with("from", client)
                .with("msg", "write"),
        );
        if r % 4 == 3 {
            events.push(
                at(3 * s, "storage", "rejected")
                    .with("client", client)
                    .with("write", write.as_str())
                    .with("token", r)
                    .with("max_token", r + 1),
            );
            events.push(
                at(12 * s, "lock", "expired")
                    .with("client", client)
                    .with("lease", r),
            );
        } else {
            events.push(
                at(3 * s, "storage", "accepted")
                    .with("client", client)
                    .with("write", write.as_str())
                    .with("token", r),
            );
            events.push(at(4 * s, client, "released").with("lease", r));
            events.push(
                at(5 * s, "lock", "released")
                    .with("client", client)
                    .with("lease", r),
            );
        }
    }
    for (seq, e) in events.iter_mut().enumerate() {
        e.seq = seq as u64;
    }
    Journal::from_events(events)
}

/// Bytes allocated rendering a journal of `rounds` rounds every way
/// `report` and `step` do.
fn rendering(rounds: u64) -> u64 {
    let journal = journal(rounds);
    let (report, milestones) = check_and_count(&journal, &OracleConfig::default());
    let nodes: Vec<String> = ["client1", "client2", "lock", "storage"]
        .map(String::from)
        .to_vec();
    let subject = Subject {
        name: "linear",
        description: "",
        seed: 1,
        journal: &journal,
        report: &report,
        milestones: &milestones,
        nodes: &nodes,
        repro: "fencesim run linear.toml --seed 1",
        untested: &[],
    };
    allocated(|| {
        assert_eq!(steps(&journal, &report).len(), journal.len());
        let walk = Walk::new(
            "linear",
            &journal,
            &report,
            &nodes,
            &LanesOptions::default(),
            subject.repro,
        );
        assert!(!walk.piped().is_empty());
        assert!(!markdown::page(&subject).is_empty());
        assert!(!html::page(&subject).is_empty());
        assert!(!svg::figure(&subject).is_empty());
        assert!(!perfetto::trace(&subject).is_empty());
    })
}

#[test]
fn report_and_step_allocate_in_proportion_to_the_journal() {
    let small = rendering(150);
    let large = rendering(600);
    let ratio = large as f64 / small as f64;
    // 4 for linear work (a little more for the logarithms); a quadratic
    // part would push it toward 16.
    eprintln!("4x the journal: {ratio:.2}x the bytes ({small} → {large})");
    assert!(
        ratio < 6.0,
        "4x the journal allocated {ratio:.1}x the bytes ({small} → {large})"
    );
}
