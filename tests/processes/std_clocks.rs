//! A lease check written on std's clocks sees the faults one written on the
//! handle's clocks sees: `SystemTime::now()` reads the node's wall clock and
//! `Instant::now()` its monotonic clock. A client that checks, before it
//! writes, that its lease has not run out by its own clock, in front of an
//! unfenced storage, under random clock faults (rates and jumps) and
//! pauses, fails on exactly the same seeds whichever of the two ways it
//! reads each clock.

use std::time::{Instant, SystemTime};

use fencesim::design::catalog::Registry;
use fencesim::design::client::ClientConfig;
use fencesim::explore::random::scenario_for_seed;
use fencesim::oracle::Verdict;
use fencesim::process::{Handle, LockService, Process, SimLock, SimStorage, Storage};
use fencesim::protocol::Msg;
use fencesim::runner::run;
use fencesim::scenario::{load_str, Scenario};

/// How a client reads its clock to check its lease.
#[derive(Clone, Copy, Debug)]
enum LeaseClock {
    SystemTime,
    Instant,
    HandleWall,
    HandleMono,
}

/// A reading of a [`LeaseClock`].
enum Reading {
    System(SystemTime),
    Instant(Instant),
    Ns(i64),
}

impl LeaseClock {
    const ALL: [LeaseClock; 4] = [
        LeaseClock::SystemTime,
        LeaseClock::Instant,
        LeaseClock::HandleWall,
        LeaseClock::HandleMono,
    ];

    fn name(self) -> &'static str {
        match self {
            LeaseClock::SystemTime => "lease-check-system-time",
            LeaseClock::Instant => "lease-check-instant",
            LeaseClock::HandleWall => "lease-check-wall",
            LeaseClock::HandleMono => "lease-check-mono",
        }
    }

    fn read(self, h: &Handle<Msg>) -> Reading {
        match self {
            LeaseClock::SystemTime => Reading::System(SystemTime::now()),
            LeaseClock::Instant => Reading::Instant(Instant::now()),
            LeaseClock::HandleWall => Reading::Ns(h.wall_ns()),
            LeaseClock::HandleMono => Reading::Ns(h.mono_ns()),
        }
    }

    /// Nanoseconds since `then` by this clock: negative when a wall clock
    /// went back past it.
    fn elapsed_ns(self, h: &Handle<Msg>, then: &Reading) -> i128 {
        match (self, then) {
            (LeaseClock::SystemTime, Reading::System(t)) => {
                match SystemTime::now().duration_since(*t) {
                    Ok(d) => d.as_nanos() as i128,
                    Err(back) => -(back.duration().as_nanos() as i128),
                }
            }
            (LeaseClock::Instant, Reading::Instant(t)) => t.elapsed().as_nanos() as i128,
            (LeaseClock::HandleWall, Reading::Ns(t)) => i128::from(h.wall_ns() - t),
            (LeaseClock::HandleMono, Reading::Ns(t)) => i128::from(h.mono_ns() - t),
            _ => unreachable!("a reading of another clock"),
        }
    }
}

/// The client: `rounds` times, acquire, then work in chunks of `work`,
/// writing after each while the lease, counted from just before it was
/// asked for, has not run out by `clock` (eight writes at most); then
/// release.
fn lease_checker(clock: LeaseClock, config: &ClientConfig, lock: &str) -> Process<Msg> {
    let (config, lock) = (config.clone(), lock.to_owned());
    Process::new(move |h| {
        let (config, lock) = (config.clone(), lock.clone());
        async move {
            let locks = SimLock::new(&h, &lock, config.timeout);
            let storage = SimStorage::new(&h, &config.storage, config.timeout);
            h.sleep(config.start).await;
            let mut round = 0;
            while round < config.rounds {
                let asked = clock.read(&h);
                let lease = match locks.acquire().await {
                    Ok(lease) => lease,
                    Err(_) => {
                        h.sleep(config.retry).await;
                        continue;
                    }
                };
                for _ in 0..8 {
                    h.sleep(config.work).await;
                    if clock.elapsed_ns(&h, &asked) >= lease.ttl.as_nanos() as i128 {
                        break;
                    }
                    let value = storage.writes_sent() as i64 + 1;
                    let _ = storage.put(&config.key, value, lease.token).await;
                }
                let _ = locks.release(&lease).await;
                round += 1;
                h.sleep(config.retry).await;
            }
        }
    })
}

/// Two clients checking their 4 s leases by `clock` every second of work,
/// in front of a storage that checks nothing; random clock changes and
/// pauses.
fn scenario(clock: LeaseClock) -> Scenario {
    let mut registry = Registry::builtin();
    registry.add_process(
        clock.name(),
        "a test's lease-checking client",
        move |c, locks| lease_checker(clock, c, &locks[0]),
    );
    let client = |name: &str, start: &str| {
        format!(
            "[[clients]]\nname = \"{name}\"\nprocess = \"{}\"\nstart = \"{start}\"\n\
             rounds = 2\nwork = \"1s\"\n\n",
            clock.name()
        )
    };
    let text = format!(
        "name = \"t\"\nseed = 1\nduration = \"1m\"\n\n\
         [lock]\ndesign = \"lease\"\nttl = \"4s\"\ntokens = false\n\n\
         [storage]\ndesign = \"unchecked\"\n\n{}{}\
         [explore]\nkinds = [\"clock\", \"pause\"]\nfaults = [1, 3]\nmax_jump = \"5s\"\n\
         max_pause = \"5s\"\n",
        client("client1", "0s"),
        client("client2", "100ms"),
    );
    load_str(&registry, "t.toml", &text).expect("the test's scenario loads")
}

/// The seeds in `seeds` on which the client reading `clock` lets a stale
/// write through, and each seed's trace hash.
fn failing(clock: LeaseClock, seeds: std::ops::Range<u64>) -> (Vec<u64>, Vec<String>) {
    let s = scenario(clock);
    let mut failing = Vec::new();
    let mut hashes = Vec::new();
    for seed in seeds {
        let run = run(&scenario_for_seed(&s, seed), seed);
        assert!(
            matches!(run.report.verdict, Verdict::Safe | Verdict::Violation),
            "{clock:?}, seed {seed}: {:?}",
            run.report.verdict
        );
        if run.report.verdict == Verdict::Violation {
            failing.push(seed);
        }
        hashes.push(run.result.journal.hash());
    }
    (failing, hashes)
}

#[test]
fn a_lease_checked_on_std_clocks_fails_where_one_checked_on_the_nodes_clocks_does() {
    const SEEDS: std::ops::Range<u64> = 0..300;
    let [system, instant, wall, mono] = LeaseClock::ALL.map(|c| failing(c, SEEDS));
    assert!(
        !wall.0.is_empty(),
        "no seed failed: the test would prove nothing"
    );
    assert!(
        !mono.0.is_empty(),
        "no seed failed: the test would prove nothing"
    );
    // The wall clock's jumps back fail seeds the monotonic clock does not:
    // the two readings are told apart.
    assert!(wall.0.len() > mono.0.len(), "{wall:?} {mono:?}");
    assert_eq!(system.0, wall.0, "SystemTime::now() is not the wall clock");
    assert_eq!(
        instant.0, mono.0,
        "Instant::now() is not the monotonic clock"
    );
    // Run for run, the same journal.
    assert_eq!(system.1, wall.1);
    assert_eq!(instant.1, mono.1);
}
