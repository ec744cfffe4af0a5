//! What a client's `acquired` is matched to: every grant a lock node sends
//! was journaled as `granted` for that client and lease (a second copy of
//! one answers a retried request), every `granted` went out as a grant, and
//! a grant ends at most once, by `released` or `expired`, after it was
//! made. The lock designs answer through the journaling ledger, so this
//! holds for every bundled scenario under random faults too.

use std::collections::BTreeMap;
use std::path::Path;

use fencesim::design::catalog::Registry;
use fencesim::explore::sweep::{run_seed, FaultMode};
use fencesim::runner::ScenarioRun;
use sim::journal::Event;

/// `lease=N` of a message summary such as `grant lease=3 token=7`.
fn lease_of(summary: &str) -> Option<u64> {
    let rest = summary.split("lease=").nth(1)?;
    rest.split(' ').next()?.parse().ok()
}

fn is_lock(node: &str) -> bool {
    node == "lock"
        || node
            .strip_prefix("lock")
            .is_some_and(|n| n.parse::<u32>().is_ok())
}

/// Where a grant is, as the journal tells it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Grant {
    Live,
    /// Its lock crashed while it was live and is still down: whether the
    /// grant survived is known at the restart.
    Orphaned,
    Ended,
}

/// The ledger's promises, checked on one run's journal; `what` names it.
fn check(run: &ScenarioRun, what: &str) {
    let mut grants: BTreeMap<(String, String, u64), Grant> = BTreeMap::new();
    let events = run.result.journal.events();
    let key = |e: &Event| {
        let client = e.str("client").expect("a lock event names its client");
        let lease = e.u64("lease").expect("a lock event names its lease");
        (e.node.to_string(), client.to_owned(), lease)
    };
    for (i, e) in events.iter().enumerate() {
        match e.kind.as_str() {
            "granted" => {
                let k = key(e);
                let is_grant = |n: &Event| {
                    n.node == e.node
                        && n.kind == "send"
                        && n.str("to") == Some(&k.1)
                        && n.str("msg").is_some_and(|m| m.starts_with("grant "))
                        && n.str("msg").and_then(lease_of) == Some(k.2)
                };
                let sent = events[i + 1..]
                    .iter()
                    .take_while(|n| n.t_ns == e.t_ns)
                    .any(is_grant);
                // A pause anchored on the grant (`after = "lock:granted"`)
                // takes effect before the lock's next action: the grant
                // goes out when it resumes, or never if the lock crashes
                // first (the grant is then orphaned, below) or the run
                // ends first.
                let mut own = events[i + 1..].iter().filter(|n| n.node == e.node);
                let paused = own.next().is_some_and(|n| n.kind == "pause");
                let mut after_pause = own.skip_while(|n| n.kind != "resume" && n.kind != "crash");
                let sent_on_resume = paused
                    && match after_pause.next() {
                        Some(n) if n.kind == "crash" => true,
                        Some(_) => after_pause.take_while(|n| n.kind == "send").any(is_grant),
                        None => true,
                    };
                assert!(
                    sent || sent_on_resume,
                    "{what}: {e:?} was not sent as a grant"
                );
                let before = grants.insert(k, Grant::Live);
                assert_ne!(before, Some(Grant::Live), "{what}: {e:?} granted twice");
            }
            "released" | "expired" if is_lock(&e.node) => {
                let state = grants.get_mut(&key(e));
                assert!(
                    matches!(state.as_deref(), Some(Grant::Live)),
                    "{what}: {e:?} ends a grant that is not live ({state:?})"
                );
                *state.expect("checked") = Grant::Ended;
            }
            "crash" if is_lock(&e.node) => {
                for (k, state) in grants.iter_mut() {
                    if k.0 == e.node && *state == Grant::Live {
                        *state = Grant::Orphaned;
                    }
                }
            }
            // Back up: a grant kept on disk is live again, and one that
            // lived in memory is journaled as `expired` (reason `restart`)
            // by the lock's `on_start`, at the restart's instant.
            "restart" if is_lock(&e.node) => {
                for (k, state) in grants.iter_mut() {
                    if k.0 == e.node && *state == Grant::Orphaned {
                        *state = Grant::Live;
                    }
                }
                let forgotten: Vec<&Event> = events[i + 1..]
                    .iter()
                    .take_while(|n| n.t_ns == e.t_ns)
                    .filter(|n| n.node == e.node && n.kind == "expired")
                    .collect();
                for f in forgotten {
                    assert_eq!(f.str("reason"), Some("restart"), "{what}: {f:?}");
                }
            }
            "send" if is_lock(&e.node) => {
                let Some(msg) = e.str("msg").filter(|m| m.starts_with("grant ")) else {
                    continue;
                };
                let to = e.str("to").expect("a send names its receiver");
                let lease = lease_of(msg).expect("a grant names its lease");
                let k = (e.node.to_string(), to.to_owned(), lease);
                assert!(
                    grants.contains_key(&k),
                    "{what}: {e:?} sends a grant never journaled"
                );
            }
            _ => {}
        }
    }
}

#[test]
fn every_grant_a_lock_sends_is_journaled_and_ends_at_most_once() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("scenarios/")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    assert!(files.len() > 40, "the bundled scenarios: {}", files.len());
    let mut grants = 0;
    for file in &files {
        let scenario = fencesim::scenario::load_file(&Registry::builtin(), file)
            .unwrap_or_else(|e| panic!("{e}"));
        for (seed, mode) in [(scenario.seed, FaultMode::Scenario)]
            .into_iter()
            .chain((0..6).map(|seed| (seed, FaultMode::Random)))
        {
            let (run, _) = run_seed(&scenario, seed, mode.clone());
            let what = format!("{} seed {seed} ({})", file.display(), mode.as_str());
            check(&run, &what);
            grants += run
                .result
                .journal
                .events()
                .iter()
                .filter(|e| e.kind == "granted")
                .count();
        }
    }
    assert!(grants > 500, "the runs granted {grants} times");
}
