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

use sim::events::WorldEvent as W;
use sim::journal::{Event, Journal};

use super::belief::{seconds, Beliefs};
use super::lanes::{describe, lanes, LanesOptions};
use super::sentence::sentence;
use crate::escape::terminal;
use crate::oracle::{Report, Verdict};

/// One event, explained. Its texts come escaped for a terminal: what a
/// scenario put in a node name or a message shows as `\x1b`, never as an
/// escape sequence.
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
        if let Ok(Some(W::Send { id, .. })) = W::decode(e) {
            sent.insert(id, (e.t_ns, e.node.to_string()));
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

/// The verdict in words: `SAFE: …` or `VIOLATION: …` with the counts.
pub fn verdict_text(report: &Report) -> String {
    let head = match report.verdict {
        Verdict::Safe => "SAFE: the storage accepted no stale write",
        Verdict::Violation => "VIOLATION",
        Verdict::Inconclusive => "INCONCLUSIVE: no write reached the storage, nothing was judged",
        Verdict::Error => "ERROR: the run crashed; nothing it did is judged safe",
    };
    format!(
        "{head} ({} accepted, {} rejected; {})",
        report.accepted_writes,
        report.rejected_writes,
        report.found_text()
    )
}

/// Everything `fencesim step` shows: the steps, the lanes of the run with one
/// row per event, and what the oracle found.
#[derive(Clone, Debug)]
pub struct Walk {
    /// The scenario's name (escaped for a terminal, like every text of a
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
        W::decode(e),
        Ok(Some(
            W::Pause { .. }
                | W::Clock { .. }
                | W::Crash { .. }
                | W::Partition { .. }
                | W::Link { .. }
        ))
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
