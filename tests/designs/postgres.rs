//! PostgreSQL session-level advisory locks: what ends the session that
//! holds the lock (an idle timeout, the keepalive), and a transaction
//! pooler that hands the locked session to another client; each failing
//! and fixed, run from the bundled scenario files.

use fencesim::design::catalog::Registry;
use fencesim::oracle::Verdict;
use fencesim::runner::{self, ScenarioRun};
use fencesim::scenario;
use sim::journal::Event;

use crate::{counts, run_as_expected, token};

fn bundled(file: &str) -> ScenarioRun {
    let path = format!("{}/scenarios/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    run_as_expected(file, &text)
}

/// The events of `kind` at `node`, in order.
fn events<'a>(r: &'a ScenarioRun, node: &str, kind: &str) -> Vec<&'a Event> {
    r.result
        .journal
        .events()
        .iter()
        .filter(|e| e.node == node && e.kind == kind)
        .collect()
}

/// The one event of `kind` at `node`.
fn only<'a>(r: &'a ScenarioRun, node: &str, kind: &str) -> &'a Event {
    match events(r, node, kind)[..] {
        [e] => e,
        ref all => panic!("{} {node}:{kind} events: {all:#?}", all.len()),
    }
}

/// The messages the lock sent to `to` whose summary starts with `start`.
fn sends_to<'a>(r: &'a ScenarioRun, to: &str, start: &str) -> Vec<&'a Event> {
    events(r, "lock", "send")
        .into_iter()
        .filter(|e| e.str("to") == Some(to))
        .filter(|e| e.str("msg").is_some_and(|m| m.starts_with(start)))
        .collect()
}

/// The write the oracle found stale.
fn stale_write(r: &ScenarioRun) -> String {
    let v = r
        .report
        .violations
        .iter()
        .find(|v| v.kind == fencesim::oracle::ViolationKind::StaleWrite)
        .expect("a stale write");
    let e = &r.result.journal.events()[v.seq as usize];
    assert_eq!(e.kind, "accepted", "{v}");
    e.str("write").expect("a write id").to_owned()
}

const SECOND: u64 = 1_000_000_000;
/// The lock's event for a lock the server ended, with its `reason`.
const EXPIRED: &str = "expired";

#[test]
fn an_idle_session_timeout_ends_the_paused_holders_session_and_its_write_lands_stale() {
    let r = bundled("postgres-advisory-idle-timeout.toml");
    assert_eq!(counts(&r.report), (Verdict::Violation, 1, 0, 2, 0));
    // client1 held the lock; the server ended its session 10 s after its
    // last statement, while it was paused, and its lock with it.
    let acquired = only(&r, "client1", "acquired");
    let ended = only(&r, "lock", EXPIRED);
    assert_eq!(ended.str("client"), Some("client1"));
    assert_eq!(ended.str("reason"), Some("idle_session_timeout"));
    let idle = ended.t_ns - acquired.t_ns;
    assert!(
        (10 * SECOND - 5_000_000..10 * SECOND).contains(&idle),
        "{idle}"
    );
    // With a FATAL to the client, which reads it only when it wakes.
    let fatal = sends_to(&r, "client1", "FATAL");
    assert_eq!(fatal.len(), 1);
    assert_eq!(fatal[0].t_ns, ended.t_ns);
    let resumed = only(&r, "client1", "resume");
    assert!(ended.t_ns < resumed.t_ns, "it ended during the pause");
    // client2 got the lock only then; client1's later write is the stale one.
    let granted = events(&r, "lock", "granted");
    assert_eq!(granted[1].str("client"), Some("client2"));
    assert!(granted[1].t_ns > ended.t_ns);
    assert_eq!(stale_write(&r), "client1/1");
    // client1 hears of it only when its unlock finds the connection gone.
    assert!(events(&r, "client1", "lost").is_empty());
}

#[test]
fn a_nextval_token_checked_by_the_update_rejects_the_woken_holder() {
    let r = bundled("postgres-advisory-fenced.toml");
    assert_eq!(counts(&r.report), (Verdict::Safe, 0, 0, 1, 1));
    assert_eq!(token(&r, "client1", "acquired", 0), Some(1));
    assert_eq!(token(&r, "client2", "acquired", 0), Some(2));
    let rejected = only(&r, "storage", "rejected");
    assert_eq!(
        (rejected.str("write"), rejected.u64("token")),
        (Some("client1/1"), Some(1))
    );
    assert_eq!(
        only(&r, "lock", EXPIRED).str("reason"),
        Some("idle_session_timeout")
    );
}

#[test]
fn transaction_pooling_lets_a_second_client_lock_the_same_session() {
    let r = bundled("postgres-pooler-shared-session.toml");
    assert_eq!(counts(&r.report), (Verdict::Violation, 1, 0, 2, 0));
    // No session ended and client1 never let go before client2 was granted:
    // both held the lock at once, through one server session.
    assert!(events(&r, "lock", EXPIRED).is_empty());
    let granted = events(&r, "lock", "granted");
    let released = events(&r, "lock", "released");
    assert_eq!(granted[1].str("client"), Some("client2"));
    assert_eq!(released[0].str("client"), Some("client2"));
    assert_eq!(released[1].str("client"), Some("client1"));
    assert!(granted[1].t_ns < released[1].t_ns);
    assert!(events(&r, "client2", "denied").is_empty());
    assert_eq!(stale_write(&r), "client1/1");
}

#[test]
fn the_pooled_handoff_is_fenced_off_by_the_token_or_avoided_by_a_transaction() {
    // The token keeps the data safe; the server still granted the lock
    // twice through the shared session, which no fence hides.
    let r = bundled("postgres-pooler-shared-session-fenced.toml");
    assert_eq!(counts(&r.report), (Verdict::Violation, 0, 0, 1, 1));
    assert_eq!(r.report.double_grants, 1);
    assert_eq!(token(&r, "client2", "acquired", 0), Some(2));
    assert_eq!(
        only(&r, "storage", "rejected").str("write"),
        Some("client1/1")
    );

    // Inside a transaction client1 keeps its server session: client2 is
    // refused until client1 commits, and both writes land in turn.
    let r = bundled("postgres-pooler-transaction-lock.toml");
    assert_eq!(counts(&r.report), (Verdict::Safe, 0, 0, 2, 0));
    assert_eq!(r.report.overlapping_leases, 0);
    assert!(!events(&r, "client2", "denied").is_empty());
    let granted = events(&r, "lock", "granted");
    let released = events(&r, "lock", "released");
    assert_eq!(released[0].str("client"), Some("client1"));
    assert!(released[0].t_ns < granted[1].t_ns);
}

#[test]
fn a_frozen_vm_answers_no_keepalive_probe_and_its_session_ends() {
    let r = bundled("postgres-keepalive-vm-freeze.toml");
    assert_eq!(counts(&r.report), (Verdict::Violation, 1, 0, 2, 0));
    assert_eq!(sends_to(&r, "client1", "keepalive probe").len(), 3);
    let ended = only(&r, "lock", EXPIRED);
    assert_eq!(ended.str("reason"), Some("keepalive"));
    assert!(ended.t_ns < only(&r, "client1", "resume").t_ns);
    assert_eq!(stale_write(&r), "client1/1");

    let r = bundled("postgres-keepalive-vm-freeze-fenced.toml");
    assert_eq!(counts(&r.report), (Verdict::Safe, 0, 0, 1, 1));
    assert_eq!(only(&r, "storage", "rejected").u64("token"), Some(1));
}

/// client1 holds the lock, then a partition cuts its machine off for 40 s;
/// it works 45 s and writes after the heal.
fn cut_off(keepalive: &str, verdict: &str) -> String {
    format!(
        r#"
name = "postgres-keepalive"
seed = 1
duration = "2m"

[lock]
design = "postgres"
{keepalive}

[storage]
design = "unchecked"

[[clients]]
name = "client1"
work = "45s"
timeout = "60s"

[[clients]]
name = "client2"
start = "30s"

[[faults]]
kind = "partition"
groups = [["client1"], ["lock", "storage", "client2"]]
after = "client1:acquired"
duration = "40s"

[expect]
verdict = "{verdict}"
"#
    )
}

#[test]
fn the_keepalive_ends_a_cut_off_clients_session_after_idle_plus_interval_times_count() {
    let keepalive = "tcp_keepalives_idle = \"10s\"\ntcp_keepalives_interval = \"5s\"\n\
                     tcp_keepalives_count = 3";
    let r = run_as_expected("postgres-keepalive", &cut_off(keepalive, "violation"));
    let acquired = only(&r, "client1", "acquired");
    let ended = only(&r, "lock", EXPIRED);
    assert_eq!(ended.str("reason"), Some("keepalive"));
    // 10 s of silence, then three probes 5 s apart, none answered: 25 s.
    let silent = ended.t_ns - acquired.t_ns;
    assert!(
        (25 * SECOND - 5_000_000..25 * SECOND).contains(&silent),
        "{silent}"
    );
    assert_eq!(counts(&r.report).0, Verdict::Violation);
    assert_eq!(stale_write(&r), "client1/1");

    // With the operating system's keepalive (over two hours) the session
    // outlives the partition: client2 waits for client1's unlock.
    let r = run_as_expected("postgres-keepalive-default", &cut_off("", "safe"));
    assert!(events(&r, "lock", EXPIRED).is_empty());
    assert_eq!(counts(&r.report), (Verdict::Safe, 0, 0, 2, 0));
    assert!(!events(&r, "client2", "denied").is_empty());
}

/// Three clients, three rounds each, on a lossy network, with and without
/// a transaction pooler: a token checked by the storage keeps every run's
/// data safe, and lost unlocks strand no lock. Without a pooler no lock is
/// granted twice; transaction pooling hands one server session's lock to
/// several clients, which the oracle reports as double grants.
#[test]
fn busy_lossy_runs_complete_and_tokens_keep_them_safe() {
    for pooler in ["none", "transaction"] {
        let text = format!(
            r#"
name = "busy-postgres"
duration = "10m"

[lock]
design = "postgres"
idle_session_timeout = "3s"
pooler = "{pooler}"
tokens = true

[storage]
design = "fenced"

[network]
latency = ["1ms", "20ms"]
loss = 0.05

[[clients]]
name = "client1"
rounds = 3

[[clients]]
name = "client2"
rounds = 3

[[clients]]
name = "client3"
rounds = 3
"#
        );
        let s = scenario::load_str(&Registry::builtin(), "busy", &text).unwrap();
        let mut doubled = 0;
        for seed in 1..=15 {
            let first = runner::run(&s, seed);
            let again = runner::run(&s, seed);
            assert_eq!(first.trace_hash(), again.trace_hash(), "{pooler} {seed}");
            assert_eq!(
                first.result.outcome,
                sim::Outcome::Completed,
                "{pooler} seed {seed}"
            );
            let r = &first.report;
            assert_eq!((r.stale_writes, r.lost_updates), (0, 0), "{pooler} {seed}");
            assert_eq!(r.token_regressions, 0, "{pooler} {seed}");
            if pooler == "none" {
                assert_eq!(r.verdict, Verdict::Safe, "{pooler} {seed}");
            }
            doubled += u64::from(r.double_grants > 0);
        }
        assert_eq!(
            doubled > 0,
            pooler == "transaction",
            "{pooler}: {doubled} runs"
        );
    }
}

/// client1 works 15 s under a 10 s `idle_session_timeout`, with `renew`
/// (a `SELECT 1` every half of it); client2 asks from 1 s on. `pause` is
/// an optional fault line for client1.
fn renewing(pause: &str, verdict: &str) -> String {
    format!(
        r#"
name = "postgres-renew"
seed = 1
duration = "1m"

[lock]
design = "postgres"
idle_session_timeout = "10s"
tokens = true

[storage]
design = "fenced"

[[clients]]
name = "client1"
work = "15s"
renew = true

[[clients]]
name = "client2"
start = "1s"
timeout = "30s"
{pause}
[expect]
verdict = "{verdict}"
"#
    )
}

#[test]
fn a_select_1_keeps_the_holders_session_busy_through_a_long_critical_section() {
    let r = run_as_expected("postgres-renew", &renewing("", "safe"));
    assert_eq!(counts(&r.report), (Verdict::Safe, 0, 0, 2, 0));
    assert!(events(&r, "lock", EXPIRED).is_empty());
    assert_eq!(events(&r, "lock", "renewed").len(), 3, "at 5, 10 and 15 s");
    // client2 is refused until client1 unlocks.
    let released = &events(&r, "lock", "released")[0];
    assert_eq!(released.str("client"), Some("client1"));
    assert!(events(&r, "lock", "granted")[1].t_ns > released.t_ns);
}

#[test]
fn a_renewing_holder_woken_after_its_session_ended_hears_of_it_before_writing() {
    let pause = r#"
[[faults]]
kind = "pause"
node = "client1"
after = "client1:acquired"
duration = "15s"
"#;
    let r = run_as_expected("postgres-renew-paused", &renewing(pause, "safe"));
    assert_eq!(
        only(&r, "lock", EXPIRED).str("reason"),
        Some("idle_session_timeout")
    );
    // Its first renewal after the pause is refused: it gives the round up.
    assert_eq!(kinds_of(&r, "client1"), ["acquired", "lost", "released"]);
    assert_eq!(counts(&r.report), (Verdict::Safe, 0, 0, 1, 0));
}

/// The kinds of client `node`'s lock and write events, in order.
fn kinds_of<'a>(r: &'a ScenarioRun, node: &str) -> Vec<&'a str> {
    r.result
        .journal
        .events()
        .iter()
        .filter(|e| e.node == node)
        .map(|e| e.kind.as_str())
        .filter(|k| ["acquired", "lost", "released", "wrote", "renewed"].contains(k))
        .collect()
}
