//! Integration tests of the world: each module proves one area of behaviour
//! users rely on (determinism, pause, clocks, network, crash, outcomes, the
//! journal), with the small test actors of `actors`.

mod actors;
mod clocks;
mod crash;
mod cut;
mod determinism;
mod journal;
mod network;
mod os_clocks;
mod outcomes;
mod pause;
mod power_off;
mod process;
mod triggers;

use std::time::Duration;

use sim::fault::{Fault, ScheduledFault, Trigger};
use sim::{Event, Journal, Limits, LinkConfig, NetConfig};

/// `n` milliseconds.
pub fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// `n` milliseconds in nanoseconds, for comparing with journal times.
pub fn ms_ns(n: u64) -> u64 {
    n * 1_000_000
}

/// How far after its due time a handler may run: madsim advances time by
/// 50–100 ns per task poll, and a delivery takes a few polls.
pub const SLACK_NS: u64 = 100_000;

/// Asserts `t_ns` is in `[at_ms, at_ms + SLACK]`.
#[track_caller]
pub fn assert_at(t_ns: u64, at_ms: u64) {
    let lo = ms_ns(at_ms);
    assert!(
        (lo..=lo + SLACK_NS).contains(&t_ns),
        "expected t ≈ {at_ms} ms, got {t_ns} ns"
    );
}

/// A link with a fixed latency.
pub fn fixed(latency: Duration) -> LinkConfig {
    LinkConfig {
        latency_min: latency,
        latency_max: latency,
        ..LinkConfig::default()
    }
}

/// A network where every link takes exactly `latency`.
pub fn net_fixed(latency: Duration) -> NetConfig {
    NetConfig {
        default: fixed(latency),
        links: Vec::new(),
    }
}

/// Limits with this simulated time bound.
pub fn limits(duration: Duration) -> Limits {
    Limits {
        duration,
        ..Limits::default()
    }
}

/// A fault at a true time.
pub fn at(t: Duration, fault: Fault) -> ScheduledFault {
    ScheduledFault {
        fault,
        trigger: Trigger::At(t),
    }
}

/// A fault right after (or `delay` after) the `nth` `kind` event of `node`.
pub fn after(node: &str, kind: &str, nth: u32, delay: Duration, fault: Fault) -> ScheduledFault {
    ScheduledFault {
        fault,
        trigger: Trigger::After {
            node: node.into(),
            kind: kind.into(),
            nth,
            delay,
        },
    }
}

/// The events `node:kind`, in order.
pub fn find<'a>(journal: &'a Journal, node: &str, kind: &str) -> Vec<&'a Event> {
    journal
        .events()
        .iter()
        .filter(|e| e.is(node, kind))
        .collect()
}

/// The one event `node:kind`; fails if there is not exactly one.
#[track_caller]
pub fn only<'a>(journal: &'a Journal, node: &str, kind: &str) -> &'a Event {
    let found = find(journal, node, kind);
    assert_eq!(
        found.len(),
        1,
        "expected one {node}:{kind}, journal:\n{}",
        journal.to_jsonl()
    );
    found[0]
}

/// The events of `node`, whatever their kind.
pub fn of<'a>(journal: &'a Journal, node: &str) -> Vec<&'a Event> {
    journal.events().iter().filter(|e| e.node == node).collect()
}
