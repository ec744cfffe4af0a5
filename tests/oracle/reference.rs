//! A second oracle, written straight from the definitions: brute force over
//! the journal's events, quadratic or worse, sharing no code with
//! `fencesim::oracle`. It judges stale writes, token regressions, zombie and
//! late writes, lost updates and double grants, through lock restarts that reuse lease
//! ids; the property test below and `explored.rs` hold the real oracle to
//! it.

use fencesim::oracle::{check, OracleConfig};
use proptest::prelude::*;
use sim::journal::{Event, Journal};

/// A token-only write: announced by `fenced`, or `wrote` with `op = fence`,
/// before position `before`.
fn is_fence(ev: &[Event], id: &str, before: usize) -> bool {
    ev[..before].iter().any(|e| {
        e.str("write") == Some(id)
            && (e.kind == "fenced" || (e.kind == "wrote" && e.str("op") == Some("fence")))
    })
}

/// The grant the write accepted (or rejected) at `p` was made under: its
/// client's last `acquired` before the write's `wrote`.
fn grant_of(ev: &[Event], p: usize) -> Option<usize> {
    let id = ev[p].str("write")?;
    let w = ev
        .iter()
        .rposition(|e| e.kind == "wrote" && e.str("write") == Some(id))?;
    (0..w).rev().find(|&g| ev[g].is(&ev[w].node, "acquired"))
}

/// A storage acceptance the checks judge (not a fence's).
fn judged(ev: &[Event], p: usize) -> bool {
    ev[p].kind == "accepted" && !is_fence(ev, ev[p].str("write").unwrap_or(""), p)
}

/// An acceptance of a write the same storage node had accepted before.
fn copy(ev: &[Event], p: usize) -> bool {
    let id = ev[p].str("write").unwrap_or("");
    !id.is_empty()
        && (0..p)
            .any(|q| judged(ev, q) && ev[q].node == ev[p].node && ev[q].str("write") == Some(id))
}

/// Whether the acceptance at `p` comes after the same storage node accepted
/// a write made under a grant newer than `p`'s.
fn superseded_at(ev: &[Event], p: usize) -> bool {
    let Some(g) = grant_of(ev, p) else {
        return false;
    };
    (0..p).any(|q| {
        judged(ev, q)
            && ev[q].node == ev[p].node
            && grant_of(ev, q).is_some_and(|h| newer(ev, h, g))
    })
}

/// Stale writes: an `accepted` event with no `precondition`, for a write
/// made under a grant, after the same storage node accepted a write made
/// under a newer grant; a write counted once per storage node however many
/// copies of it land so.
pub fn stale_writes(journal: &Journal) -> u64 {
    let ev = journal.events();
    let stale_at =
        |p: usize| judged(ev, p) && ev[p].get("precondition").is_none() && superseded_at(ev, p);
    (0..ev.len())
        .filter(|&p| stale_at(p))
        .filter(|&p| {
            let id = ev[p].str("write").unwrap_or("");
            id.is_empty()
                || !(0..p).any(|q| {
                    stale_at(q) && ev[q].node == ev[p].node && ev[q].str("write") == Some(id)
                })
        })
        .count() as u64
}

/// Whether lock node `node` granted (client, lease) at some point in
/// (`from`, `to`) after having granted it before: it restarted and numbers
/// its leases afresh, and the second grant is a new one.
fn regranted(ev: &[Event], node: &str, client: &str, lease: u64, from: usize, to: usize) -> bool {
    let granted = |x: usize| {
        ev[x].kind == "granted"
            && ev[x].node == node
            && ev[x].str("client") == Some(client)
            && ev[x].u64("lease") == Some(lease)
    };
    (from + 1..to).any(|x| granted(x) && (0..x).any(granted))
}

/// Where grant `a` (an `acquired`) ends at the lock: the `ends`-th lock
/// `expired`/`released` that belongs to it. An end naming its client and
/// lease belongs to the latest `acquired` of them before it, or when there
/// is none, to the first after it (the grant arrived over); never across a
/// second `granted` of that lease by the end's own node (a restart).
fn end_of(ev: &[Event], a: usize) -> Option<usize> {
    let ends = ev[a].u64("ends").unwrap_or(1).max(1) as usize;
    let lease = ev[a].u64("lease")?;
    let client = ev[a].node.as_str();
    let same = |x: usize| {
        ev[x].kind == "acquired" && ev[x].node == client && ev[x].u64("lease") == Some(lease)
    };
    (0..ev.len())
        .filter(|&e| {
            (ev[e].kind == "expired" || ev[e].kind == "released")
                && ev[e].str("client") == Some(client)
                && ev[e].u64("lease") == Some(lease)
        })
        .filter(|&e| {
            let node = ev[e].node.as_str();
            if e > a {
                !(a + 1..e).any(same) && !regranted(ev, node, client, lease, a, e)
            } else {
                // The acquired grant before it, if any, was granted anew since.
                let before = (0..e).rev().find(|&x| same(x));
                before.map_or(true, |b| regranted(ev, node, client, lease, b, e))
                    && !(e + 1..a).any(same)
                    && !regranted(ev, node, client, lease, e, a)
            }
        })
        .nth(ends - 1)
}

/// Zombie and late writes: the first acceptance on a storage node of a write
/// whose grant had ended, or been superseded by a grant the lock made
/// before it, while no write under a newer grant had been accepted there.
/// A zombie when some other client's newer grant, made before it, had not
/// ended; else late.
pub fn untimely_writes(journal: &Journal) -> (u64, u64) {
    let ev = journal.events();
    let grants: Vec<usize> = (0..ev.len())
        .filter(|&a| ev[a].kind == "acquired")
        .collect();
    let (mut zombies, mut late) = (0, 0);
    for p in (0..ev.len()).filter(|&p| judged(ev, p) && !copy(ev, p) && !superseded_at(ev, p)) {
        let Some(g) = grant_of(ev, p) else { continue };
        let ended = end_of(ev, g).is_some_and(|e| e < p);
        let newer_made = grants.iter().any(|&h| made(ev, h).0 < p && newer(ev, h, g));
        if !ended && !newer_made {
            continue;
        }
        let holder = grants.iter().any(|&h| {
            ev[h].node != ev[g].node
                && made(ev, h).0 < p
                && newer(ev, h, g)
                && !end_of(ev, h).is_some_and(|e| e < p)
        });
        if holder {
            zombies += 1;
        } else {
            late += 1;
        }
    }
    (zombies, late)
}

/// Lost updates: per key, the increments applied (accepted by the storage,
/// or acknowledged with `ok`; each write once) less the key's final value.
pub fn lost_updates(journal: &Journal) -> u64 {
    let ev = journal.events();
    let announced = |id: &str| {
        ev.iter()
            .rposition(|e| e.kind == "wrote" && e.str("write") == Some(id))
    };
    let increment = |id: &str| announced(id).is_some_and(|w| ev[w].str("op") == Some("increment"));
    if !ev
        .iter()
        .any(|e| e.kind == "wrote" && e.str("op") == Some("increment"))
    {
        return 0;
    }
    // The key of an announced write: that of its first acceptance, else "".
    let key_of = |id: &str| match announced(id) {
        Some(_) => (0..ev.len())
            .find(|&p| judged(ev, p) && ev[p].str("write") == Some(id))
            .map_or("", |p| ev[p].str("key").unwrap_or("")),
        None => "",
    };
    let key_at = |p: usize| ev[p].str("key").unwrap_or("");
    let mut keys: Vec<&str> = (0..ev.len())
        .filter(|&p| judged(ev, p))
        .map(key_at)
        .collect();
    keys.push("");
    keys.sort();
    keys.dedup();
    let mut lost = 0;
    for key in keys {
        let final_value = (0..ev.len())
            .rev()
            .filter(|&p| judged(ev, p) && key_at(p) == key)
            .find_map(|p| ev[p].i64("value"))
            .unwrap_or(0);
        let mut applied: Vec<&str> = (0..ev.len())
            .filter_map(|p| {
                let id = ev[p].str("write")?;
                let accepted = judged(ev, p) && key_at(p) == key && increment(id);
                let acked = ev[p].kind == "acked"
                    && ev[p].bool("ok") == Some(true)
                    && ev[p]
                        .str("op")
                        .map_or(increment(id), |op| op == "increment")
                    && key_of(id) == key;
                (accepted || acked).then_some(id)
            })
            .collect();
        applied.sort();
        applied.dedup();
        lost += (applied.len() as u64).saturating_sub(u64::try_from(final_value).unwrap_or(0));
    }
    lost
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
    let of_this = |g: usize| {
        ev[g].kind == "granted"
            && ev[g].str("client") == Some(&ev[a].node)
            && ev[g].u64("lease").is_some()
            && ev[g].u64("lease") == ev[a].u64("lease")
    };
    // A node's later `granted` of the same lease (after a restart) replaces
    // its earlier one.
    let granted: Vec<usize> = (0..a)
        .filter(|&g| of_this(g) && !(g + 1..a).any(|h| of_this(h) && ev[h].node == ev[g].node))
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

/// Double grants: a lock node's `granted` to a client while an earlier
/// `granted` of that node to another client has no `expired`/`released` of
/// the same node, client and lease between the two.
pub fn double_grants(journal: &Journal) -> u64 {
    let ev = journal.events();
    let granted =
        |e: &Event| e.kind == "granted" && e.get("client").is_some() && e.u64("lease").is_some();
    let ends = |e: &Event, g: &Event| {
        (e.kind == "expired" || e.kind == "released")
            && e.node == g.node
            && e.str("client") == g.str("client")
            && e.u64("lease") == g.u64("lease")
    };
    (0..ev.len())
        .filter(|&p| granted(&ev[p]))
        .filter(|&p| {
            (0..p).any(|q| {
                granted(&ev[q])
                    && ev[q].node == ev[p].node
                    && ev[q].str("client") != ev[p].str("client")
                    && !(q + 1..p).any(|x| ends(&ev[x], &ev[q]))
            })
        })
        .count() as u64
}

/// The oracle's counts of what the reference judges: (stale, regressions,
/// zombies, late, lost updates, double grants).
fn oracle_counts(journal: &Journal) -> (u64, u64, u64, u64, u64, u64) {
    let r = check(journal, &OracleConfig::default());
    (
        r.stale_writes,
        r.token_regressions,
        r.zombie_writes,
        r.late_writes,
        r.lost_updates,
        r.double_grants,
    )
}

/// The reference's counts, in [`oracle_counts`]' order.
fn reference_counts(journal: &Journal) -> (u64, u64, u64, u64, u64, u64) {
    let (zombies, late) = untimely_writes(journal);
    (
        stale_writes(journal),
        token_regressions(journal),
        zombies,
        late,
        lost_updates(journal),
        double_grants(journal),
    )
}

/// Asserts that the oracle's counts are the reference's, naming `what` when
/// they are not.
pub fn assert_agrees(journal: &Journal, what: &str) {
    assert_eq!(
        oracle_counts(journal),
        reference_counts(journal),
        "oracle (stale, regressions, zombies, late, lost, double grants) vs reference, {what}"
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
    /// A lock node's counter goes back (a restart without persistence); the
    /// single node `lock` also numbers its leases afresh.
    Reset {
        node: u8,
    },
    ClientRelease {
        client: u8,
    },
    Write {
        client: u8,
        increment: bool,
    },
    Accept {
        pick: u8,
        storage: u8,
        precondition: bool,
        value: u8,
    },
    /// A client hears the storage's answer (`ok` or not) to a write.
    Ack {
        pick: u8,
        ok: bool,
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
        4 => (c, proptest::bool::weighted(0.3))
            .prop_map(|(client, increment)| Act::Write { client, increment }),
        5 => (any::<u8>(), 0u8..2, proptest::bool::weighted(0.25), 0u8..4)
            .prop_map(|(pick, storage, precondition, value)| {
                Act::Accept { pick, storage, precondition, value }
            }),
        2 => (any::<u8>(), proptest::bool::weighted(0.7))
            .prop_map(|(pick, ok)| Act::Ack { pick, ok }),
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
            Act::Reset { node } => {
                counters[node as usize] = 1;
                // The single lock node restarts without persistence: it
                // numbers its leases afresh, so lease ids come again.
                if node == 0 {
                    leases = [0; 3];
                }
            }
            Act::ClientRelease { client } => {
                let lease = leases[client as usize];
                events.push(e(&name(client), "released").with("lease", lease));
            }
            Act::Write { client, increment } => {
                let id = format!("{}/{}", name(client), writes.len());
                writes.push(id.clone());
                let op = if increment { "increment" } else { "put" };
                let mut w = e(&name(client), "wrote").with("write", id).with("op", op);
                if let Some(tok) = tokens[client as usize] {
                    w = w.with("token", tok);
                }
                events.push(w);
            }
            Act::Accept {
                pick: p,
                storage,
                precondition,
                value,
            } => {
                let node = if storage == 0 { "storage" } else { "storage2" };
                // Two keys, so that per-key counting is exercised.
                let key = if value % 2 == 0 { "x" } else { "y" };
                let mut a = e(node, "accepted")
                    .with("write", pick(p, &writes))
                    .with("key", key)
                    .with("value", i64::from(value / 2));
                if precondition {
                    a = a.with("precondition", "version 0");
                }
                events.push(a);
            }
            Act::Reject { pick: p } => {
                events.push(e("storage", "rejected").with("write", pick(p, &writes)))
            }
            Act::Ack { pick: p, ok } => {
                let id = pick(p, &writes);
                let client = id.split('/').next().unwrap_or("ghost").to_owned();
                events.push(e(&client, "acked").with("write", id).with("ok", ok));
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
        prop_assert_eq!(oracle_counts(&journal), reference_counts(&journal));
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
    // A write after its own lease: late with nobody else holding, a zombie
    // over another client's live grant.
    let alone = super::J::new()
        .acquired(4, "client1", 1, None)
        .expired(10_004, "client1", 1)
        .wrote(12_000, "client1", "client1/1", None)
        .accepted(12_010, "client1/1", None);
    assert_eq!(untimely_writes(&alone.build()), (0, 1));
    let over = super::J::new()
        .acquired(4, "client1", 1, None)
        .expired(10_004, "client1", 1)
        .acquired(10_006, "client2", 2, None)
        .wrote(12_000, "client1", "client1/1", None)
        .accepted(12_010, "client1/1", None);
    assert_eq!(untimely_writes(&over.build()), (1, 0));
    // Two increments applied, the key at 1, though one client never heard.
    let hidden = super::J::new()
        .acquired(0, "client1", 1, None)
        .incremented(1, "client1", "client1/1", 1)
        .accepted_value(2, "client1/1", None, "x", 1)
        .incremented(3, "client1", "client1/2", 1)
        .accepted_value(4, "client1/2", None, "x", 1);
    assert_eq!(lost_updates(&hidden.build()), 1);
}

#[test]
fn generated_journals_reach_every_case() {
    // The generator is only worth its agreement if it produces stale writes,
    // regressions, majorities and grants heard late.
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let strategy = proptest::collection::vec(act(), 0..80);
    let (mut stale, mut regressions, mut late, mut majority) = (0, 0, 0, 0);
    let (mut zombies, mut late_writes, mut lost, mut reused, mut doubled) = (0, 0, 0, 0, 0);
    for _ in 0..600 {
        let acts = strategy.new_tree(&mut runner).unwrap().current();
        let j = journal(&acts);
        stale += u64::from(stale_writes(&j) > 0);
        let (z, l) = untimely_writes(&j);
        zombies += u64::from(z > 0);
        late_writes += u64::from(l > 0);
        lost += u64::from(lost_updates(&j) > 0);
        doubled += u64::from(double_grants(&j) > 0);
        // A lock node granted the same client the same lease id twice.
        let grants: Vec<_> = j
            .events()
            .iter()
            .filter(|e| e.kind == "granted")
            .map(|e| (e.node.clone(), e.str("client"), e.u64("lease")))
            .collect();
        reused += u64::from((1..grants.len()).any(|k| grants[..k].contains(&grants[k])));
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
    assert!(
        zombies > 30 && late_writes > 30 && lost > 30 && reused > 30 && doubled > 30,
        "{zombies} {late_writes} {lost} {reused} {doubled}"
    );
}
