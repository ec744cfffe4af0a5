//! One sentence per journal event: what happened and what it means, given
//! who believed what just before and just after it. Every event kind a
//! bundled design or the world emits has its own; a kind this module does
//! not know reads `node: phrase.` (the lanes' phrase), which the teaching
//! tests refuse for any kind a bundled scenario produces.

use std::collections::BTreeMap;

use sim::events::{self as world, WorldEvent as W};
use sim::journal::Event;

use super::belief::{local_seconds, seconds, token_text, Ended, NodeState, View};
use super::lanes::describe;
use crate::events::{decoded, Decoded, DomainEvent as D, Op};
use crate::oracle::spans::{reason_words, HoldEnd};

/// The sentence for `e`, given the beliefs just before and just after it.
pub(super) fn sentence(
    e: &Event,
    before: View<'_>,
    after: View<'_>,
    sent: &BTreeMap<u64, (u64, String)>,
) -> String {
    let node = e.node.as_str();
    let token = e.u64("token");
    let field = |name: &str| e.get(name).map(|v| v.to_string()).unwrap_or_default();
    let s = match decoded(e) {
        Decoded::World(W::Send { .. }) => format!(
            "{node} sends “{}” to {} (message {}).",
            field(world::field::MSG),
            field(world::field::TO),
            field(world::field::ID)
        ),
        Decoded::World(W::Deliver { .. }) => {
            let mut s = format!(
                "{node} receives “{}” from {}",
                field(world::field::MSG),
                field(world::field::FROM)
            );
            if let Some((t, _)) = e.u64(world::field::ID).and_then(|id| sent.get(&id)) {
                let flight = e.t_ns.saturating_sub(*t);
                s.push_str(&format!(", sent at {}", seconds(*t)));
                if flight >= 1_000_000_000 {
                    s.push_str(&format!(": {} in flight", seconds(flight)));
                }
            }
            s + "."
        }
        Decoded::World(W::Drop { .. }) => format!(
            "The network loses message {} from {node} to {}{}.",
            field(world::field::ID),
            field(world::field::TO),
            e.str(world::field::REASON)
                .map_or(String::new(), |r| format!(" ({r})"))
        ),
        Decoded::World(W::Duplicate { .. }) => format!(
            "The network duplicates message {} from {node} to {}: it will arrive twice.",
            field(world::field::ID),
            field(world::field::TO)
        ),
        Decoded::World(W::Pause { .. }) => {
            let mut s = format!(
                "{node} pauses{} (a stop-the-world GC pause, say): it runs nothing while \
                 time goes on for everyone else",
                e.u64(world::field::DURATION_MS)
                    .map_or(String::new(), |ms| format!(
                        " for {}",
                        seconds(ms * 1_000_000)
                    ))
            );
            if let Some(b) = after.believed(node) {
                s.push_str(&format!(
                    "; it holds lease {}{}, valid until {} on its own clock",
                    b.lease,
                    token_text(b.token),
                    local_seconds(b.until_local_ns)
                ));
            }
            s + "."
        }
        Decoded::World(W::Resume) => resume_sentence(e, before),
        Decoded::World(W::Crash { .. }) => {
            let by = e.str(world::field::BY);
            let mut s = match by {
                Some(by) => format!(
                    "{by} powers {node} off (STONITH): {node} stops at once and forgets what \
                     it kept in memory"
                ),
                None => format!("{node} crashes and forgets what it kept in memory"),
            };
            if let Some(b) = before.believed(node) {
                s.push_str(&format!(" (including its lease {})", b.lease));
            }
            if let Some(h) = before.holder(node) {
                s.push_str(&format!(
                    "; whether {} still holds lease {}{} depends on what it keeps on disk: \
                     its restart tells",
                    h.client,
                    h.lease,
                    token_text(h.token)
                ));
            }
            if by.is_some() {
                // Powering a node off does not recall its packets.
                s.push_str("; whatever it sent before is still on its way");
            }
            s + "."
        }
        Decoded::World(W::Restart) => format!("{node} restarts, with only what it kept on disk."),
        Decoded::World(W::Clock { .. }) => format!(
            "{node}'s clock changes ({}): it now reads {} while the true time is {}.",
            describe(e).trim_start_matches("clock "),
            local_seconds(e.local_ns),
            seconds(e.t_ns)
        ),
        Decoded::World(W::Partition { .. }) => format!(
            "The network is partitioned ({}){}: messages across the cut are lost.",
            field(world::field::GROUPS),
            e.u64(world::field::DURATION_MS)
                .map_or(String::new(), |ms| format!(
                    " for {}",
                    seconds(ms.saturating_mul(1_000_000))
                ))
        ),
        Decoded::World(W::Heal { .. }) => {
            "The partition heals: every node can reach every other again.".to_owned()
        }
        Decoded::World(W::Link { .. }) => link_sentence(e),
        Decoded::Domain(D::Acquired { .. }) => {
            let mut s = match after.believed(node) {
                Some(b) => format!(
                    "{node} now believes it holds lease {}{} until {} on its own clock \
                     (acquired at {} + TTL {})",
                    b.lease,
                    token_text(b.token),
                    local_seconds(b.until_local_ns),
                    local_seconds(b.since_local_ns),
                    seconds(b.ttl_ms * 1_000_000)
                ),
                None => format!("{node} is granted lease {}", field("lease")),
            };
            if let Some(end) = e.u64("lease").and_then(|l| after.ended(node, l)) {
                s.push_str(&format!(
                    ", but the lock already {} at {}",
                    ended(end, "it"),
                    seconds(end.at_t_ns)
                ));
            }
            s + "."
        }
        Decoded::Domain(D::Denied) => {
            format!("{node} is told the lock is taken; it will ask again.")
        }
        Decoded::Domain(D::Read { .. }) => format!("{node} reads value {}.", field("value")),
        Decoded::Domain(D::Wrote { .. }) => wrote_sentence(e, after),
        Decoded::Domain(D::Acked {
            ok,
            op: Some(Op::Fence),
            ..
        }) => {
            if ok {
                format!(
                    "{node} learns the storage took its token with {}: older tokens are fenced off now.",
                    field("write")
                )
            } else {
                format!(
                    "{node} learns the storage refused its token with {}: it has seen a newer one.",
                    field("write")
                )
            }
        }
        Decoded::Domain(D::Acked { ok: true, .. }) => {
            format!("{node} learns its write {} was applied.", field("write"))
        }
        Decoded::Domain(D::Acked { .. }) => format!(
            "{node} learns its write {} was refused: it has been fenced off.",
            field("write")
        ),
        Decoded::Domain(D::Released { .. }) => {
            if before.believed(node).is_some() {
                format!(
                    "{node} is done and gives up lease {}: it no longer believes it holds the lock.",
                    field("lease")
                )
            } else {
                format!(
                    "{node} hands lease {} back to the lock, which it no longer believed it held.",
                    field("lease")
                )
            }
        }
        Decoded::Domain(D::Renewed { .. }) => renewed_sentence(e, before, after),
        Decoded::Domain(D::LockRenewed { .. }) => {
            let client = field("client");
            let mut s = format!(
                "{node} extends lease {} of {client}: its TTL starts again",
                field("lease")
            );
            if after.holder(node).map(|h| h.client.as_str()) != Some(client.as_str()) {
                s.push_str(&format!(
                    ", though {node} no longer counts {client} as the holder"
                ));
            }
            s + "."
        }
        Decoded::Domain(D::Lost) => {
            let mut s = format!("{node} is told it lost the lock");
            if let Some(b) = before.believed(node) {
                s.push_str(&format!(" (lease {}{})", b.lease, token_text(b.token)));
            }
            s + ": its session expired or its renewal was refused, so it stops believing \
                 it holds the lock and gives up this round without writing."
        }
        Decoded::Domain(D::Checked { .. }) => format!(
            "{node} checks lease {} on its own clock: {} left, so it writes next (a pause \
             now would still let that write through).",
            field("lease"),
            e.u64("remaining_ms").map_or_else(
                || "time".to_owned(),
                |ms| seconds(ms.saturating_mul(1_000_000))
            )
        ),
        Decoded::Domain(D::Lapsed { .. }) => format!(
            "{node} checks lease {} on its own clock: it ran out {} ago, so it stops \
             believing it holds the lock and gives up this round without writing.",
            field("lease"),
            e.u64("overdue_ms").map_or_else(
                || "some time".to_owned(),
                |ms| seconds(ms.saturating_mul(1_000_000))
            )
        ),
        Decoded::Domain(D::Fenced { .. }) => format!(
            "{node} sends {} carrying only its token{}, so the storage learns the new token \
             before any older write arrives; it is not a data write.",
            field("write"),
            token.map_or_else(String::new, |t| format!(" {t}"))
        ),
        Decoded::Domain(D::LockReleased { .. }) => {
            if before.holder(node) == after.holder(node) {
                format!(
                    "{node} hears {}'s release of lease {}, which it had already ended.",
                    field("client"),
                    field("lease")
                )
            } else {
                let (client, lease) = (field("client"), field("lease"));
                let mut s = format!("{node} frees lease {lease} of {client}: the lock is free");
                // A release the holder did not send (a stray or retried
                // request, another client's) leaves it believing.
                if let Some(b) = after
                    .believed(&client)
                    .filter(|b| Some(b.lease) == e.u64("lease"))
                {
                    s.push_str(&format!(
                        "; but {client} still believes it holds it until {} on its own clock",
                        local_seconds(b.until_local_ns)
                    ));
                }
                s + "."
            }
        }
        Decoded::Domain(D::Granted { .. }) => {
            let mut s = format!(
                "{node} grants lease {}{} to {}",
                field("lease"),
                token_text(token),
                field("client")
            );
            if let Some(prev) = before.holder(node) {
                s.push_str(&format!(
                    ", replacing {}'s lease {} that it never ended",
                    prev.client, prev.lease
                ));
            }
            s + "."
        }
        Decoded::Domain(D::Expired { .. }) => {
            let client = field("client");
            let mut s = match HoldEnd::of_expired(e.str("reason")) {
                HoldEnd::LostInACrash => format!(
                    "{node} is back without lease {} of {client}: it lived only in memory and \
                     was lost in the crash; at the lock, nobody holds it now",
                    field("lease")
                ),
                // The server's own reason: no clock of its ran out.
                HoldEnd::EndedBy(reason) => format!(
                    "{node} ends lease {} of {client} ({}): at the lock, nobody holds it now",
                    field("lease"),
                    reason_words(reason)
                ),
                _ => format!(
                    "Lease {} of {client} expires on {node}'s clock: at the lock, nobody holds it \
                     now",
                    field("lease")
                ),
            };
            if let Some(b) = after.believed(&client) {
                s.push_str(&format!(
                    "; but {client} still believes it holds it until {} on its own clock",
                    local_seconds(b.until_local_ns)
                ));
                if after.is_out(&client) {
                    s.push_str(&format!(
                        ", and, being paused or down, {client} cannot know"
                    ));
                }
            }
            s + "."
        }
        Decoded::Domain(D::Accepted { .. }) => format!(
            "{node} accepts {}'s write {}{}{}.",
            field("client"),
            field("write"),
            token_text(token),
            e.str("precondition").map_or(String::new(), |p| format!(
                ", because its precondition ({p}) holds"
            ))
        ),
        Decoded::Domain(D::Rejected { .. }) => format!(
            "{node} rejects {}'s write {}: {}{}.",
            field("client"),
            field("write"),
            e.str("reason").unwrap_or("refused"),
            if e.u64("max_token").is_some() {
                ", a newer token was already seen: the fence works"
            } else {
                ""
            }
        ),
        _ => format!("{node}: {}.", describe(e)),
    };
    s
}

/// How the lock ended a lease ([`super::belief::Ended::how`]) as a verb
/// phrase on `object`: `expired it`, `lost that lease in a crash, as its
/// restart showed`, `ended it (keepalive)` (followed by ` at` the time).
fn ended(end: &Ended, object: &str) -> String {
    match end.how {
        "expired" | "released" => format!("{} {object}", end.how),
        "ended" => format!(
            "ended {object} ({})",
            reason_words(end.reason.as_deref().unwrap_or("its own reason"))
        ),
        "superseded" => format!("replaced {object} with a newer grant"),
        "lost in a crash" => format!("lost {object} in a crash, as its restart showed"),
        other => format!("ended {object} ({other})"),
    }
}

fn renewed_sentence(e: &Event, before: View<'_>, after: View<'_>) -> String {
    let node = e.node.as_str();
    let lease = e
        .u64("lease")
        .map_or_else(|| "?".to_owned(), |l| l.to_string());
    let Some(b) = after.believed(node) else {
        return format!("{node} hears lease {lease} renewed, but no longer believes it holds it.");
    };
    let asked = e
        .local_ns
        .saturating_sub(i64::try_from(e.u64("asked_ago_ns").unwrap_or(0)).unwrap_or(0));
    let mut s = format!(
        "{node}'s lease {}{} is renewed: it now believes it holds it until {} on its own clock \
         (asked at {} + TTL {})",
        b.lease,
        token_text(b.token),
        local_seconds(b.until_local_ns),
        local_seconds(asked),
        seconds(b.ttl_ms.saturating_mul(1_000_000))
    );
    if let Some(old) = before.believed(node).filter(|old| old.lease == b.lease) {
        s.push_str(&format!(
            ", no longer until {}",
            local_seconds(old.until_local_ns)
        ));
    }
    s + "."
}

/// A link rule in words: which messages it hits, and what it does to them.
fn link_sentence(e: &Event) -> String {
    let to = e.str(world::field::TO).unwrap_or("?");
    // A rule with no sender (`from = "*"`) is journaled on its receiver.
    let from = match e.str(world::field::FROM) {
        Some("*") => "any node".to_owned(),
        Some(from) => from.to_owned(),
        None => e.node.to_string(),
    };
    let which = match (e.u64(world::field::COUNT), e.u64(world::field::DURATION_MS)) {
        (_, Some(ms)) => format!(
            "every message from {from} to {to} for the next {}",
            seconds(ms.saturating_mul(1_000_000))
        ),
        (Some(1) | None, None) => format!("the next message from {from} to {to}"),
        (Some(n), None) => format!("the next {n} messages from {from} to {to}"),
    };
    let what = match e.str(world::field::RULE) {
        Some(rule) => {
            let extra = e
                .u64(world::field::EXTRA_MS)
                .map(|ms| seconds(ms.saturating_mul(1_000_000)));
            crate::scenario::fault_kind::named(rule)
                .and_then(|kind| kind.link_effect(extra))
                .unwrap_or_else(|| format!("will be affected ({rule})"))
        }
        None => "will be affected".to_owned(),
    };
    format!("A network fault is armed: {which} {what}.")
}

/// The most grants a resuming node's sentence names one by one.
const NAMED_GRANTS: usize = 8;

fn resume_sentence(e: &Event, before: View<'_>) -> String {
    let node = e.node.as_str();
    let mut s = format!("{node} resumes");
    if let NodeState::Paused(since) = before.state(node) {
        s.push_str(&format!(" after {}", seconds(e.t_ns.saturating_sub(since))));
    }
    let Some(b) = before.believed(node) else {
        return s + ".";
    };
    // The node has not looked at its clock yet: say what it would see.
    let lease = format!("lease {}{}", b.lease, token_text(b.token));
    let (until, now) = (b.until_local_ns, e.local_ns);
    s.push_str(&if until <= now {
        format!(
            "; it still acts on {lease}, which by its own clock ran out {} ago, at {} (the clock reads {} now)",
            seconds(now.abs_diff(until)),
            local_seconds(until),
            local_seconds(now)
        )
    } else {
        format!(
            "; it still holds {lease}, which by its own clock has {} left, until {} (the clock reads {} now)",
            seconds(until.abs_diff(now)),
            local_seconds(until),
            local_seconds(now)
        )
    });
    if let Some(end) = before.ended(node, b.lease) {
        s.push_str(&format!(
            ", but the lock service {} at {}",
            ended(end, "it"),
            seconds(end.at_t_ns)
        ));
        // A crowd may have been granted the lock many times over while the
        // node slept: the first few are named, the others counted.
        let mut since = before.grants_since(end.at_t_ns, node);
        let newer: Vec<String> = since
            .by_ref()
            .take(NAMED_GRANTS)
            .map(|h| match h.token {
                Some(t) => format!("token {t} to {}", h.client),
                None => format!("lease {} to {}", h.lease, h.client),
            })
            .collect();
        if !newer.is_empty() {
            s.push_str(&format!(" and granted {}", newer.join(", then ")));
        }
        let more = since.count();
        if more > 0 {
            let grants = if more == 1 { "grant" } else { "grants" };
            s.push_str(&format!(", then {more} more {grants}"));
        }
    }
    s + "."
}

fn wrote_sentence(e: &Event, after: View<'_>) -> String {
    let node = e.node.as_str();
    let verb = if e.str("op") == Some("increment") {
        "an increment"
    } else {
        "write"
    };
    let mut s = format!(
        "{node} sends {verb} {}{}",
        e.str("write").unwrap_or("?"),
        token_text(e.u64("token"))
    );
    let Some(b) = after.believed(node) else {
        return s + ", holding no lease.";
    };
    s.push_str(&format!(", believing it holds lease {}", b.lease));
    if let Some(end) = after.ended(node, b.lease) {
        s.push_str(&format!(
            "; but the lock {} at {}",
            ended(end, "that lease"),
            seconds(end.at_t_ns)
        ));
        let holders: Vec<String> = after
            .locks()
            .filter_map(|(_, h)| h)
            .map(|h| {
                format!(
                    "{} holds lease {}{}",
                    h.client,
                    h.lease,
                    token_text(h.token)
                )
            })
            .collect();
        if !holders.is_empty() {
            s.push_str(&format!(" and {} now", holders.join(", ")));
        }
        s.push_str(": a zombie's write is on its way");
    }
    s + "."
}
