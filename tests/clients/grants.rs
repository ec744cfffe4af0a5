//! Duplicated grants: a client acts once on the grant it waits for and never
//! hands back the lease it holds.

use fencesim::oracle::Verdict;

use crate::{count, run};

/// The user's report: one duplicated grant (the `duplicate` fault after
/// `client1:acquired` doubles the next message from the lock to client2,
/// its grant) made client2 release the lease it had just got; client3 was
/// granted the lock while client2 worked, and client2's write landed as a
/// zombie. The client must ignore a second copy of the grant it holds.
#[test]
fn a_duplicated_grant_does_not_release_the_lease_the_client_holds() {
    let run = run(r#"
name = "duplicated-grant"
strict = true
[lock]
design = "lease"
first_token = 33
[storage]
design = "fenced"
[[clients]]
name = "client1"
[[clients]]
name = "client2"
start = "2s"
[[clients]]
name = "client3"
start = "2500ms"
[[faults]]
kind = "duplicate"
from = "lock"
to = "client2"
after = "client1:acquired"
"#);
    let r = &run.report;
    assert_eq!(count(&run, "client2", "acquired"), 1);
    // The lock frees client2's lease only when client2 gives it up, after
    // its write: client3 waits for it.
    let events = run.result.journal.events();
    let lock_released: Vec<u64> = events
        .iter()
        .filter(|e| e.node == "lock" && e.kind == "released" && e.str("client") == Some("client2"))
        .map(|e| e.seq)
        .collect();
    let client2_released = events
        .iter()
        .find(|e| e.node == "client2" && e.kind == "released")
        .expect("client2 released its lease")
        .seq;
    assert_eq!(lock_released.len(), 1, "{}", run.result.journal.to_jsonl());
    assert!(lock_released[0] > client2_released);
    assert_eq!(r.zombie_writes, 0, "{:#?}", r.violations);
    assert_eq!(r.accepted_writes, 3);
    assert_eq!(r.verdict, Verdict::Safe);
}
