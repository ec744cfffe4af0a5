//! A second oracle for the headline properties, `stale_write` and
//! `token_regression`, written straight from their definitions: brute force
//! over the journal's events, quadratic or worse, sharing no code with
//! `fencesim::oracle`. The property test below and `explored.rs` hold the
//! real oracle to it.

use fencesim::oracle::{check, OracleConfig};
use proptest::prelude::*;
use sim::journal::{Event, Journal};

/// Stale writes: an `accepted` event with no `precondition`, for a write
/// made under a grant, after the same storage node accepted a write made
/// under a newer grant.
pub fn stale_writes(journal: &Journal) -> u64 {
    let ev = journal.events();
    let is_fence = |id: &str, before: usize| {
        ev[..before].iter().any(|e| {
            e.str("write") == Some(id)
                && (e.kind == "fenced" || (e.kind == "wrote" && e.str("op") == Some("fence")))
        })
    };
    // The grant a write was made under: its client's last `acquired` before it.
    let grant_of = |p: usize| -> Option<usize> {
        let id = ev[p].str("write")?;
        let w = ev
            .iter()
            .rposition(|e| e.kind == "wrote" && e.str("write") == Some(id))?;
        (0..w).rev().find(|&g| ev[g].is(&ev[w].node, "acquired"))
    };
    let judged =
        |p: usize| ev[p].kind == "accepted" && !is_fence(ev[p].str("write").unwrap_or(""), p);
    let mut stale = 0;
    for p in (0..ev.len()).filter(|&p| judged(p) && ev[p].get("precondition").is_none()) {
        let Some(g) = grant_of(p) else { continue };
        stale += u64::from((0..p).any(|q| {
            judged(q) && ev[q].node == ev[p].node && grant_of(q).is_some_and(|h| newer(ev, h, g))
        }));
    }
    stale
}

/// Whether the grant `acquired` at `a` is newer than the one at `b`: by
/// token when both carry one from a single lock node (an equal token only
/// when made later for another client), else by where the lock made them.
fn newer(ev: &[Event], a: usize, b: usize) -> bool {
    match (made(ev, a), made(ev, b)) {
        ((x, true), (y, true)) => {
            let (ta, tb) = (ev[a].u64("token"), ev[b].u64("token"));
            ta > tb || (ta == tb && ev[a].node != ev[b].node && x > y)
        }
        ((x, _), (y, _)) => x > y,
    }
}

/// Where the lock made the grant `acquired` at `a`: the (k − ends + 1)-th of
/// the k `granted` events for its client and lease before it (the
/// majority-th of a majority), else `a` itself; and whether it is ordered by
/// its token (it has one, from one lock node, and `ends` is 1).
fn made(ev: &[Event], a: usize) -> (usize, bool) {
    let ends = ev[a].u64("ends").unwrap_or(1).max(1) as usize;
    let granted: Vec<usize> = (0..a)
        .filter(|&g| {
            ev[g].kind == "granted"
                && ev[g].str("client") == Some(&ev[a].node)
                && ev[g].u64("lease").is_some()
                && ev[g].u64("lease") == ev[a].u64("lease")
        })
        .collect();
    let place = granted.len().checked_sub(ends).map_or(a, |k| granted[k]);
    let one_node = granted.iter().all(|&g| ev[g].node == ev[granted[0]].node);
    (place, ev[a].u64("token").is_some() && one_node && ends == 1)
}

/// Token regressions: a `granted` token not greater than one the same lock
/// node granted before.
pub fn token_regressions(journal: &Journal) -> u64 {
    let ev = journal.events();
    let granted = |e: &Event| e.kind == "granted" && e.get("client").is_some();
    let regressed = |p: usize| {
        let t = ev[p].u64("token");
        (0..p).any(|q| granted(&ev[q]) && ev[q].node == ev[p].node && ev[q].u64("token") >= t)
    };
    (0..ev.len())
        .filter(|&p| granted(&ev[p]) && ev[p].u64("token").is_some() && regressed(p))
        .count() as u64
}

/// Asserts that the oracle's stale-write and token-regression counts are the
/// reference's, naming `what` when they are not.
pub fn assert_agrees(journal: &Journal, what: &str) {
    let report = check(journal, &OracleConfig::default());
    let got = (report.stale_writes, report.token_regressions);
    let want = (stale_writes(journal), token_regressions(journal));
    assert_eq!(
        got, want,
        "oracle (stale, regressions) vs reference, {what}"
    );
}

/// One step of a made-up but plausible run.
#[derive(Clone, Debug)]
enum Act {
    /// The lock grants `client` a new lease: on the single node `lock`, or
    /// on 2 or 3 of `lock1`…`lock3` (a majority of 3), each node with its
    /// own counter.
    Grant {
        client: u8,
        nodes: u8,
        token: bool,
    },
    /// A granted lease reaches its client (any pending one: grants can
    /// arrive out of order, and late).
    Hear {
        pick: u8,
    },
    /// A lock node ends a lease it granted.
    End {
        pick: u8,
        expired: bool,
    },
    /// A lock node's counter goes back (a restart without persistence).
    Reset {
        node: u8,
    },
    ClientRelease {
        client: u8,
    },
    Write {
        client: u8,
    },
    Accept {
        pick: u8,
        storage: u8,
        precondition: bool,
    },
    Reject {
        pick: u8,
    },
}

fn act() -> impl Strategy<Value = Act> {
    let c = 0u8..3;
    prop_oneof![
        3 => (c.clone(), prop_oneof![3 => Just(1u8), 1 => 2u8..4], proptest::bool::weighted(0.7))
            .prop_map(|(client, nodes, token)| Act::Grant { client, nodes, token }),
        3 => any::<u8>().prop_map(|pick| Act::Hear { pick }),
        2 => (any::<u8>(), any::<bool>()).prop_map(|(pick, expired)| Act::End { pick, expired }),
        1 => (0u8..4).prop_map(|node| Act::Reset { node }),
        1 => c.clone().prop_map(|client| Act::ClientRelease { client }),
        4 => c.prop_map(|client| Act::Write { client }),
        5 => (any::<u8>(), 0u8..2, proptest::bool::weighted(0.25))
            .prop_map(|(pick, storage, precondition)| Act::Accept { pick, storage, precondition }),
        2 => any::<u8>().prop_map(|pick| Act::Reject { pick }),
    ]
}

/// The journal of `acts`, one event or more per act, 1 ms apart.
fn journal(acts: &[Act]) -> Journal {
    const NODES: [&str; 4] = ["lock", "lock1", "lock2", "lock3"];
    let mut counters = [1u64; 4];
    let mut leases = [0u64; 3];
    // Grants sent, not yet heard: (client, lease, token, ends).
    let mut pending: Vec<(u8, u64, Option<u64>, u64)> = Vec::new();
    // Lock-side grants, for ends: (node, client, lease).
    let mut granted: Vec<(usize, u8, u64)> = Vec::new();
    let mut tokens = [None; 3];
    let mut writes: Vec<String> = Vec::new();
    let mut events = Vec::new();
    for (i, act) in acts.iter().enumerate() {
        let t = i as u64 * 1_000_000;
        let e = |node: &str, kind: &str| Event::new(0, t, node, t as i64, kind);
        let name = |c: u8| format!("client{c}");
        let pick = |p: u8, writes: &[String]| match writes.len() {
            n if n == 0 || p % 8 == 0 => "ghost/1".to_owned(),
            n => writes[p as usize % n].clone(),
        };
        match *act {
            Act::Grant {
                client,
                nodes,
                token,
            } => {
                leases[client as usize] += 1;
                let lease = leases[client as usize];
                let on: Vec<usize> = if nodes == 1 {
                    vec![0]
                } else {
                    (1..=nodes as usize).collect()
                };
                let mut largest = None;
                for &n in &on {
                    let mut g = e(NODES[n], "granted")
                        .with("client", name(client))
                        .with("lease", lease);
                    if token {
                        g = g.with("token", counters[n]);
                        largest = largest.max(Some(counters[n]));
                        counters[n] += 1;
                    }
                    events.push(g);
                    granted.push((n, client, lease));
                }
                let ends = if on.len() > 1 { on.len() as u64 - 1 } else { 1 };
                pending.push((client, lease, largest, ends));
            }
            Act::Hear { pick } if !pending.is_empty() => {
                let (client, lease, token, ends) = pending.remove(pick as usize % pending.len());
                tokens[client as usize] = token;
                let mut a = e(&name(client), "acquired").with("lease", lease);
                if let Some(tok) = token {
                    a = a.with("token", tok);
                }
                if ends > 1 {
                    a = a.with("ends", ends);
                }
                events.push(a);
            }
            Act::End { pick, expired } if !granted.is_empty() => {
                let (n, client, lease) = granted[pick as usize % granted.len()];
                let kind = if expired { "expired" } else { "released" };
                events.push(
                    e(NODES[n], kind)
                        .with("client", name(client))
                        .with("lease", lease),
                );
            }
            Act::Reset { node } => counters[node as usize] = 1,
            Act::ClientRelease { client } => {
                let lease = leases[client as usize];
                events.push(e(&name(client), "released").with("lease", lease));
            }
            Act::Write { client } => {
                let id = format!("{}/{}", name(client), writes.len());
                writes.push(id.clone());
                let mut w = e(&name(client), "wrote")
                    .with("write", id)
                    .with("op", "put");
                if let Some(tok) = tokens[client as usize] {
                    w = w.with("token", tok);
                }
                events.push(w);
            }
            Act::Accept {
                pick: p,
                storage,
                precondition,
            } => {
                let node = if storage == 0 { "storage" } else { "storage2" };
                let mut a = e(node, "accepted").with("write", pick(p, &writes));
                if precondition {
                    a = a.with("precondition", "version 0");
                }
                events.push(a);
            }
            Act::Reject { pick: p } => {
                events.push(e("storage", "rejected").with("write", pick(p, &writes)))
            }
            Act::Hear { .. } | Act::End { .. } => {}
        }
    }
    Journal::from_events(events)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]
    #[test]
    fn oracle_agrees_with_the_reference(acts in proptest::collection::vec(act(), 0..80)) {
        let journal = journal(&acts);
        let report = check(&journal, &OracleConfig::default());
        prop_assert_eq!(report.stale_writes, stale_writes(&journal));
        prop_assert_eq!(report.token_regressions, token_regressions(&journal));
    }
}

#[test]
fn the_reference_sees_what_the_stories_show() {
    // Not only agreement: on hand-made stories the reference finds what they
    // show, so the two cannot agree by both finding nothing.
    use super::journal::fig_9_6;
    assert_eq!(stale_writes(&fig_9_6(false).build()), 1);
    assert_eq!(stale_writes(&fig_9_6(true).build()), 0);
    let regress = super::J::new()
        .granted(0, "lock", "client1", 1, 34)
        .granted(1, "lock", "client2", 2, 33);
    assert_eq!(token_regressions(&regress.build()), 1);
}

#[test]
fn generated_journals_reach_every_case() {
    // The generator is only worth its agreement if it produces stale writes,
    // regressions, majorities and grants heard late.
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let strategy = proptest::collection::vec(act(), 0..80);
    let (mut stale, mut regressions, mut late, mut majority) = (0, 0, 0, 0);
    for _ in 0..300 {
        let acts = strategy.new_tree(&mut runner).unwrap().current();
        let j = journal(&acts);
        stale += u64::from(stale_writes(&j) > 0);
        regressions += u64::from(token_regressions(&j) > 0);
        majority += u64::from(j.events().iter().any(|e| e.get("ends").is_some()));
        // A client hears of its grant after the lock made another one.
        let ev = j.events();
        late += u64::from((0..ev.len()).any(|a| {
            ev[a].kind == "acquired"
                && ev[..a]
                    .iter()
                    .rev()
                    .take_while(|e| e.kind != "acquired")
                    .any(|e| e.kind == "granted" && e.str("client") != Some(ev[a].node.as_str()))
        }));
    }
    assert!(stale > 30 && regressions > 30, "{stale} {regressions}");
    assert!(majority > 30 && late > 30, "{majority} {late}");
}
