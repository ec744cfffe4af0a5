//! False verdicts found by sweeping the catalogue, kept as real runs: each
//! seed below was judged wrongly once, and is judged here as the oracle's
//! definitions say.

use std::path::PathBuf;

use fencesim::design::catalog::Registry;
use fencesim::explore::sweep::{run_seed, FaultMode};
use fencesim::oracle::Verdict;
use fencesim::scenario::{self, Scenario};

fn bundled_text(stem: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios")
        .join(format!("{stem}.toml"));
    std::fs::read_to_string(path).unwrap()
}

fn load(file: &str, text: &str) -> Scenario {
    scenario::load_str(&Registry::builtin(), file, text).expect("the scenario loads")
}

#[test]
fn a_network_duplicate_of_an_applied_write_is_not_a_zombie() {
    // fence-on-acquire under strict = true with `duplicate = 0.3` and no
    // other fault: these seeds once failed with a zombie write, a copy of
    // client1's applied write landing after it released the lock.
    let text = bundled_text("fence-on-acquire").replacen(
        "[lock]",
        "[network]\nduplicate = 0.3\n\n[lock]",
        1,
    );
    let s = load("fence-on-acquire-duplicated.toml", &text);
    assert!(s.strict);
    for seed in [5, 301, 311, 908] {
        let (run, _) = run_seed(&s, seed, FaultMode::Scenario);
        let journal = &run.result.journal;
        // A write the storage accepted twice: the case is really there.
        let accepted: Vec<&str> = journal
            .events()
            .iter()
            .filter(|e| e.kind == "accepted")
            .filter_map(|e| e.str("write"))
            .collect();
        let twice = accepted
            .iter()
            .enumerate()
            .any(|(i, w)| accepted[..i].contains(w));
        assert!(twice, "seed {seed}: no write was accepted twice");
        let r = &run.report;
        assert_eq!(
            (r.verdict, r.zombie_writes, r.stale_writes),
            (Verdict::Safe, 0, 0),
            "seed {seed}: {:?}",
            r.violations
        );
    }
}

#[test]
fn a_timed_out_increment_the_storage_applied_is_a_lost_update() {
    // lost-update-fenced --seed 379 --faults random: both increments were
    // applied and the key ends at 1, while one client timed out waiting for
    // its answer. It was SAFE once, counting only what clients heard.
    let s = load(
        "lost-update-fenced.toml",
        &bundled_text("lost-update-fenced"),
    );
    let (run, _) = run_seed(&s, 379, FaultMode::Random);
    let r = &run.report;
    assert_eq!(
        (r.verdict, r.lost_updates, r.accepted_writes),
        (Verdict::Violation, 1, 2),
        "{:?}",
        r.violations
    );
    let ok_acks = run
        .result
        .journal
        .events()
        .iter()
        .filter(|e| e.kind == "acked" && e.bool("ok") == Some(true))
        .count();
    assert!(
        ok_acks < 2,
        "a client did not hear of its applied increment"
    );
}

#[test]
fn a_lease_id_reused_after_a_lock_restart_is_a_new_grant() {
    // A `lease` lock without persistence numbers its leases afresh after a
    // restart: lease 1's grant is lost with the crash, client1's retry is
    // granted lease 1 again, and that grant is current. The oracle once
    // matched the restart's `expired lease=1` to it: a grant that arrived
    // expired, and a zombie write.
    let s = load(
        "lease-restart-reuses-ids.toml",
        r#"
name = "lease-restart-reuses-ids"
seed = 1
duration = "1m"
strict = true

[lock]
design = "lease"
ttl = "10s"
tokens = false
durable = false

[storage]
design = "unchecked"

[[clients]]
name = "client1"
timeout = "2s"

[[faults]]
kind = "crash"
node = "lock"
after = "lock:granted"
restart_after = "1s"

[[faults]]
kind = "drop"
from = "lock"
to = "client1"
after = "lock:granted"
count = 1

[expect]
verdict = "safe"
"#,
    );
    let (run, _) = run_seed(&s, 1, FaultMode::Scenario);
    let leases: Vec<u64> = run
        .result
        .journal
        .events()
        .iter()
        .filter(|e| e.kind == "granted")
        .filter_map(|e| e.u64("lease"))
        .collect();
    assert_eq!(leases, [1, 1], "lease 1 granted twice, across the restart");
    let r = &run.report;
    assert_eq!(
        (r.verdict, r.zombie_writes, r.late_writes),
        (Verdict::Safe, 0, 0),
        "{:?}",
        r.violations
    );
    assert_eq!(run.milestones.grant_arrived_expired, 0);
    assert_eq!(run.milestones.zombie_write_sent, 0);
    assert_eq!(run.milestones.lock_restarted, 1);
}

#[test]
fn strict_passes_a_late_write_with_nobody_else_holding() {
    // chubby-lock-delay under strict = true: client1's write lands after its
    // session ended, while client2 is still denied by the lock-delay.
    let text = bundled_text("chubby-lock-delay").replacen("[lock]", "strict = true\n\n[lock]", 1);
    let s = load("chubby-lock-delay-strict.toml", &text);
    let (run, _) = run_seed(&s, s.seed, FaultMode::Scenario);
    let r = &run.report;
    assert_eq!(
        (r.verdict, r.zombie_writes, r.late_writes),
        (Verdict::Safe, 0, 1)
    );
}

#[test]
fn strict_fails_a_late_write_over_another_clients_live_grant() {
    // etcd-11456-late-grant-writes-first: client1's write lands while
    // client2's newer grant is current, before client2 writes.
    let s = load(
        "etcd-11456-late-grant-writes-first.toml",
        &bundled_text("etcd-11456-late-grant-writes-first"),
    );
    assert!(s.strict);
    let (run, _) = run_seed(&s, s.seed, FaultMode::Scenario);
    let r = &run.report;
    assert_eq!(
        (r.verdict, r.zombie_writes, r.late_writes),
        (Verdict::Violation, 1, 0)
    );
    let zombie = &r.violations[0].explanation;
    assert!(
        zombie.contains("while client2's newer grant") && zombie.contains("was current"),
        "{zombie}"
    );
}
