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
            "The network is partitioned ({}): messages across the cut are lost.",
            field(world::field::GROUPS)
        ),
        world::HEAL => "The partition heals: every node can reach every other again.".to_owned(),
        world::LINK => format!("A network fault is armed: {}.", describe(e)),
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
                    ", but the lock already {} it at {}",
                    end.how,
                    seconds(end.at_t_ns)
                ));
            }
            s + "."
        }
        events::DENIED => format!("{node} is told the lock is taken; it will ask again."),
        events::READ => format!("{node} reads value {}.", field("value")),
        events::WROTE => wrote_sentence(e, after),
        events::ACKED if e.bool("ok") == Some(true) => {
            format!("{node} learns its write {} was applied.", field("write"))
        }
        events::ACKED => format!(
            "{node} learns its write {} was refused: it has been fenced off.",
            field("write")
        ),
        events::RELEASED if e.get("client").is_none() => {
            format!(
                "{node} is done and gives up lease {}: it no longer believes it holds the lock.",
                field("lease")
            )
        }
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
            "{node} accepts {}'s write {}{}.",
            field("client"),
            field("write"),
            token_text(token)
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
        let lock = if end.how == "expired" {
            "the lock service expired it".to_owned()
        } else {
            format!("the lock service ended it ({})", end.how)
        };
        s.push_str(&format!(", but {lock} at {}", seconds(end.at_t_ns)));
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
            "; but the lock {} that lease at {}",
            end.how,
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
        }
    }

    /// Every step on its own numbered line, then the verdict and the repro
    /// command: what `fencesim step` prints without a terminal.
    pub fn piped(&self) -> String {
        let mut out = format!("{}: {} steps\n", self.name, self.steps.len());
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

    /// The screen of step `i`: the lanes around it (`▸` marks its row), its
    /// sentence, the beliefs, the findings, and the keys.
    pub fn screen(&self, i: usize) -> String {
        let s = &self.steps[i];
        // "event #N" is the journal's seq: the number the piped listing,
        // the oracle's findings and the HTML page's `#step=N` use.
        let mut out = format!(
            "{} — step {} of {}, event #{} at {}\n\n",
            self.name,
            i + 1,
            self.steps.len(),
            s.seq,
            seconds(s.t_ns)
        );
        for h in &self.header {
            out.push_str(&format!("  {h}\n"));
        }
        let first = i.saturating_sub(WINDOW_BEFORE);
        let last = (i + WINDOW_AFTER).min(self.rows.len() - 1);
        for (j, row) in self.rows.iter().enumerate().take(last + 1).skip(first) {
            let mark = if j == i { "▸ " } else { "  " };
            out.push_str(&format!("{mark}{row}\n"));
        }
        out.push('\n');
        out.push_str(&format!("  {}: {}\n", s.node, s.phrase));
        out.push_str(&format!("  {}\n", s.sentence));
        out.push_str(&format!("  beliefs: {}\n", s.beliefs));
        for v in &s.violations {
            out.push_str(&format!("  ⚠ {v}\n"));
        }
        if i + 1 == self.steps.len() {
            out.push('\n');
            for line in &self.verdict {
                out.push_str(&format!("  verdict: {line}\n"));
            }
            for line in &self.notes {
                out.push_str(&format!("  {line}\n"));
            }
        }
        out
    }

    /// The interactive walk: shows a step, reads a command line, moves.
    /// Enter or `n` next, `b` back, `v` the next violation, `q` (or the end
    /// of input) quits. `clear` clears the terminal before each screen.
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
        let mut lines = input.lines();
        loop {
            if clear {
                write!(out, "\x1b[2J\x1b[H")?;
            }
            write!(out, "{}", self.screen(i))?;
            if !note.is_empty() {
                writeln!(out, "  ({note})")?;
            }
            write!(
                out,
                "\n[Enter/n] next  [b] back  [v] next violation  [q] quit > "
            )?;
            out.flush()?;
            let Some(line) = lines.next() else {
                writeln!(out)?;
                break;
            };
            let line = line?;
            note.clear();
            match line.trim() {
                "" | "n" => {
                    if i + 1 < self.steps.len() {
                        i += 1;
                    } else {
                        note = "this is the last step".to_owned();
                    }
                }
                "b" => {
                    if i > 0 {
                        i -= 1;
                    } else {
                        note = "this is the first step".to_owned();
                    }
                }
                "v" => match self.violations.iter().find(|&&seq| seq as usize > i) {
                    Some(&seq) => i = seq as usize,
                    None => note = "no violation after this step".to_owned(),
                },
                "q" => break,
                other => note = format!("unknown command {other:?}"),
            }
        }
        writeln!(out, "repro: {}", self.repro)?;
        Ok(())
    }
}

const WINDOW_BEFORE: usize = 12;
const WINDOW_AFTER: usize = 3;
