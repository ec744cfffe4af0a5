//! The oracle against a naive reference: each definition written out
//! directly, quadratic and obviously right, on random journals.

use fencesim::oracle::{check, OracleConfig, Report, Verdict};
use proptest::prelude::*;
use sim::journal::{Event, Journal};

#[derive(Clone, Debug)]
enum Op {
    Acquire {
        client: u8,
        lease: u8,
        token: Option<u8>,
    },
    ClientRelease {
        client: u8,
    },
    Expire {
        client: u8,
        lease: u8,
    },
    LockRelease {
        client: u8,
        lease: u8,
    },
    Write {
        client: u8,
    },
    Accept {
        pick: u8,
        storage: u8,
    },
    Reject {
        pick: u8,
    },
}

fn op() -> impl Strategy<Value = Op> {
    let c = 0u8..3;
    let l = 0u8..4;
    prop_oneof![
        3 => (c.clone(), l.clone(), proptest::option::of(0u8..12))
            .prop_map(|(client, lease, token)| Op::Acquire { client, lease, token }),
        1 => c.clone().prop_map(|client| Op::ClientRelease { client }),
        1 => (c.clone(), l.clone()).prop_map(|(client, lease)| Op::Expire { client, lease }),
        1 => (c.clone(), l).prop_map(|(client, lease)| Op::LockRelease { client, lease }),
        3 => c.prop_map(|client| Op::Write { client }),
        4 => (any::<u8>(), 0u8..2).prop_map(|(pick, storage)| Op::Accept { pick, storage }),
        2 => any::<u8>().prop_map(|pick| Op::Reject { pick }),
    ]
}

fn journal(ops: &[Op]) -> Journal {
    let mut ids: Vec<String> = Vec::new();
    let mut events = Vec::new();
    for (i, op) in ops.iter().enumerate() {
        let t = i as u64 * 1_000_000;
        let e = |node: &str, kind: &str| Event::new(0, t, node, t as i64, kind);
        let name = |c: &u8| format!("client{c}");
        // One pick in eight names a write nobody announced.
        let pick = |p: &u8, ids: &[String]| match ids.len() {
            n if n == 0 || p % 8 == 0 => "ghost/1".to_owned(),
            n => ids[*p as usize % n].clone(),
        };
        // The lock hands the token out (in this made-up journal, just before
        // the client hears of it; the two can be far apart in real runs).
        if let Op::Acquire {
            client,
            lease,
            token: Some(tok),
        } = op
        {
            events.push(
                e("lock", "granted")
                    .with("client", name(client))
                    .with("lease", u64::from(*lease))
                    .with("token", u64::from(*tok)),
            );
        }
        events.push(match op {
            Op::Acquire {
                client,
                lease,
                token,
            } => {
                let ev = e(&name(client), "acquired").with("lease", u64::from(*lease));
                match token {
                    Some(tok) => ev.with("token", u64::from(*tok)),
                    None => ev,
                }
            }
            Op::ClientRelease { client } => e(&name(client), "released").with("lease", 0u64),
            Op::Expire { client, lease } => e("lock", "expired")
                .with("client", name(client))
                .with("lease", u64::from(*lease)),
            Op::LockRelease { client, lease } => e("lock", "released")
                .with("client", name(client))
                .with("lease", u64::from(*lease)),
            Op::Write { client } => {
                let id = format!("{}/{}", name(client), ids.len());
                ids.push(id.clone());
                e(&name(client), "wrote")
                    .with("write", id)
                    .with("op", "put")
            }
            Op::Accept { pick: p, storage } => {
                let node = if *storage == 0 { "storage" } else { "storage2" };
                e(node, "accepted").with("write", pick(p, &ids))
            }
            Op::Reject { pick: p } => e("storage", "rejected").with("write", pick(p, &ids)),
        });
    }
    Journal::from_events(events)
}

/// The reference counts, straight from the definitions.
fn reference(journal: &Journal, strict: bool) -> Report {
    let ev = journal.events();
    let grants: Vec<usize> = (0..ev.len())
        .filter(|&i| ev[i].kind == "acquired")
        .collect();
    let lease = |i: usize| ev[i].u64("lease");
    // Grant index of the write announced as `id`.
    let grant_of = |id: &str| -> Option<usize> {
        let w = ev
            .iter()
            .position(|e| e.kind == "wrote" && e.str("write") == Some(id))?;
        grants
            .iter()
            .rposition(|&g| g < w && ev[g].node == ev[w].node)
    };
    // Position of the end of grant `gi`.
    let end_of = |gi: usize| -> Option<usize> {
        let g = grants[gi];
        (0..ev.len()).find(|&e| {
            let is_end = ev[e].kind == "expired"
                || (ev[e].kind == "released" && ev[e].get("client").is_some());
            if !is_end || ev[e].str("client") != Some(&ev[g].node) || ev[e].u64("lease") != lease(g)
            {
                return false;
            }
            let same = |h: &usize| ev[*h].node == ev[g].node && lease(*h) == lease(g);
            match grants.iter().rposition(|h| *h < e && same(h)) {
                Some(nearest) => nearest == gi,
                // An end before any such grant belongs to the first one.
                None => grants.iter().position(same) == Some(gi),
            }
        })
    };
    let current_at = |gi: usize, p: usize| {
        grants.get(gi + 1).map_or(true, |&h| h > p) && end_of(gi).map_or(true, |e| e > p)
    };
    let (mut stale, mut zombie, mut false_rejections) = (0, 0, 0);
    let (mut accepted, mut rejected) = (0, 0);
    for p in 0..ev.len() {
        let grant = || grant_of(ev[p].str("write").unwrap());
        match ev[p].kind.as_str() {
            "accepted" => {
                accepted += 1;
                let Some(g) = grant() else { continue };
                let is_stale = (0..p).any(|q| {
                    ev[q].kind == "accepted"
                        && ev[q].node == ev[p].node
                        && grant_of(ev[q].str("write").unwrap()).is_some_and(|h| h > g)
                });
                if is_stale {
                    stale += 1;
                } else if !current_at(g, p) {
                    zombie += 1;
                }
            }
            "rejected" => {
                rejected += 1;
                if grant().is_some_and(|g| current_at(g, p)) {
                    false_rejections += 1;
                }
            }
            _ => {}
        }
    }
    let believed_until = |g: usize| {
        (g + 1..ev.len())
            .find(|&e| {
                ev[e].node == ev[g].node && (ev[e].kind == "acquired" || ev[e].kind == "released")
            })
            .unwrap_or(usize::MAX)
    };
    let mut overlapping = 0;
    let mut regressions = 0;
    for (hi, &h) in grants.iter().enumerate() {
        for &g in &grants[..hi] {
            overlapping += u64::from(ev[g].node != ev[h].node && believed_until(g) > h);
        }
    }
    // What the lock handed out: each `granted` token against the earlier
    // ones of the same lock node.
    let issued: Vec<usize> = (0..ev.len()).filter(|&i| ev[i].kind == "granted").collect();
    for (hi, &h) in issued.iter().enumerate() {
        if let Some(t) = ev[h].u64("token") {
            regressions +=
                u64::from(issued[..hi].iter().any(|&g| {
                    ev[g].node == ev[h].node && ev[g].u64("token").is_some_and(|s| s >= t)
                }));
        }
    }
    let violated = stale > 0 || regressions > 0 || (strict && zombie > 0);
    Report {
        verdict: if violated {
            Verdict::Violation
        } else {
            Verdict::Safe
        },
        stale_writes: stale,
        zombie_writes: zombie,
        token_regressions: regressions,
        lost_updates: 0,
        accepted_writes: accepted,
        rejected_writes: rejected,
        false_rejections,
        overlapping_leases: overlapping,
        violations: Vec::new(),
    }
}

proptest! {
    #[test]
    fn oracle_agrees_with_the_reference(ops in proptest::collection::vec(op(), 0..60), strict: bool) {
        let journal = journal(&ops);
        let got = check(&journal, &OracleConfig { strict });
        let want = reference(&journal, strict);
        let found = got.stale_writes + got.zombie_writes + got.token_regressions;
        prop_assert_eq!(got.violations.len() as u64, found);
        prop_assert!(got.violations.windows(2).all(|w| w[0].seq <= w[1].seq));
        prop_assert_eq!(Report { violations: Vec::new(), ..got }, want);
    }
}
