//! The simulated ZooKeeper and Hazelcast clients as their callers rely on
//! them: an answer is taken once, and only for the call that asked; a
//! grant nobody waits for is given back; the end of a session reaches the
//! caller; the token a write carries is the one the lock granted.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use fencesim::design::catalog::Registry;
use fencesim::design::client::ClientConfig;
use fencesim::explore::random::scenario_for_seed;
use fencesim::oracle::Verdict;
use fencesim::process::hazelcast::{self, ClientOptions, INVALID_FENCE};
use fencesim::process::zookeeper;
use fencesim::process::{Handle, Process, SimStorage, Storage};
use fencesim::protocol::Msg;
use fencesim::runner::run;
use fencesim::scenario::{load_str, Scenario};
use sim::journal::Journal;

use crate::scenario;

/// What a test's process saw, line by line.
type Log = Arc<Mutex<Vec<String>>>;

fn said(log: &Log, line: impl Into<String>) {
    log.lock().unwrap().push(line.into());
}

fn lines(log: &Log) -> Vec<String> {
    log.lock().unwrap().clone()
}

/// A process running `script` with a log to write in.
fn script<F, Fut>(
    log: &Log,
    script: F,
) -> impl Fn(&ClientConfig, &[String]) -> Process<Msg> + Send + Sync + 'static
where
    F: Fn(Handle<Msg>, Log) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = ()> + 'static,
{
    let log = log.clone();
    move |_, _| {
        let (script, log) = (script.clone(), log.clone());
        Process::new(move |h| script(h, log.clone()))
    }
}

/// A world with one lock node of `design` (10 s sessions), an unchecked
/// storage, `clients` (TOML tables) and `faults`, with `processes`
/// registered beside the bundled ones.
fn world(
    design: &str,
    clients: &str,
    faults: &str,
    processes: Vec<(&'static str, Box<ProcessMaker>)>,
) -> Scenario {
    let mut registry = Registry::builtin();
    for (name, make) in processes {
        registry.add_process(name, "a test's client", make);
    }
    let text = format!(
        "name = \"t\"\nseed = 1\nduration = \"1m\"\n\n[lock]\ndesign = \"{design}\"\n\
         ttl = \"10s\"\n\n[storage]\ndesign = \"unchecked\"\n\n{clients}\n{faults}"
    );
    load_str(&registry, "t.toml", &text).expect("the test's scenario loads")
}

type ProcessMaker = dyn Fn(&ClientConfig, &[String]) -> Process<Msg> + Send + Sync;

/// A process for [`world`] to register as `name`.
fn named(
    name: &'static str,
    make: impl Fn(&ClientConfig, &[String]) -> Process<Msg> + Send + Sync + 'static,
) -> (&'static str, Box<ProcessMaker>) {
    (name, Box::new(make))
}

/// The one client of `world`, running `process`.
fn one_client(process: &str) -> String {
    format!("[[clients]]\nname = \"client1\"\nprocess = \"{process}\"\n")
}

/// What the lock granted, by (client, lease): the token.
fn grants(journal: &Journal) -> BTreeMap<(String, u64), Option<u64>> {
    journal
        .events()
        .iter()
        .filter(|e| e.node == "lock" && e.kind == "granted")
        .map(|e| {
            let client = e.str("client").unwrap().to_owned();
            ((client, e.u64("lease").unwrap()), e.u64("token"))
        })
        .collect()
}

/// Checks that every `acquired` names a grant the lock made to that client
/// before, with its token, and that every `wrote` carries the token of its
/// client's latest `acquired`. Returns how many times each client acquired.
fn grants_and_writes_agree(journal: &Journal) -> Result<BTreeMap<String, u64>, String> {
    let mut granted: BTreeMap<(String, u64), Option<u64>> = BTreeMap::new();
    let mut latest: BTreeMap<String, Option<u64>> = BTreeMap::new();
    let mut acquired: BTreeMap<String, u64> = BTreeMap::new();
    for e in journal.events() {
        let node = e.node.to_string();
        match e.kind.as_str() {
            "granted" if e.node == "lock" => {
                let client = e.str("client").unwrap().to_owned();
                granted.insert((client, e.u64("lease").unwrap()), e.u64("token"));
            }
            "acquired" => {
                let (lease, token) = (e.u64("lease").unwrap(), e.u64("token"));
                match granted.get(&(node.clone(), lease)) {
                    Some(t) if *t == token => {}
                    other => {
                        return Err(format!(
                            "event {}: {node} acquired lease {lease} with token {token:?}; \
                             the lock granted it {other:?}",
                            e.seq
                        ))
                    }
                }
                latest.insert(node.clone(), token);
                *acquired.entry(node).or_default() += 1;
            }
            "wrote" => {
                let token = e.u64("token");
                if latest.get(&node) != Some(&token) {
                    return Err(format!(
                        "event {}: {node} wrote with token {token:?} under {:?}",
                        e.seq,
                        latest.get(&node)
                    ));
                }
            }
            _ => {}
        }
    }
    Ok(acquired)
}

/// Two clients of `process`, three rounds each, on a network that
/// delivers half of all messages twice: every answer the clients take is
/// taken once, for the call that asked.
fn duplicated_answers_are_taken_once(design: &str, process: &str) {
    let clients = format!(
        "[network]\nduplicate = 0.5\n\n[[clients]]\nname = \"client1\"\nprocess = \"{process}\"\n\
         rounds = 3\n\n[[clients]]\nname = \"client2\"\nprocess = \"{process}\"\nrounds = 3\n\
         start = \"300ms\"\n"
    );
    let s = world(design, &clients, "", vec![]);
    for seed in 1..=20 {
        let r = run(&s, seed);
        let journal = r.result.journal.to_jsonl();
        assert_eq!(r.report.verdict, Verdict::Safe, "seed {seed}: {journal}");
        assert!(
            r.report.untrusted.is_empty(),
            "seed {seed}: {:?}",
            r.report.untrusted
        );
        let acquired = grants_and_writes_agree(&r.result.journal)
            .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        let want = BTreeMap::from([("client1".into(), 3), ("client2".into(), 3)]);
        assert_eq!(acquired, want, "seed {seed}: {journal}");
        // No grant ends at the lock before its holder gives it up: a
        // copy of an answer never takes a hold off behind the caller's back.
        let mut given_up = std::collections::BTreeSet::new();
        for e in r.result.journal.events() {
            match (e.node == "lock", e.kind.as_str()) {
                (false, "released") => {
                    given_up.insert((e.node.to_string(), e.u64("lease").unwrap()));
                }
                (true, "released" | "expired") => {
                    let grant = (e.str("client").unwrap().to_owned(), e.u64("lease").unwrap());
                    assert!(
                        given_up.contains(&grant),
                        "seed {seed}: event {} ends {grant:?} before its holder let go: {journal}",
                        e.seq
                    );
                }
                _ => {}
            }
        }
        assert_eq!(given_up.len(), 6, "seed {seed}: {journal}");
    }
}

#[test]
fn zookeeper_duplicated_answers_are_taken_once() {
    duplicated_answers_are_taken_once("zookeeper", "zookeeper-recipe");
}

#[test]
fn hazelcast_duplicated_answers_are_taken_once() {
    duplicated_answers_are_taken_once("hazelcast", "hazelcast-fenced-lock");
}

#[test]
fn the_token_each_write_carries_is_its_grants_under_random_faults() {
    for file in [
        "zookeeper-recipe-async-fenced",
        "hazelcast-fenced-lock-async-fenced",
    ] {
        let s = scenario(&format!("scenarios/{file}.toml"));
        for seed in 0..150 {
            let r = run(&scenario_for_seed(&s, seed), seed);
            assert_ne!(r.report.verdict, Verdict::Error, "{file} seed {seed}");
            grants_and_writes_agree(&r.result.journal)
                .unwrap_or_else(|e| panic!("{file} seed {seed}: {e}"));
        }
    }
}

#[test]
fn zookeeper_a_grant_for_a_lock_call_given_up_is_given_back_not_taken() {
    // client1's first lock call is granted at once, but the grant is held
    // 3 s in the network; the call is given up after 1.5 s and client1
    // asks again: its second znode queues behind its first. The late
    // grant is the first call's: handed back (the znode deleted), and the
    // second call gets the lock with its own znode and zxid.
    let log = Log::default();
    let gives_up = script(&log, |h, log| async move {
        let zk = zookeeper::Client::connect(&h, "lock", Duration::from_secs(5))
            .await
            .unwrap();
        let first = h.timeout(Duration::from_millis(1500), zk.lock("/l-")).await;
        said(&log, format!("first: {}", first.is_ok()));
        let lock = zk.lock("/l-").await.unwrap();
        said(
            &log,
            format!("second: {} {:?}", lock.sequence(), lock.czxid()),
        );
        let storage = SimStorage::new(&h, "storage", Duration::from_secs(5));
        let _ = storage.put("x", 1, lock.czxid()).await;
        said(&log, format!("release: {:?}", lock.release().await));
        zk.close();
    });
    let faults = "[[faults]]\nkind = \"delay\"\nfrom = \"lock\"\nto = \"client1\"\n\
                  extra = \"3s\"\nduration = \"500ms\"\nafter = \"lock:granted\"\n";
    let s = world(
        "zookeeper",
        &one_client("zk-gives-up"),
        faults,
        vec![named("zk-gives-up", gives_up)],
    );
    let r = run(&s, 1);
    let journal = &r.result.journal;
    let granted = grants(journal);
    let second = granted[&("client1".to_owned(), 1)];
    assert_eq!(
        lines(&log),
        [
            "first: false".to_owned(),
            format!("second: 1 {second:?}"),
            "release: Ok(())".to_owned(),
        ],
        "{}",
        journal.to_jsonl()
    );
    assert_ne!(second, granted[&("client1".to_owned(), 0)]);
    // The first znode was deleted (by the client, not by an expiry), and
    // the client never believed it held it.
    let released_first = journal
        .events()
        .iter()
        .any(|e| e.node == "lock" && e.kind == "released" && e.u64("lease") == Some(0));
    assert!(released_first, "{}", journal.to_jsonl());
    let acquired: Vec<u64> = journal
        .events()
        .iter()
        .filter(|e| e.is("client1", "acquired"))
        .map(|e| e.u64("lease").unwrap())
        .collect();
    assert_eq!(acquired, [1]);
    grants_and_writes_agree(journal).unwrap();
    assert_eq!(r.report.verdict, Verdict::Safe);
}

#[test]
fn zookeeper_session_expiry_reaches_the_caller() {
    // client1 holds the lock and is paused 15 s, past its 10 s session:
    // the first heartbeat after the pause is answered SessionExpired, the
    // state watcher says so, and every call fails with it.
    let log = Log::default();
    let expires = script(&log, |h, log| async move {
        let zk = zookeeper::Client::connect(&h, "lock", Duration::from_secs(5))
            .await
            .unwrap();
        let mut watcher = zk.state_watcher();
        let lock = zk.lock("/l-").await.unwrap();
        said(&log, format!("{:?}", zk.state()));
        let changed = h.timeout(Duration::from_secs(10), watcher.changed()).await;
        said(&log, format!("{changed:?} {:?}", watcher.state()));
        said(&log, format!("{:?}", zk.lock("/l-").await.err()));
        said(&log, format!("{:?}", lock.release().await));
    });
    let faults = "[[faults]]\nkind = \"pause\"\nnode = \"client1\"\n\
                  after = \"client1:acquired\"\nduration = \"15s\"\n";
    let s = world(
        "zookeeper",
        &one_client("zk-expires"),
        faults,
        vec![named("zk-expires", expires)],
    );
    let r = run(&s, 1);
    assert_eq!(
        lines(&log),
        [
            "SyncConnected",
            "Ok(Expired) Expired",
            "Some(SessionExpired)",
            "Err(SessionExpired)",
        ],
        "{}",
        r.result.journal.to_jsonl()
    );
    let released = r
        .result
        .journal
        .events()
        .iter()
        .filter(|e| e.is("client1", "released"))
        .count();
    assert_eq!(released, 1, "the caller gave the lock up once");
}

#[test]
fn hazelcast_a_lost_session_is_told_on_the_next_lock_call_and_a_new_one_is_opened() {
    let log = Log::default();
    let loses = script(&log, |h, log| async move {
        let client = hazelcast::Client::new(&h, "lock", ClientOptions::new());
        let lock = client.get_lock("job");
        said(&log, format!("{:?}", lock.lock_and_get_fence().await));
        // Paused 15 s here, past the 10 s CP session TTL.
        said(
            &log,
            format!("{:?}", lock.is_locked_by_current_thread().await),
        );
        said(
            &log,
            format!("{:?}", lock.is_locked_by_current_thread().await),
        );
        said(&log, format!("{:?}", lock.unlock().await));
        said(&log, format!("{:?}", lock.unlock().await));
        said(&log, format!("{:?}", lock.lock_and_get_fence().await));
        said(&log, format!("{:?}", lock.unlock().await));
        client.shutdown();
        said(&log, format!("{:?}", lock.lock_and_get_fence().await));
    });
    let faults = "[[faults]]\nkind = \"pause\"\nnode = \"client1\"\n\
                  after = \"client1:acquired\"\nduration = \"15s\"\n";
    let s = world(
        "hazelcast",
        &one_client("hz-loses"),
        faults,
        vec![named("hz-loses", loses)],
    );
    let r = run(&s, 1);
    assert_eq!(
        lines(&log),
        [
            "Ok(1)",
            "Err(LockOwnershipLost)",
            "Ok(false)",
            "Err(LockOwnershipLost)",
            "Err(IllegalMonitorState)",
            "Ok(2)",
            "Ok(())",
            "Err(ClientNotActive)",
        ],
        "{}",
        r.result.journal.to_jsonl()
    );
    // The lock went with the first session; the second is a new grant.
    let made = grants(&r.result.journal);
    assert_eq!(
        made.keys().map(|(_, lease)| *lease).collect::<Vec<_>>(),
        [1, 2]
    );
    grants_and_writes_agree(&r.result.journal).unwrap();
}

#[test]
fn hazelcast_a_reentrant_lock_is_one_grant_held_until_its_last_unlock() {
    let log = Log::default();
    let reenters = script(&log, |h, log| async move {
        let client = hazelcast::Client::new(&h, "lock", ClientOptions::new());
        let lock = client.get_lock("job");
        said(&log, format!("{:?}", lock.lock_and_get_fence().await));
        said(&log, format!("{:?}", lock.lock_and_get_fence().await));
        said(&log, format!("{:?}", lock.unlock().await));
        said(
            &log,
            format!("{:?}", lock.is_locked_by_current_thread().await),
        );
        h.sleep(Duration::from_secs(2)).await;
        said(&log, format!("{:?}", lock.unlock().await));
        said(
            &log,
            format!("{:?}", lock.is_locked_by_current_thread().await),
        );
        said(&log, format!("{:?}", lock.unlock().await));
        client.shutdown();
    });
    // client2 tries while client1 holds its second hold, and again after
    // client1's last unlock.
    let tries = script(&log, |h, log| async move {
        let client = hazelcast::Client::new(&h, "lock", ClientOptions::new());
        let lock = client.get_lock("job");
        h.sleep(Duration::from_secs(1)).await;
        said(
            &log,
            format!("client2 {:?}", lock.try_lock_and_get_fence().await),
        );
        h.sleep(Duration::from_secs(3)).await;
        said(
            &log,
            format!("client2 {:?}", lock.try_lock_and_get_fence().await),
        );
        said(&log, format!("client2 {:?}", lock.unlock().await));
        client.shutdown();
    });
    let clients = format!(
        "{}\n[[clients]]\nname = \"client2\"\nprocess = \"hz-tries\"\n",
        one_client("hz-reenters")
    );
    let s = world(
        "hazelcast",
        &clients,
        "",
        vec![named("hz-reenters", reenters), named("hz-tries", tries)],
    );
    let r = run(&s, 1);
    assert_eq!(
        lines(&log),
        [
            "Ok(1)".to_owned(),
            "Ok(1)".to_owned(),
            "Ok(())".to_owned(),
            "Ok(true)".to_owned(),
            format!("client2 Ok({INVALID_FENCE})"),
            "Ok(())".to_owned(),
            "Ok(false)".to_owned(),
            "Err(IllegalMonitorState)".to_owned(),
            "client2 Ok(2)".to_owned(),
            "client2 Ok(())".to_owned(),
        ],
        "{}",
        r.result.journal.to_jsonl()
    );
    let count = |node: &str, kind: &str| {
        r.result
            .journal
            .events()
            .iter()
            .filter(|e| e.is(node, kind))
            .count()
    };
    assert_eq!(count("client1", "acquired"), 1);
    assert_eq!(count("client1", "released"), 1);
    // One grant to each client, each released once.
    assert_eq!(count("lock", "granted"), 2);
    assert_eq!(count("lock", "released"), 2);
    grants_and_writes_agree(&r.result.journal).unwrap();
}
