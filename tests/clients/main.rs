//! The client variants end to end: `check_lease`, `renew`,
//! `fence_on_acquire` and the increment workload, each through a scenario
//! file loaded and run as `fencesim run` would, judged by the oracle; and
//! clients as elected leaders or powered off by the lock (`leaders`).

mod crowd;
mod grants;
mod hosts;
mod leaders;
mod network;
mod renewal;

use fencesim::design::catalog::Registry;
use fencesim::oracle::Verdict;
use fencesim::runner::{self, ScenarioRun};
use fencesim::scenario::load_str;

/// Loads and runs `text` with its own seed, twice, and checks that both runs
/// give the same trace.
fn run(text: &str) -> ScenarioRun {
    let scenario =
        load_str(&Registry::builtin(), "clients.toml", text).unwrap_or_else(|e| panic!("{e}"));
    let first = runner::run(&scenario, scenario.seed);
    let again = runner::run(&scenario, scenario.seed);
    assert_eq!(first.trace_hash(), again.trace_hash(), "non-deterministic");
    first
}

fn count(run: &ScenarioRun, node: &str, kind: &str) -> usize {
    let events = run.result.journal.events();
    events
        .iter()
        .filter(|e| e.node == node && e.kind == kind)
        .count()
}

/// Two clients on an unfenced lease and unchecked storage; client2 comes at
/// 12 s, after client1's 10 s lease; `$client1` and `$fault` vary.
fn unfenced(client1: &str, fault: &str) -> String {
    format!(
        r#"
name = "check-then-write"
[lock]
design = "lease"
tokens = false
[storage]
design = "unchecked"
[[clients]]
name = "client1"
{client1}
[[clients]]
name = "client2"
start = "12s"
[[faults]]
kind = "pause"
node = "client1"
duration = "15s"
{fault}
"#
    )
}

#[test]
fn a_pause_after_the_lease_check_still_lets_a_stale_write_through() {
    // The check passes at 1 s with 9 s to go; the pause falls between the
    // check and the write: check-then-act.
    let run = run(&unfenced(
        "check_lease = true",
        r#"after = "client1:checked""#,
    ));
    assert_eq!(count(&run, "client1", "checked"), 1);
    assert_eq!(count(&run, "client1", "lapsed"), 0);
    assert_eq!(run.report.stale_writes, 1, "{:#?}", run.report.violations);
    assert_eq!(run.report.verdict, Verdict::Violation);
}

#[test]
fn a_pause_before_the_lease_check_is_caught_by_it() {
    let run = run(&unfenced(
        "check_lease = true",
        r#"after = "client1:acquired""#,
    ));
    assert_eq!(count(&run, "client1", "lapsed"), 1);
    assert_eq!(count(&run, "client1", "wrote"), 0);
    assert_eq!(run.report.accepted_writes, 1);
    assert_eq!(run.report.verdict, Verdict::Safe);
}

#[test]
fn without_the_check_the_same_pause_gives_a_stale_write() {
    let run = run(&unfenced("", r#"after = "client1:acquired""#));
    assert_eq!(count(&run, "client1", "checked"), 0);
    assert_eq!(run.report.stale_writes, 1);
}

/// Two incrementing clients; client1 pauses between its read and its write.
fn increments(tokens: bool, storage: &str) -> String {
    format!(
        r#"
name = "lost-update"
[lock]
design = "lease"
tokens = {tokens}
first_token = 33
[storage]
design = "{storage}"
[[clients]]
name = "client1"
workload = "increment"
timeout = "30s"
[[clients]]
name = "client2"
start = "12s"
workload = "increment"
[[faults]]
kind = "pause"
node = "client1"
after = "client1:read"
duration = "15s"
"#
    )
}

#[test]
fn an_unfenced_lease_loses_an_increment() {
    let run = run(&increments(false, "unchecked"));
    assert_eq!(run.report.lost_updates, 1, "{:#?}", run.report.violations);
    assert_eq!(run.report.accepted_writes, 2);
    assert_eq!(run.report.verdict, Verdict::Violation);
}

#[test]
fn a_fenced_storage_rejects_the_zombie_increment_and_loses_none() {
    let run = run(&increments(true, "fenced"));
    assert_eq!(run.report.lost_updates, 0, "{:#?}", run.report.violations);
    assert_eq!(run.report.rejected_writes, 1);
    assert_eq!(run.report.verdict, Verdict::Safe);
}

/// Figure 9-6 with client1's write held 11.5 s in the network instead of a
/// pause: it lands at about 12.5 s, after client2 acquired (12 s) and before
/// client2 writes (13 s). Strict, so a zombie write is a violation.
fn delayed_zombie(fence_on_acquire: bool) -> String {
    format!(
        r#"
name = "fence-on-acquire"
strict = true
[lock]
design = "lease"
first_token = 33
[storage]
design = "fenced"
[[clients]]
name = "client1"
timeout = "30s"
fence_on_acquire = {fence_on_acquire}
[[clients]]
name = "client2"
start = "12s"
fence_on_acquire = {fence_on_acquire}
[[faults]]
kind = "delay"
from = "client1"
to = "storage"
extra = "11500ms"
after = "client1:wrote"
"#
    )
}

#[test]
fn without_fence_on_acquire_a_delayed_write_lands_as_a_zombie() {
    let run = run(&delayed_zombie(false));
    assert_eq!(run.report.zombie_writes, 1, "{:#?}", run.report.violations);
    assert_eq!(run.report.stale_writes, 0);
    assert_eq!(run.report.rejected_writes, 0);
    assert_eq!(run.report.verdict, Verdict::Violation);
}

#[test]
fn fence_on_acquire_closes_the_zombie_write_window() {
    let run = run(&delayed_zombie(true));
    assert_eq!(count(&run, "client2", "fenced"), 1);
    assert_eq!(run.report.zombie_writes, 0, "{:#?}", run.report.violations);
    assert_eq!(run.report.rejected_writes, 1);
    // Fences are not data writes: only client2's real write counts.
    assert_eq!(run.report.accepted_writes, 1);
    assert_eq!(run.report.verdict, Verdict::Safe);
}

/// client1 works 25 s under a 10 s lease; client2 wants it from 5 s.
fn long_work(renew: bool) -> String {
    format!(
        r#"
name = "renew"
[lock]
design = "lease"
tokens = false
[storage]
design = "unchecked"
[[clients]]
name = "client1"
work = "25s"
renew = {renew}
[[clients]]
name = "client2"
start = "5s"
"#
    )
}

#[test]
fn renewing_keeps_the_lease_through_long_work() {
    let run = run(&long_work(true));
    assert!(count(&run, "client1", "renewed") >= 4);
    // The last answer may come after client1 released.
    assert!(count(&run, "lock", "renewed") >= count(&run, "client1", "renewed"));
    assert_eq!(count(&run, "lock", "expired"), 0);
    assert_eq!(run.report.overlapping_leases, 0);
    assert_eq!(run.report.verdict, Verdict::Safe);
}

#[test]
fn without_renewal_long_work_outlives_the_lease() {
    let run = run(&long_work(false));
    assert_eq!(count(&run, "lock", "expired"), 1);
    assert_eq!(run.report.stale_writes, 1);
}

#[test]
fn a_renewal_refused_after_a_pause_ends_the_round_as_lost() {
    // Paused 15 s right after its first renewal: the lease expires; on
    // waking, the next renewal is refused before the work is due.
    let text = long_work(true).replace("start = \"5s\"", "start = \"5s\"\n[[faults]]\nkind = \"pause\"\nnode = \"client1\"\nafter = \"client1:renewed\"\nduration = \"15s\"");
    let run = run(&text);
    assert_eq!(count(&run, "client1", "lost"), 1);
    assert_eq!(count(&run, "client1", "wrote"), 0);
    assert_eq!(run.report.verdict, Verdict::Safe);
}

#[test]
fn the_new_client_events_can_trigger_faults() {
    let names = fencesim::events::DOMAIN_EVENTS;
    for kind in ["checked", "lapsed", "renewed", "fenced"] {
        assert!(names.contains(&kind), "{kind}");
    }
}
