//! The `etcd` lock: Jepsen's lock workload, etcd issue 11456, and a session
//! lost in a pause, each unfenced and fenced by the key's revision.

use fencesim::oracle::Verdict;

use crate::run;

/// Jepsen's etcd lock workload (Kingsbury, "etcd 3.4.3", 2020): a 2 s lease,
/// clients that read, take their time, and write. client1 is paused between
/// its read and its write, past its lease; the next holders increment, and
/// client1's write puts back an old value.
fn jepsen(storage: &str, tokens: bool) -> String {
    format!(
        r#"name = "jepsen-etcd-lock"
description = "Jepsen's etcd lock workload: 2 s TTL, read-modify-write, a pause."
duration = "1m"
[lock]
design = "etcd"
ttl = "2s"
tokens = {tokens}
[storage]
design = "{storage}"
[[clients]]
name = "client1"
rounds = 3
work = "200ms"
workload = "increment"
[[clients]]
name = "client2"
start = "100ms"
rounds = 3
work = "300ms"
workload = "increment"
timeout = "20s"
[[clients]]
name = "client3"
start = "200ms"
rounds = 3
work = "100ms"
workload = "increment"
timeout = "20s"
# The storage's first answer is client1's read: client1 is paused while
# it is on its way (a pause right after the read).
[[faults]]
kind = "pause"
node = "client1"
after = "storage:send"
duration = "5s"
"#
    )
}

#[test]
fn jepsen_lock_workload_loses_updates_without_fencing() {
    let r = run("etcd.toml", &jepsen("unchecked", true)).report;
    assert_eq!(r.verdict, Verdict::Violation, "{r:#?}");
    assert!(r.lost_updates > 0, "{r:#?}");
    assert!(r.stale_writes > 0, "{r:#?}");
    assert_eq!(r.rejected_writes, 0);
}

#[test]
fn jepsen_lock_workload_is_safe_when_storage_checks_the_revision() {
    let r = run("etcd.toml", &jepsen("fenced", true)).report;
    assert_eq!(r.verdict, Verdict::Safe, "{r:#?}");
    assert_eq!((r.lost_updates, r.stale_writes), (0, 0));
    assert_eq!(r.rejected_writes, 1, "the paused client's write: {r:#?}");
    assert_eq!(r.accepted_writes, 8);
}

#[test]
fn jepsen_lock_workload_is_safe_with_a_conditional_write_and_no_tokens() {
    let r = run("etcd.toml", &jepsen("cas", false)).report;
    assert_eq!(r.verdict, Verdict::Safe, "{r:#?}");
    assert_eq!((r.lost_updates, r.rejected_writes), (0, 1), "{r:#?}");
}

/// etcd issue 11456: `Mutex.Lock` returned after the session's lease had
/// expired. client1's grant (and the lease it is on) reach it 6 s late, so
/// it never kept the lease alive: the server expires it at 2 s and grants
/// client2, which writes. client1 then learns of its grant and writes before
/// its first keep-alive tells it the session is gone.
fn issue_11456(storage: &str) -> String {
    format!(
        r#"name = "etcd-11456"
description = "etcd issue 11456: a lock granted after its lease expired."
duration = "1m"
strict = true
[lock]
design = "etcd"
ttl = "2s"
[storage]
design = "{storage}"
[[clients]]
name = "client1"
work = "100ms"
timeout = "20s"
[[clients]]
name = "client2"
start = "500ms"
timeout = "20s"
[[faults]]
kind = "delay"
from = "lock"
to = "client1"
extra = "6s"
duration = "1s"
after = "lock:granted"
"#
    )
}

#[test]
fn issue_11456_a_grant_after_the_lease_expired_gives_a_stale_write() {
    // client2's revision 3 is the newer grant, although client1 heard of its
    // revision 2 last: client1's write landing after client2's is stale.
    let run = run("etcd.toml", &issue_11456("unchecked"));
    let r = &run.report;
    assert_eq!(r.verdict, Verdict::Violation, "{r:#?}");
    assert_eq!(
        (r.stale_writes, r.zombie_writes, r.accepted_writes),
        (1, 0, 2),
        "{r:#?}"
    );
    let stale = &r.violations[0].explanation;
    assert!(
        stale.contains("client1's write client1/1 (token 2"),
        "{stale}"
    );
    assert!(
        stale.contains("client2's write client2/1 made under a newer grant (token 3"),
        "{stale}"
    );
}

#[test]
fn issue_11456_the_revision_fences_the_late_grant_off() {
    let r = run("etcd.toml", &issue_11456("fenced")).report;
    assert_eq!((r.zombie_writes, r.stale_writes), (0, 0), "{r:#?}");
    assert_eq!((r.accepted_writes, r.rejected_writes), (1, 1), "{r:#?}");
    // client1 hears of revision 2 after client2 acquired revision 3: a late
    // grant (the bug of 11456, seen from the clients), but the lock never
    // handed out a lower revision, and the storage's check fences it off.
    assert_eq!(r.token_regressions, 0, "{r:#?}");
    assert_eq!(r.verdict, Verdict::Safe);
}

/// An etcd session lost in a GC pause (DDIA figure 9-6 on etcd): client1's
/// lease expires while it is paused in the middle of its work; client2's key
/// is next and writes. (Paused right after acquiring instead, client1 would
/// resume before its work starts, and its next keep-alive would tell it the
/// lease is gone before it writes.)
fn session_lost_in_pause(storage: &str) -> String {
    format!(
        r#"name = "etcd-session-pause"
description = "An etcd session lost in a pause; the revision fences the zombie."
duration = "1m"
[lock]
design = "etcd"
[storage]
design = "{storage}"
[[clients]]
name = "client1"
[[clients]]
name = "client2"
start = "1s"
timeout = "30s"
[[faults]]
kind = "pause"
node = "client1"
after = "client1:acquired"
delay = "500ms"
duration = "15s"
"#
    )
}

#[test]
fn a_session_lost_in_a_pause_is_fenced_off_by_its_revision() {
    let run = run("etcd.toml", &session_lost_in_pause("fenced"));
    let r = &run.report;
    assert_eq!(r.verdict, Verdict::Safe, "{r:#?}");
    assert_eq!((r.accepted_writes, r.rejected_writes), (1, 1), "{r:#?}");
    // Tokens are create revisions: client1's key is revision 2, client2's 3.
    let tokens: Vec<_> = run
        .result
        .journal
        .events()
        .iter()
        .filter(|e| e.kind == "granted")
        .filter_map(|e| e.get("token").and_then(|v| v.as_u64()))
        .collect();
    assert_eq!(tokens, [2, 3]);
}

#[test]
fn a_session_lost_in_a_pause_writes_stale_without_fencing() {
    let r = run("etcd.toml", &session_lost_in_pause("unchecked")).report;
    assert_eq!(r.verdict, Verdict::Violation, "{r:#?}");
    assert_eq!(r.stale_writes, 1, "{r:#?}");
}
