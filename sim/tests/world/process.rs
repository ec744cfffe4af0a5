//! Hosted processes: async code on a node runs on the node's own clock, over
//! the journaled network, under every fault, and a process that awaits what
//! the world does not drive ends its run with an explanation.

use std::time::Duration;

use sim::fault::{ClockChange, Crash, Fault, Pause};
use sim::process::{Elapsed, Process};
use sim::{run, Message, Outcome, WorldBuilder};

use crate::actors::{Echo, Msg};
use crate::{after, assert_at, at, find, limits, ms, ms_ns, net_fixed, only};

/// A process that pings `to` `n` times, `every` apart on its own clock,
/// journaling `sent` before each ping and `pong` for each answer.
fn pinger(to: &'static str, n: u64, every: Duration) -> Process<Msg> {
    Process::new(move |h| async move {
        let to = h.node(to).unwrap();
        let answers = h.spawn({
            let h = h.clone();
            async move {
                for _ in 0..n {
                    let (_, m) = h.recv().await;
                    if let Msg::Pong(k) = m {
                        sim::emit!("pong", n = k);
                    }
                }
            }
        });
        for i in 0..n {
            sim::emit!("sent", n = i);
            h.send(to, Msg::Ping(i));
            h.sleep(every).await;
        }
        answers.await;
    })
}

#[test]
fn a_process_talks_over_the_journaled_network_and_sleeps_on_its_clock() {
    let r = run(1, || {
        let mut w = WorldBuilder::<Msg>::new(limits(ms(10_000)));
        w.node("a", pinger("echo", 3, ms(100)));
        w.node("echo", Echo);
        w.network(net_fixed(ms(10)));
        w
    });
    assert_eq!(r.outcome, Outcome::Completed);
    let j = &r.journal;
    let sent = find(j, "a", "sent");
    assert_eq!(sent.len(), 3);
    assert_at(sent[1].t_ns, 100);
    assert_at(sent[2].t_ns, 200);
    // Every message is journaled as an actor's is.
    assert_eq!(find(j, "a", "send").len(), 3);
    assert_eq!(find(j, "echo", "deliver").len(), 3);
    let pongs = find(j, "a", "pong");
    assert_eq!(pongs.len(), 3);
    assert_at(pongs[0].t_ns, 20);
}

#[test]
fn a_sleep_runs_on_the_nodes_clock_at_its_rate() {
    // a's clocks run at half speed from the start: 100 ms of its sleep take
    // 200 ms of true time.
    let r = run(1, || {
        let mut w = WorldBuilder::<Msg>::new(limits(ms(10_000)));
        w.node(
            "a",
            Process::new(|h| async move {
                h.sleep(ms(100)).await;
                sim::emit!("woke", mono_ns = h.mono_ns());
            }),
        );
        w.fault(at(
            Duration::ZERO,
            Fault::Clock(ClockChange {
                node: "a".into(),
                offset_ns: None,
                rate: Some(0.5),
                jump_ns: None,
            }),
        ));
        w
    });
    assert_eq!(r.outcome, Outcome::Completed);
    let woke = only(&r.journal, "a", "woke");
    assert_at(woke.t_ns, 200);
    let mono = woke.i64("mono_ns").unwrap();
    assert!(
        (ms_ns(100) as i64..ms_ns(101) as i64).contains(&mono),
        "{mono}"
    );
}

#[test]
fn a_sleeper_is_rearmed_when_its_nodes_rate_changes() {
    // a sleeps 1 s; at 500 ms true time its clock halves: the other 500 ms
    // of its sleep take 1 s.
    let r = run(1, || {
        let mut w = WorldBuilder::<Msg>::new(limits(ms(10_000)));
        w.node(
            "a",
            Process::new(|h| async move {
                h.sleep(ms(1_000)).await;
                sim::emit!("woke");
            }),
        );
        w.fault(at(
            ms(500),
            Fault::Clock(ClockChange {
                node: "a".into(),
                offset_ns: None,
                rate: Some(0.5),
                jump_ns: None,
            }),
        ));
        w
    });
    assert_at(only(&r.journal, "a", "woke").t_ns, 1_500);
}

#[test]
fn timeout_gives_up_on_the_nodes_clock_and_passes_an_answer_in_time() {
    let r = run(1, || {
        let mut w = WorldBuilder::<Msg>::new(limits(ms(10_000)));
        w.node(
            "a",
            Process::new(|h| async move {
                let echo = h.node("echo").unwrap();
                h.send(echo, Msg::Ping(1));
                // The answer takes 20 ms: 5 ms is too short, 50 ms enough.
                let early = h.timeout(ms(5), h.recv()).await;
                assert_eq!(early.map(|_| ()), Err(Elapsed));
                sim::emit!("gave_up");
                let late = h.timeout(ms(50), h.recv()).await;
                assert!(matches!(late, Ok((_, Msg::Pong(1)))));
                sim::emit!("answered");
            }),
        );
        w.node("echo", Echo);
        w.network(net_fixed(ms(10)));
        w
    });
    assert_eq!(r.outcome, Outcome::Completed, "{}", r.journal.to_jsonl());
    assert_at(only(&r.journal, "a", "gave_up").t_ns, 5);
    assert_at(only(&r.journal, "a", "answered").t_ns, 20);
}

#[test]
fn a_pause_fired_by_a_process_event_holds_the_rest_of_its_step() {
    // The pause fires at a's first `sent`, before the ping that the same
    // step sends right after it: the ping leaves when a resumes.
    let r = run(1, || {
        let mut w = WorldBuilder::<Msg>::new(limits(ms(10_000)));
        w.node("a", pinger("echo", 1, ms(100)));
        w.node("echo", Echo);
        w.network(net_fixed(ms(10)));
        w.fault(after(
            "a",
            "sent",
            1,
            Duration::ZERO,
            Fault::Pause(Pause {
                node: "a".into(),
                duration: ms(1_000),
            }),
        ));
        w
    });
    assert_eq!(r.outcome, Outcome::Completed);
    let j = &r.journal;
    let sent = only(j, "a", "sent");
    let pause = only(j, "a", "pause");
    let send = only(j, "a", "send");
    assert!(sent.seq < pause.seq && pause.seq < send.seq);
    assert_at(send.t_ns, 1_000);
    assert_at(only(j, "a", "pong").t_ns, 1_020);
}

#[test]
fn a_crash_drops_the_process_and_a_restart_runs_it_again_with_its_disk() {
    // Each incarnation counts its starts on disk, then sleeps; a crash at
    // 100 ms drops the sleeper (it never wakes), and the restart at 300 ms
    // starts over from the disk's count.
    let r = run(1, || {
        let mut w = WorldBuilder::<Msg>::new(limits(ms(10_000)));
        w.node(
            "a",
            Process::new(|h| async move {
                let disk = h.disk();
                let starts = disk.get_u64("starts").unwrap_or(0) + 1;
                disk.put_u64("starts", starts);
                sim::emit!("started", n = starts);
                h.sleep(ms(200)).await;
                sim::emit!("woke", n = starts);
            }),
        );
        w.fault(at(
            ms(100),
            Fault::Crash(Crash {
                node: "a".into(),
                restart_after: Some(ms(200)),
            }),
        ));
        w
    });
    assert_eq!(r.outcome, Outcome::Completed);
    let j = &r.journal;
    let started = find(j, "a", "started");
    assert_eq!(started.len(), 2);
    assert_eq!(started[1].u64("n"), Some(2));
    assert_at(started[1].t_ns, 300);
    let woke = only(j, "a", "woke");
    assert_eq!(woke.u64("n"), Some(2));
    assert_at(woke.t_ns, 500);
}

#[test]
fn a_crashed_process_drop_sends_nothing() {
    struct SendOnDrop(sim::process::Handle<Msg>, usize);
    impl Drop for SendOnDrop {
        fn drop(&mut self) {
            self.0.send(self.1, Msg::Ping(99));
        }
    }
    let r = run(1, || {
        let mut w = WorldBuilder::<Msg>::new(limits(ms(10_000)));
        w.node(
            "a",
            Process::new(|h| async move {
                let echo = h.node("echo").unwrap();
                let _guard = SendOnDrop(h.clone(), echo);
                h.sleep(ms(1_000)).await;
            }),
        );
        w.node("echo", Echo);
        w.fault(at(
            ms(100),
            Fault::Crash(Crash {
                node: "a".into(),
                restart_after: None,
            }),
        ));
        w
    });
    assert!(find(&r.journal, "a", "send").is_empty());
}

#[test]
fn spawned_tasks_run_beside_the_main_one_and_join() {
    let r = run(1, || {
        let mut w = WorldBuilder::<Msg>::new(limits(ms(10_000)));
        w.node(
            "a",
            Process::new(|h| async move {
                let slow = h.spawn({
                    let h = h.clone();
                    async move {
                        h.sleep(ms(300)).await;
                        sim::emit!("slow");
                        7u32
                    }
                });
                h.sleep(ms(100)).await;
                sim::emit!("fast");
                assert!(!slow.is_finished());
                let v = slow.await;
                sim::emit!("joined", v = v);
            }),
        );
        w
    });
    assert_eq!(r.outcome, Outcome::Completed);
    let j = &r.journal;
    assert_at(only(j, "a", "fast").t_ns, 100);
    assert_at(only(j, "a", "slow").t_ns, 300);
    let joined = only(j, "a", "joined");
    assert_eq!(joined.u64("v"), Some(7));
    assert_at(joined.t_ns, 300);
}

#[test]
fn recv_where_leaves_the_other_messages_for_later() {
    let r = run(1, || {
        let mut w = WorldBuilder::<Msg>::new(limits(ms(10_000)));
        w.node(
            "a",
            Process::new(|h| async move {
                let echo = h.node("echo").unwrap();
                h.send(echo, Msg::Ping(1));
                h.send(echo, Msg::Ping(2));
                let (_, second) = h.recv_where(|_, m| matches!(m, Msg::Pong(2))).await;
                let (_, first) = h.recv().await;
                sim::emit!("order", second = second.summary(), first = first.summary());
            }),
        );
        w.node("echo", Echo);
        w.network(net_fixed(ms(10)));
        w
    });
    let order = only(&r.journal, "a", "order");
    assert_eq!(order.str("second"), Some("pong 2"));
    assert_eq!(order.str("first"), Some("pong 1"));
}

#[test]
fn a_process_draws_from_the_seeded_generator() {
    use rand::Rng;
    let draws = |seed| {
        let r = run(seed, || {
            let mut w = WorldBuilder::<Msg>::new(limits(ms(10_000)));
            w.node(
                "a",
                Process::new(|h| async move {
                    let jitter = h.rng().gen_range(0..1_000u64);
                    sim::emit!("jitter", ms = jitter);
                }),
            );
            w
        });
        only(&r.journal, "a", "jitter").u64("ms").unwrap()
    };
    assert_eq!(draws(3), draws(3));
    assert!(
        (0..20)
            .map(draws)
            .collect::<std::collections::BTreeSet<_>>()
            .len()
            > 1
    );
}

#[test]
fn awaiting_a_real_timer_ends_the_run_with_an_explanation() {
    // madsim's own sleep runs on the one clock of every node, not this
    // node's: the wake-up comes from outside the node's steps.
    let r = run(1, || {
        let mut w = WorldBuilder::<Msg>::new(limits(ms(10_000)));
        w.node(
            "a",
            Process::new(|h| async move {
                let ticker = h.spawn({
                    let h = h.clone();
                    async move {
                        loop {
                            h.sleep(ms(50)).await;
                        }
                    }
                });
                madsim::time::sleep(ms(100)).await;
                sim::emit!("after_real_sleep");
                ticker.await;
            }),
        );
        w
    });
    let Outcome::Crashed { node, message } = &r.outcome else {
        panic!("expected the run to end as an error, got {:?}", r.outcome);
    };
    assert_eq!(node.as_deref(), Some("a"));
    assert!(
        message.contains("woken from outside the simulation"),
        "{message}"
    );
    assert!(find(&r.journal, "a", "after_real_sleep").is_empty());
}

#[test]
fn waiting_on_nothing_the_world_drives_ends_the_run_with_an_explanation() {
    let r = run(1, || {
        let mut w = WorldBuilder::<Msg>::new(limits(ms(10_000)));
        w.node(
            "a",
            Process::new(|_h| async move {
                std::future::pending::<()>().await;
            }),
        );
        w
    });
    let Outcome::Crashed { node, message } = &r.outcome else {
        panic!("expected the run to end as an error, got {:?}", r.outcome);
    };
    assert_eq!(node.as_deref(), Some("a"));
    assert!(
        message.contains("awaits something the simulation does not drive"),
        "{message}"
    );
}

#[test]
fn the_same_seed_gives_the_same_journal() {
    let once = |seed| {
        run(seed, || {
            let mut w = WorldBuilder::<Msg>::new(limits(ms(10_000)));
            w.node(
                "a",
                Process::new(|h| async move {
                    use rand::Rng;
                    let echo = h.node("echo").unwrap();
                    for i in 0..5 {
                        h.send(echo, Msg::Ping(i));
                        let wait = h.rng().gen_range(1..50u64);
                        let _ = h.timeout(ms(wait), h.recv()).await;
                    }
                }),
            );
            w.node("echo", Echo);
            w
        })
        .journal
        .to_jsonl()
    };
    assert_eq!(once(9), once(9));
    assert_ne!(once(9), once(10));
}

/// A retry loop written against the seam, as production code is: here it
/// runs on the node's clock.
async fn retry_until<E: fencesim_env::Env>(env: &E, every: Duration, done_at: Duration) -> u32 {
    let mut tries = 1;
    while env.now() < done_at {
        env.sleep(every + env.jitter(ms(10))).await;
        tries += 1;
    }
    tries
}

#[test]
fn code_generic_over_the_env_runs_on_the_nodes_clock() {
    // The node's clock runs at double speed: its 1 s of retries is 500 ms
    // of true time.
    let r = run(4, || {
        let mut w = WorldBuilder::<Msg>::new(limits(ms(10_000)));
        w.node(
            "a",
            Process::new(|h| async move {
                let tries = retry_until(&h, ms(100), ms(1_000)).await;
                sim::emit!("done", tries = tries);
            }),
        );
        w.fault(at(
            Duration::ZERO,
            Fault::Clock(ClockChange {
                node: "a".into(),
                offset_ns: None,
                rate: Some(2.0),
                jump_ns: None,
            }),
        ));
        w
    });
    assert_eq!(r.outcome, Outcome::Completed);
    let done = only(&r.journal, "a", "done");
    assert!(
        (500_000_000..560_000_000).contains(&done.t_ns),
        "{}",
        done.t_ns
    );
    assert!((9..=11).contains(&done.u64("tries").unwrap()));
}

#[test]
fn probes_are_journaled_as_the_nodes_events() {
    use fencesim_env::{Env, Probe, WriteOp};
    let r = run(1, || {
        let mut w = WorldBuilder::<Msg>::new(limits(ms(10_000)));
        w.node(
            "client1",
            Process::new(|h| async move {
                h.probe(Probe::Acquired {
                    lease: 1,
                    token: Some(33),
                    ttl: ms(10_000),
                });
                h.probe(Probe::Wrote {
                    write: "client1/1".into(),
                    token: Some(33),
                    value: 1,
                    op: WriteOp::Put,
                });
                h.probe(Probe::Acquired {
                    lease: 2,
                    token: None,
                    ttl: ms(500),
                });
            }),
        );
        w
    });
    let j = &r.journal;
    let acquired = find(j, "client1", "acquired");
    assert_eq!(acquired[0].u64("lease"), Some(1));
    assert_eq!(acquired[0].u64("token"), Some(33));
    assert_eq!(acquired[0].u64("ttl_ms"), Some(10_000));
    // A grant without a token has no `token` field, as fencesim's clients
    // journal it.
    assert!(acquired[1].fields.iter().all(|(k, _)| k != "token"));
    let wrote = only(j, "client1", "wrote");
    assert_eq!(wrote.str("write"), Some("client1/1"));
    assert_eq!(wrote.str("op"), Some("put"));
    assert_eq!(wrote.i64("value"), Some(1));
}

#[test]
fn a_run_whose_last_input_is_a_timer_cancelled_during_a_pause_completes() {
    // a asks echo and waits 100 ms for the answer, but is paused from 5 ms
    // to 1005 ms: the answer (20 ms) and the timeout's timer (105 ms) both
    // queue up. On resume the answer comes first, the process ends and
    // drops its timer, and the timer's queued input is the run's last: the
    // run is over then, not at its time limit.
    let r = run(1, || {
        let mut w = WorldBuilder::<Msg>::new(limits(ms(10_000)));
        w.node(
            "a",
            Process::new(|h| async move {
                let echo = h.node("echo").unwrap();
                h.send(echo, Msg::Ping(0));
                let answered = h.timeout(ms(100), h.recv()).await.is_ok();
                sim::emit!("answered", ok = answered);
            }),
        );
        w.node("echo", Echo);
        w.network(net_fixed(ms(10)));
        w.fault(at(
            ms(5),
            Fault::Pause(Pause {
                node: "a".into(),
                duration: ms(1_000),
            }),
        ));
        w
    });
    let answered = only(&r.journal, "a", "answered");
    assert_eq!(answered.bool("ok"), Some(true));
    assert_eq!(r.outcome, Outcome::Completed);
    assert!(r.sim_time < ms(1_100), "ended at {:?}", r.sim_time);
}
