//! Step-through: every journal event explained in one sentence, with who
//! believes what beside what is true, and the walk through them (`fencesim
//! step`): piped, every step on a line; on a terminal, one step at a time.
//!
//! ```
//! use fencesim::oracle::{check, OracleConfig};
//! use fencesim::report::step::steps;
//! use sim::journal::{Event, Journal};
//!
//! let journal = Journal::from_events([
//!     Event::new(0, 5_000_000, "client1", 5_000_000, "acquired")
//!         .with("lease", 1u64).with("token", 33u64).with("ttl_ms", 10_000u64),
//! ]);
//! let report = check(&journal, &OracleConfig::default());
//! let steps = steps(&journal, &report);
//! assert_eq!(
//!     steps[0].sentence,
//!     "client1 now believes it holds lease 1 (token 33) until 10.005s on its own clock \
//!      (acquired at 0.005s + TTL 10.000s)."
//! );
//! ```

use std::collections::BTreeMap;
use std::io::{self, BufRead, Write};

use sim::events as world;
use sim::journal::{Event, Journal};

use super::belief::{local_seconds, seconds, token_text, Beliefs, View};
use super::lanes::{describe, lanes, LanesOptions};
use crate::escape::terminal;
use crate::events;
use crate::oracle::{Report, Verdict};

/// One event, explained. Its texts come escaped by
/// [`crate::escape::terminal`]: what a scenario put in a node name or a
/// message shows as `\x1b`, never as an escape sequence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    /// The event's journal `seq`.
    pub seq: u64,
    /// Its true time.
    pub t_ns: u64,
    /// Its node.
    pub node: String,
    /// The short phrase of the lanes (`acquired lease 1, token 33`).
    pub phrase: String,
    /// What happened and what it means, in a sentence or two.
    pub sentence: String,
    /// Every client's belief and every lock's true holder after the event.
    pub beliefs: String,
    /// The oracle's findings at this event, explained.
    pub violations: Vec<String>,
    /// Whether a fault takes effect here (a pause, a clock change, a crash,
    /// a partition, a link rule): where the walk's `f` stops.
    pub fault: bool,
}

/// Explains every event of `journal`; `report` (the oracle's judgement of
/// it) adds its findings to the steps they point at.
pub fn steps(journal: &Journal, report: &Report) -> Vec<Step> {
    let mut beliefs = Beliefs::new(journal);
    let mut sent: BTreeMap<u64, (u64, String)> = BTreeMap::new();
    let mut out = Vec::with_capacity(journal.len());
    let mut findings: BTreeMap<u64, Vec<String>> = BTreeMap::new();
    for v in &report.violations {
        findings
            .entry(v.seq)
            .or_default()
            .push(terminal(&format!("{}: {}", v.kind, v.explanation)));
    }
    for e in journal.events() {
        let kept = beliefs.apply_keeping_before(e);
        let sentence = sentence(e, beliefs.before(&kept), beliefs.view(), &sent);
        if e.kind == world::SEND {
            if let Some(id) = e.u64(world::field::ID) {
                sent.insert(id, (e.t_ns, e.node.clone()));
            }
        }
        // Escaped once here, so that every medium shows the same text and
        // the terminal gets no control character from a scenario.
        out.push(Step {
            seq: e.seq,
            t_ns: e.t_ns,
            node: terminal(&e.node),
            phrase: describe(e),
            sentence: terminal(&sentence),
            beliefs: terminal(&beliefs.summary()),
            violations: findings.remove(&e.seq).unwrap_or_default(),
            fault: is_fault(e),
        });
    }
    out
}

/// The sentence for `e`, given the beliefs just before and just after it.
fn sentence(
    e: &Event,
    before: View<'_>,
    after: View<'_>,
    sent: &BTreeMap<u64, (u64, String)>,
) -> String {
    let node = e.node.as_str();
    let token = e.u64("token");
    let field = |name: &str| e.get(name).map(|v| v.to_string()).unwrap_or_default();
    let s = match e.kind.as_str() {
        world::SEND => format!(
            "{node} sends “{}” to {} (message {}).",
            field(world::field::MSG),
            field(world::field::TO),
            field(world::field::ID)
        ),
        world::DELIVER => {
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
        world::DROP => format!(
            "The network loses message {} from {node} to {}{}.",
            field(world::field::ID),
            field(world::field::TO),
            e.str(world::field::REASON)
                .map_or(String::new(), |r| format!(" ({r})"))
        ),
        world::DUPLICATE => format!(
            "The network duplicates message {} from {node} to {}: it will arrive twice.",
            field(world::field::ID),
            field(world::field::TO)
        ),
        world::PAUSE => {
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
        world::RESUME => resume_sentence(e, before),
        world::CRASH => {
            let mut s = format!("{node} crashes and forgets what it kept in memory");
            if let Some(b) = before.believed(node) {
                s.push_str(&format!(" (including its lease {})", b.lease));
            }
            if let Some(h) = before.holder(node) {
                s.push_str(&format!(
                    " (including that {} holds lease {}{})",
                    h.client,
                    h.lease,
                    token_text(h.token)
                ));
            }
            s + "."
        }
        world::RESTART => format!("{node} restarts, with only what it kept on disk."),
        world::CLOCK => format!(
            "{node}'s clock changes ({}): it now reads {} while the true time is {}.",
            describe(e).trim_start_matches("clock "),
            local_seconds(e.local_ns),
            seconds(e.t_ns)
        ),
        world::PARTITION => format!(
            "The network is partitioned ({}){}: messages across the cut are lost.",
            field(world::field::GROUPS),
            e.u64(world::field::DURATION_MS)
                .map_or(String::new(), |ms| format!(
                    " for {}",
                    seconds(ms.saturating_mul(1_000_000))
                ))
        ),
        world::HEAL => "The partition heals: every node can reach every other again.".to_owned(),
        world::LINK => link_sentence(e),
        events::ACQUIRED => {
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
                    ended(end.how, "it"),
                    seconds(end.at_t_ns)
                ));
            }
            s + "."
        }
        events::DENIED => format!("{node} is told the lock is taken; it will ask again."),
        events::READ => format!("{node} reads value {}.", field("value")),
        events::WROTE => wrote_sentence(e, after),
        events::ACKED if e.str("op") == Some("fence") => {
            if e.bool("ok") == Some(true) {
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
        events::ACKED if e.bool("ok") == Some(true) => {
            format!("{node} learns its write {} was applied.", field("write"))
        }
        events::ACKED => format!(
            "{node} learns its write {} was refused: it has been fenced off.",
            field("write")
        ),
        events::RELEASED if e.get("client").is_none() => {
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
        events::RENEWED if e.get("client").is_none() => renewed_sentence(e, before, after),
        events::RENEWED => {
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
        events::LOST => {
            let mut s = format!("{node} is told it lost the lock");
            if let Some(b) = before.believed(node) {
                s.push_str(&format!(" (lease {}{})", b.lease, token_text(b.token)));
            }
            s + ": its session expired or its renewal was refused, so it stops believing \
                 it holds the lock and gives up this round without writing."
        }
        events::CHECKED => format!(
            "{node} checks lease {} on its own clock: {} left, so it writes next (a pause \
             now would still let that write through).",
            field("lease"),
            e.u64("remaining_ms").map_or_else(
                || "time".to_owned(),
                |ms| seconds(ms.saturating_mul(1_000_000))
            )
        ),
        events::LAPSED => format!(
            "{node} checks lease {} on its own clock: it ran out {} ago, so it stops \
             believing it holds the lock and gives up this round without writing.",
            field("lease"),
            e.u64("overdue_ms").map_or_else(
                || "some time".to_owned(),
                |ms| seconds(ms.saturating_mul(1_000_000))
            )
        ),
        events::FENCED => format!(
            "{node} sends {} carrying only its token{}, so the storage learns the new token \
             before any older write arrives; it is not a data write.",
            field("write"),
            token.map_or_else(String::new, |t| format!(" {t}"))
        ),
        events::RELEASED => {
            if before.holder(node) == after.holder(node) {
                format!(
                    "{node} hears {}'s release of lease {}, which it had already ended.",
                    field("client"),
                    field("lease")
                )
            } else {
                format!(
                    "{node} frees lease {} of {}: the lock is free.",
                    field("lease"),
                    field("client")
                )
            }
        }
        events::GRANTED => {
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
        events::EXPIRED => {
            let client = field("client");
            let mut s = format!(
                "Lease {} of {client} expires on {node}'s clock: at the lock, nobody holds it now",
                field("lease")
            );
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
        events::ACCEPTED => format!(
            "{node} accepts {}'s write {}{}{}.",
            field("client"),
            field("write"),
            token_text(token),
            e.str("precondition").map_or(String::new(), |p| format!(
                ", because its precondition ({p}) holds"
            ))
        ),
        events::REJECTED => format!(
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
/// phrase on `object`: `expired it`, `lost that lease in a crash`.
fn ended(how: &str, object: &str) -> String {
    match how {
        "expired" | "released" => format!("{how} {object}"),
        "superseded" => format!("replaced {object} with a newer grant"),
        "lost in a crash" => format!("lost {object} in a crash"),
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
    let node = e.node.as_str();
    let to = e.str(world::field::TO).unwrap_or("?");
    let which = match (e.u64(world::field::COUNT), e.u64(world::field::DURATION_MS)) {
        (_, Some(ms)) => format!(
            "every message from {node} to {to} for the next {}",
            seconds(ms.saturating_mul(1_000_000))
        ),
        (Some(1) | None, None) => format!("the next message from {node} to {to}"),
        (Some(n), None) => format!("the next {n} messages from {node} to {to}"),
    };
    let what = match e.str(world::field::RULE) {
        Some("delay") => match e.u64(world::field::EXTRA_MS) {
            Some(ms) => format!(
                "will be held {} longer in the network",
                seconds(ms.saturating_mul(1_000_000))
            ),
            None => "will be held longer in the network".to_owned(),
        },
        Some("drop") => "will be lost".to_owned(),
        Some("duplicate") => "will arrive twice".to_owned(),
        Some(other) => format!("will be affected ({other})"),
        None => "will be affected".to_owned(),
    };
    format!("A network fault is armed: {which} {what}.")
}

fn resume_sentence(e: &Event, before: View<'_>) -> String {
    let node = e.node.as_str();
    let mut s = format!("{node} resumes");
    if let super::belief::NodeState::Paused(since) = before.state(node) {
        s.push_str(&format!(" after {}", seconds(e.t_ns.saturating_sub(since))));
    }
    let Some(b) = before.believed(node) else {
        return s + ".";
    };
    s.push_str(&format!(
        "; it still believes its lease {}{} runs until {} on its own clock (which now reads {})",
        b.lease,
        token_text(b.token),
        local_seconds(b.until_local_ns),
        local_seconds(e.local_ns)
    ));
    if let Some(end) = before.ended(node, b.lease) {
        s.push_str(&format!(
            ", but the lock service {} at {}",
            ended(end.how, "it"),
            seconds(end.at_t_ns)
        ));
        let newer: Vec<String> = before
            .grants_since(end.at_t_ns, node)
            .map(|h| match h.token {
                Some(t) => format!("token {t} to {}", h.client),
                None => format!("lease {} to {}", h.lease, h.client),
            })
            .collect();
        if !newer.is_empty() {
            s.push_str(&format!(" and granted {}", newer.join(", then ")));
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
            ended(end.how, "that lease"),
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

/// The verdict in words: `SAFE: …` or `VIOLATION: …` with the counts.
pub fn verdict_text(report: &Report) -> String {
    let head = match report.verdict {
        Verdict::Safe => "SAFE: the storage accepted no stale write",
        Verdict::Violation => "VIOLATION",
        Verdict::Inconclusive => "INCONCLUSIVE: no write reached the storage, nothing was judged",
        Verdict::Error => "ERROR: the run crashed; nothing it did is judged safe",
    };
    format!(
        "{head} ({} accepted, {} rejected; {} stale, {} zombie, {} token regressions, {} lost updates)",
        report.accepted_writes,
        report.rejected_writes,
        report.stale_writes,
        report.zombie_writes,
        report.token_regressions,
        report.lost_updates
    )
}

/// Everything `fencesim step` shows: the steps, the lanes of the run with one
/// row per event, and what the oracle found.
#[derive(Clone, Debug)]
pub struct Walk {
    /// The scenario's name (as [`terminal`] shows it, like every text of a
    /// walk).
    pub name: String,
    /// Every event, explained.
    pub steps: Vec<Step>,
    /// The lanes' two header lines.
    pub header: Vec<String>,
    /// The lanes' rows: `rows[i]` is event `i`.
    pub rows: Vec<String>,
    /// The `seq` of every violation, in order.
    pub violations: Vec<u64>,
    /// [`verdict_text`] and the violations explained.
    pub verdict: Vec<String>,
    /// Lines after the verdict, each with its own label (`reached  …`,
    /// `unfired  …`): what the run tested and what it left untested.
    pub notes: Vec<String>,
    /// The command that replays the run.
    pub repro: String,
    /// The terminal's width: a screen's sentence and beliefs wrap to it
    /// (`None`: they do not wrap).
    pub columns: Option<usize>,
}

impl Walk {
    /// The walk through `journal`, with lanes for `nodes` (`width` chars
    /// each).
    pub fn new(
        name: &str,
        journal: &Journal,
        report: &Report,
        nodes: &[String],
        lanes_options: &LanesOptions,
        repro: &str,
    ) -> Walk {
        let options = LanesOptions {
            deliveries: true,
            ..lanes_options.clone()
        };
        let drawn = lanes(journal, nodes, &options);
        let mut lines: Vec<String> = drawn.lines().map(str::to_owned).collect();
        let rows = lines.split_off(2.min(lines.len()));
        assert_eq!(rows.len(), journal.len(), "lanes give one row per event");
        let mut verdict = vec![verdict_text(report)];
        verdict.extend(
            report
                .violations
                .iter()
                .map(|v| terminal(&format!("{} (event {}): {}", v.kind, v.seq, v.explanation))),
        );
        Walk {
            name: terminal(name),
            steps: steps(journal, report),
            header: lines,
            rows,
            violations: report.violations.iter().map(|v| v.seq).collect(),
            verdict,
            notes: Vec::new(),
            repro: terminal(repro),
            columns: None,
        }
    }

    /// Every event on its own line, numbered as in the journal, then the
    /// verdict and the repro command: what `fencesim step` prints without a
    /// terminal.
    pub fn piped(&self) -> String {
        let mut out = match (self.steps.first(), self.steps.last()) {
            (Some(first), Some(last)) => format!(
                "{}: {} events, #{} to #{}\n",
                self.name,
                self.steps.len(),
                first.seq,
                last.seq
            ),
            _ => format!("{}: no events\n", self.name),
        };
        let digits = self.steps.len().max(1).to_string().len();
        for s in &self.steps {
            out.push_str(&format!(
                "{:>digits$}  {:>8}  {}  | {}",
                s.seq,
                seconds(s.t_ns),
                s.sentence,
                s.beliefs
            ));
            for v in &s.violations {
                out.push_str(&format!("  | ⚠ {v}"));
            }
            out.push('\n');
        }
        for line in &self.verdict {
            out.push_str(&format!("verdict  {line}\n"));
        }
        for line in &self.notes {
            out.push_str(&format!("{line}\n"));
        }
        out.push_str(&format!("repro    {}\n", self.repro));
        out
    }

    /// The screen of the step at index `i` (event `#steps[i].seq`): the
    /// lanes around it (`▸` marks its row), its sentence, the beliefs, the
    /// findings. With [`Walk::columns`], the sentence and beliefs are
    /// wrapped to that width.
    pub fn screen(&self, i: usize) -> String {
        let s = &self.steps[i];
        // One numbering everywhere: the journal's seq, as in the piped
        // listing, the oracle's findings and the HTML page's `#step=N`.
        let last = self.steps.last().map_or(0, |l| l.seq);
        let mut out = format!(
            "{} — event #{} of #0–#{last}, at {}\n\n",
            self.name,
            s.seq,
            seconds(s.t_ns)
        );
        for h in &self.header {
            out.push_str(&format!("  {h}\n"));
        }
        let first = i.saturating_sub(WINDOW_BEFORE);
        let last_row = (i + WINDOW_AFTER).min(self.rows.len() - 1);
        for (j, row) in self.rows.iter().enumerate().take(last_row + 1).skip(first) {
            let mark = if j == i { "▸ " } else { "  " };
            out.push_str(&format!("{mark}{row}\n"));
        }
        out.push('\n');
        let text = [
            format!("#{} {}: {}", s.seq, s.node, s.phrase),
            s.sentence.clone(),
            format!("beliefs: {}", s.beliefs),
        ];
        for t in &text {
            out.push_str(&self.wrapped(t, "  "));
        }
        for v in &s.violations {
            out.push_str(&self.wrapped(&format!("⚠ {v}"), "  "));
        }
        if i + 1 == self.steps.len() {
            out.push('\n');
            for line in &self.verdict {
                out.push_str(&self.wrapped(&format!("verdict: {line}"), "  "));
            }
            for line in &self.notes {
                out.push_str(&format!("  {line}\n"));
            }
        }
        out
    }

    /// `text` after `indent`, wrapped at spaces to [`Walk::columns`] (a
    /// word longer than a line stays whole), each line ending in `\n`.
    fn wrapped(&self, text: &str, indent: &str) -> String {
        let Some(columns) = self.columns else {
            return format!("{indent}{text}\n");
        };
        let room = columns.saturating_sub(indent.chars().count()).max(20);
        let mut out = String::new();
        let mut line = String::new();
        for word in text.split(' ') {
            let len = line.chars().count();
            if len > 0 && len + 1 + word.chars().count() > room {
                out.push_str(&format!("{indent}{line}\n"));
                line.clear();
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
        out.push_str(&format!("{indent}{line}\n"));
        out
    }

    /// The index of the step of journal event `seq`.
    fn index_of(&self, seq: u64) -> Option<usize> {
        self.steps.binary_search_by_key(&seq, |s| s.seq).ok()
    }

    /// The first step after index `i` for which `hit` holds.
    fn next_where(&self, i: usize, hit: impl Fn(&Step) -> bool) -> Option<usize> {
        (i + 1..self.steps.len()).find(|&j| hit(&self.steps[j]))
    }

    /// The first step after index `i` whose node, phrase, sentence or
    /// beliefs mention `text`, in any case.
    pub fn search(&self, i: usize, text: &str) -> Option<usize> {
        let needle = text.to_lowercase();
        self.next_where(i, |s| {
            [&s.node, &s.phrase, &s.sentence, &s.beliefs]
                .iter()
                .any(|t| t.to_lowercase().contains(&needle))
        })
    }

    /// The interactive walk: shows a step, reads a command line, moves
    /// (the keys of [`HELP`]; the end of input quits). `clear` clears the
    /// terminal before each screen.
    pub fn interact(
        &self,
        input: impl BufRead,
        mut out: impl Write,
        clear: bool,
    ) -> io::Result<()> {
        if self.steps.is_empty() {
            writeln!(out, "{}: the journal is empty", self.name)?;
            return Ok(());
        }
        let mut i = 0usize;
        let mut note = String::new();
        let mut search: Option<String> = None;
        let mut help = false;
        let mut lines = input.lines();
        loop {
            if clear {
                write!(out, "\x1b[2J\x1b[H")?;
            }
            write!(out, "{}", self.screen(i))?;
            if help {
                writeln!(out, "  keys:")?;
                for line in HELP.lines() {
                    writeln!(out, "    {line}")?;
                }
            } else if !note.is_empty() {
                writeln!(out, "  ({note})")?;
            }
            write!(out, "\n{PROMPT}")?;
            out.flush()?;
            let Some(line) = lines.next() else {
                writeln!(out)?;
                break;
            };
            let line = line?;
            note.clear();
            help = false;
            let command = line.trim();
            let last = self.steps.len() - 1;
            let mut find = |i: &mut usize, text: &str| match self.search(*i, text) {
                Some(j) => *i = j,
                None => note = format!("no event after this one mentions {text:?}"),
            };
            match command {
                "n" if search.is_some() => {
                    let text = search.clone().unwrap_or_default();
                    find(&mut i, &text);
                }
                "" | "n" => {
                    if i < last {
                        i += 1;
                    } else {
                        note = "this is the last event".to_owned();
                    }
                }
                "b" => {
                    if i > 0 {
                        i -= 1;
                    } else {
                        note = "this is the first event".to_owned();
                    }
                }
                "f" => match self.next_where(i, |s| s.fault) {
                    Some(j) => i = j,
                    None => note = "no fault after this event".to_owned(),
                },
                "v" => match self
                    .violations
                    .iter()
                    .filter_map(|&seq| self.index_of(seq))
                    .find(|&j| j > i)
                {
                    Some(j) => i = j,
                    None => note = "no violation after this event".to_owned(),
                },
                "?" | "h" | "help" => help = true,
                "q" => break,
                _ if command.starts_with('/') => {
                    let text = command[1..].trim();
                    let text = if text.is_empty() {
                        search.clone()
                    } else {
                        Some(text.to_owned())
                    };
                    match text {
                        Some(text) => {
                            find(&mut i, &text);
                            search = Some(text);
                        }
                        None => note = "nothing to search for yet: /text".to_owned(),
                    }
                }
                _ => {
                    let number = command
                        .strip_prefix('g')
                        .map_or(command, str::trim_start)
                        .trim_start_matches('#');
                    match number.parse::<u64>() {
                        Ok(seq) => match self.index_of(seq) {
                            Some(j) => i = j,
                            None => {
                                note = format!(
                                    "no event #{seq}: events are #0–#{}",
                                    self.steps[last].seq
                                )
                            }
                        },
                        Err(_) => note = format!("unknown command {command:?}; ? shows the keys"),
                    }
                }
            }
        }
        writeln!(out, "repro: {}", self.repro)?;
        Ok(())
    }
}

/// The keys of the interactive walk, as its `?` screen shows them.
pub const HELP: &str = "\
Enter        next event
b            back one event
g N, or N    go to event #N (the journal's numbering, as everywhere)
/text        search forward for text (in the lanes' phrase, the sentence,
             the node and the beliefs); / alone searches again
n            next match of the last search (next event before any search)
f            next fault (pause, clock change, crash, partition, link rule)
v            next violation the oracle found
?            this help
q            quit (so does the end of input)
";

/// The prompt under every screen.
const PROMPT: &str = "[Enter] next [b]ack [g N] go [/text] find [f]ault [v]iolation [?] [q]uit > ";

/// Whether `e` is a fault taking effect: what `f` jumps to.
fn is_fault(e: &Event) -> bool {
    matches!(
        e.kind.as_str(),
        world::PAUSE | world::CLOCK | world::CRASH | world::PARTITION | world::LINK
    )
}

/// The lane width at which the lanes of `journal` (one lane per node of
/// `nodes`, plus the `world` lane when some event belongs to no node of
/// `nodes`) fit `columns` characters on a step screen, rows marked by two
/// characters in front; at least 4.
pub fn lane_width(journal: &Journal, nodes: &[String], columns: usize) -> usize {
    let mut lanes: Vec<&str> = Vec::new();
    for n in nodes {
        if !lanes.contains(&n.as_str()) {
            lanes.push(n);
        }
    }
    let extra = journal
        .events()
        .iter()
        .any(|e| !lanes.contains(&e.node.as_str()));
    let count = lanes.len() + usize::from(extra);
    let time_width = journal
        .events()
        .iter()
        .map(|e| seconds(e.t_ns).len())
        .max()
        .unwrap_or(0)
        .max("time".len());
    // "▸ " + time + count × (gutter + lane)
    let room = columns.saturating_sub(2 + time_width);
    (room / count.max(1)).saturating_sub(2).max(4)
}

const WINDOW_BEFORE: usize = 12;
const WINDOW_AFTER: usize = 3;
