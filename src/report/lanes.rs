//! Terminal lanes, like DDIA's figure 9-6: one column per node, time flowing
//! down, one row per journal event.
//!
//! ```
//! use fencesim::report::lanes::{lanes, LanesOptions};
//! use sim::journal::{Event, Journal};
//!
//! let journal = Journal::from_events([
//!     Event::new(0, 4_000_000, "client1", 4_000_000, "acquired")
//!         .with("lease", 1u64)
//!         .with("token", 33u64),
//!     Event::new(0, 4_000_000, "client1", 4_000_000, "pause").with("duration_ms", 15_000u64),
//!     Event::new(0, 10_004_000_000, "lock", 10_004_000_000, "expired")
//!         .with("client", "client1")
//!         .with("lease", 1u64),
//!     Event::new(0, 15_004_000_000, "client1", 15_004_000_000, "resume"),
//! ]);
//! let nodes = ["client1".to_owned(), "lock".to_owned()];
//! let options = LanesOptions { width: 28, ..LanesOptions::default() };
//! let out = lanes(&journal, &nodes, &options);
//! assert_eq!(out.lines().collect::<Vec<_>>(), [
//!     "   time  client1                       lock",
//!     "───────  ────────────────────────────  ────────────────────────────",
//!     " 0.004s  acquired lease 1, token 33    │",
//!     " 0.004s  ⏸ paused 15.000s              │",
//!     "10.004s  ┊                             lease 1 of client1 expired",
//!     "15.004s  ▶ resumed                     │",
//! ]);
//! ```
//!
//! Reading the lanes:
//! - `│` marks an idle lane, `┊` a lane whose node is paused (from `pause`
//!   to `resume`) or down (from `crash` to `restart`): the band shows how long
//!   the node was out while the world went on.
//! - A message appears in its sender's lane (`→ storage: write …`); its
//!   delivery (`← client1: …`, in the receiver's lane) only with
//!   [`LanesOptions::deliveries`].
//! - Upper case marks what a reader must not miss: `REJECTED` writes, and
//!   `⚠ ACCEPTED` for an acceptance whose token is lower than one the same
//!   node already accepted (a stale write). `⚠ accepted` (lower case) marks
//!   an acceptance whose token is lower than a newer client grant: it looks
//!   like a zombie's write. These are hints from tokens alone; the oracle
//!   gives the verdict.
//! - Events of nodes not given as lanes (the world's `partition` and `heal`)
//!   go in a trailing `world` column, shown only when there are such events.
//! - A crowd is not drawn one lane per client: past [`MAX_LANES`] nodes, the
//!   lock and storage nodes keep their lanes, the first clients fill the
//!   rest, and the other clients share the trailing column (`990 more
//!   clients`), each phrase led by its node's name, as the world's are.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use sim::events::{self as world, WorldEvent as W};
use sim::journal::{seconds, Event, Journal, Value};

use crate::escape::terminal;
use crate::events::{decoded, Decoded, DomainEvent, DomainEvent as D, Op, Role};
use crate::oracle::spans::HoldEnd;
use crate::oracle::Roles;

/// How [`lanes`] draws.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LanesOptions {
    /// Width of each node's column, in chars (at least 2); longer phrases are
    /// cut with `…`. Columns are separated by two spaces.
    pub width: usize,
    /// Show `deliver` rows (message handling at the receiver).
    pub deliveries: bool,
    /// Colour phrases with ANSI escapes: red for rejections, stale-looking
    /// acceptances and crashes, yellow for faults and expiries, green for
    /// grants and acceptances.
    pub color: bool,
}

impl Default for LanesOptions {
    fn default() -> Self {
        LanesOptions {
            width: 24,
            deliveries: false,
            color: false,
        }
    }
}

/// The most lanes drawn: a crowd of clients shows the lock and storage
/// nodes and its first clients, and the rest in one shared column.
pub const MAX_LANES: usize = 12;

/// The name of the column (or lane) the crowd's clients share.
pub(in crate::report) fn crowd_lane_name(hidden: usize) -> String {
    format!("{hidden} more clients")
}

/// When `node_lanes` has more than [`MAX_LANES`] nodes, removes the clients
/// past the room left by the other nodes, and returns them.
pub(in crate::report) fn crowd_hidden<'a>(
    journal: &'a Journal,
    node_lanes: &mut Vec<&'a str>,
) -> BTreeSet<&'a str> {
    if node_lanes.len() <= MAX_LANES {
        return BTreeSet::new();
    }
    let roles = Roles::from_journal(journal);
    let is_client = |n: &str| roles.is(n, Role::Client);
    let others = node_lanes.iter().filter(|n| !is_client(n)).count();
    let mut room = MAX_LANES.saturating_sub(others).max(1);
    let mut hidden = BTreeSet::new();
    node_lanes.retain(|&n| {
        if !is_client(n) {
            return true;
        }
        if room > 0 {
            room -= 1;
            return true;
        }
        hidden.insert(n);
        false
    });
    hidden
}

/// Below this a column cannot hold one char and the `…`.
const MIN_WIDTH: usize = 2;
const GUTTER: &str = "  ";
const IDLE: &str = "│";
const OUT: &str = "┊";

/// Renders the journal as lanes, one column per node of `nodes` in that
/// order, plus a trailing `world` column when some shown event happened on a
/// node not in `nodes`. Every line ends with `\n` and has no trailing spaces.
/// Text from the journal is shown escaped for a terminal: the only escape
/// sequences in the output are the colours of [`LanesOptions::color`].
pub fn lanes(journal: &Journal, nodes: &[String], options: &LanesOptions) -> String {
    lanes_limited(journal, nodes, options, usize::MAX)
}

/// [`lanes`] with at most `max_rows` event rows: past that, the first
/// `max_rows / 2` rows and the last ones, with a line in between saying how
/// many were left out. Rendering costs time linear in the journal and
/// memory linear in the rows shown.
pub fn lanes_limited(
    journal: &Journal,
    nodes: &[String],
    options: &LanesOptions,
    max_rows: usize,
) -> String {
    let width = options.width.max(MIN_WIDTH);
    let mut node_lanes: Vec<&str> = Vec::with_capacity(nodes.len());
    for node in nodes {
        if !node_lanes.contains(&node.as_str()) {
            node_lanes.push(node);
        }
    }
    let hidden = crowd_hidden(journal, &mut node_lanes);
    let shown =
        |e: &Event| options.deliveries || !matches!(W::decode(e), Ok(Some(W::Deliver { .. })));
    let lane_of = |e: &Event| node_lanes.iter().position(|n| *n == e.node);
    let others = crowd_lane_name(hidden.len());
    let mut lane_names = node_lanes.clone();
    if !hidden.is_empty() {
        lane_names.push(&others);
    } else if journal
        .events()
        .iter()
        .any(|e| shown(e) && lane_of(e).is_none())
    {
        lane_names.push(if node_lanes.contains(&world::WORLD) {
            "other"
        } else {
            world::WORLD
        });
    }
    let node_count = node_lanes.len();
    let time_width = journal
        .events()
        .iter()
        .filter(|e| shown(e))
        .map(|e| seconds(e.t_ns).len())
        .max()
        .unwrap_or(0)
        .max("time".len());

    let mut out = String::new();
    let mut row = format!("{:>time_width$}", "time");
    for name in &lane_names {
        row.push_str(GUTTER);
        push_cell(
            &mut row,
            &fit(&terminal(name), width),
            width,
            Tone::Plain,
            false,
        );
    }
    end_line(&mut out, row);
    let mut row = "─".repeat(time_width);
    for _ in &lane_names {
        row.push_str(GUTTER);
        row.push_str(&"─".repeat(width));
    }
    end_line(&mut out, row);

    // Whether each node lane is paused or down, as of the current row.
    let mut out_of_play = vec![false; node_count];
    let mut fences = Fences::default();
    let rows = if max_rows == usize::MAX {
        usize::MAX
    } else {
        journal.events().iter().filter(|e| shown(e)).count()
    };
    let (head, tail_from) = if rows > max_rows {
        (max_rows / 2, rows - (max_rows - max_rows / 2))
    } else {
        (usize::MAX, 0)
    };
    let mut row_index = 0usize;
    for e in journal.events() {
        // Every event feeds the stale-looking check, shown or not.
        let (phrase, tone) = fences.phrase(e);
        if !shown(e) {
            continue;
        }
        let lane = lane_of(e);
        let drawn = row_index < head || row_index >= tail_from;
        if row_index == head {
            let left_out = tail_from - head;
            writeln!(
                out,
                "{:>time_width$}  … {left_out} of {rows} rows not shown; \
                 `fencesim step` and `fencesim report` show every event",
                "…"
            )
            .unwrap();
        }
        row_index += 1;
        if !drawn {
            note_out_of_play(&mut out_of_play, lane, e);
            continue;
        }
        let mut row = format!("{:>time_width$}", seconds(e.t_ns));
        for i in 0..lane_names.len() {
            row.push_str(GUTTER);
            match lane {
                Some(l) if l == i => {
                    push_cell(&mut row, &fit(&phrase, width), width, tone, options.color)
                }
                None if i == node_count => {
                    let phrase = if e.node == world::WORLD {
                        phrase.clone()
                    } else {
                        format!("{}: {phrase}", terminal(&e.node))
                    };
                    push_cell(&mut row, &fit(&phrase, width), width, tone, options.color)
                }
                _ if out_of_play.get(i) == Some(&true) => {
                    push_cell(&mut row, OUT, width, Tone::Plain, false)
                }
                _ => push_cell(&mut row, IDLE, width, Tone::Plain, false),
            }
        }
        end_line(&mut out, row);
        note_out_of_play(&mut out_of_play, lane, e);
    }
    out
}

/// Whether the lane's node is paused or down after `e`.
fn note_out_of_play(out_of_play: &mut [bool], lane: Option<usize>, e: &Event) {
    if let Some(l) = lane {
        match W::decode(e) {
            Ok(Some(W::Pause { .. } | W::Crash { .. })) => out_of_play[l] = true,
            Ok(Some(W::Resume | W::Restart)) => out_of_play[l] = false,
            _ => {}
        }
    }
}

/// A short human phrase for one event: `acquired lease 1, token 33`,
/// `→ storage: write client1/1 token=33`, `REJECTED client1/1 (token 33 < 34)`.
/// Kinds it does not know read `kind field=value …`. Always one line.
pub fn describe(event: &Event) -> String {
    let phrase = known_phrase(event).unwrap_or_else(|| {
        if event.fields.is_empty() {
            event.kind.to_string()
        } else {
            format!("{} {}", event.kind, event.fields_text())
        }
    });
    // A newline in a message summary must not break the table, nor an
    // escape sequence reach a terminal.
    terminal(phrase.trim())
}

/// The phrase of a kind this module knows, or `None` (unknown kind, or a
/// known kind missing a field it needs) so that [`describe`] falls back to
/// the generic form.
fn known_phrase(e: &Event) -> Option<String> {
    let text = |name: &str| e.get(name).map(Value::to_string);
    let w = match decoded(e) {
        Decoded::Domain(d) => return domain_phrase(d),
        Decoded::World(w) => w,
        Decoded::Other => return None,
    };
    Some(match w {
        W::Send { to, msg, .. } => format!("→ {to}: {msg}"),
        W::Deliver { from, msg, .. } => format!("← {from}: {msg}"),
        W::Drop { id, to, reason, .. } => {
            let mut s = format!("✂ dropped msg {id} to {to}");
            if let Some(reason) = reason {
                write!(s, " ({reason})").unwrap();
            }
            s
        }
        W::Duplicate { id, to } => format!("duplicated msg {id} to {to}"),
        W::Pause { .. } => match e.u64(world::field::DURATION_MS) {
            Some(ms) => format!("⏸ paused {}", seconds_ms(ms)),
            None => "⏸ paused".to_owned(),
        },
        W::Resume => "▶ resumed".to_owned(),
        W::Crash { .. } => match e.str(world::field::BY) {
            Some(by) => format!("✗ powered off by {by}"),
            None => "✗ crashed".to_owned(),
        },
        W::Restart => "↻ restarted".to_owned(),
        W::Clock { .. } => {
            let mut parts = Vec::new();
            if let Some(ns) = e.i64(world::field::OFFSET_NS) {
                parts.push(format!("offset {}", signed_seconds(ns)));
            }
            if let Some(rate) = e.get(world::field::RATE) {
                parts.push(format!("rate {rate}"));
            }
            if let Some(ns) = e.i64(world::field::JUMP_NS) {
                parts.push(format!("jump {}", signed_seconds(ns)));
            }
            if parts.is_empty() {
                return None;
            }
            format!("clock {}", parts.join(", "))
        }
        W::Partition { .. } => format!("✂ partition {}", text(world::field::GROUPS)?),
        W::Heal { .. } => match text(world::field::GROUPS) {
            Some(groups) => format!("healed {groups}"),
            None => "healed".to_owned(),
        },
        W::Link { .. } => {
            let mut s = format!(
                "⚑ link → {}: {}",
                e.str(world::field::TO)?,
                text(world::field::RULE)?
            );
            if let Some(ms) = e.u64(world::field::EXTRA_MS) {
                write!(s, " +{}", seconds_ms(ms)).unwrap();
            }
            match (e.u64(world::field::COUNT), e.u64(world::field::DURATION_MS)) {
                (_, Some(ms)) => write!(s, " for {}", seconds_ms(ms)).unwrap(),
                (Some(n), None) if n > 1 => write!(s, " ×{n}").unwrap(),
                _ => {}
            }
            let known = [
                world::field::TO,
                world::field::RULE,
                world::field::EXTRA_MS,
                world::field::COUNT,
                world::field::DURATION_MS,
            ];
            for (name, value) in &e.fields {
                if !known.contains(&name.as_str()) {
                    write!(s, " {name}={value}").unwrap();
                }
            }
            s
        }
    })
}

/// The phrase of a domain event (`None`: a check or lapse that names no
/// lease, which reads by its fields).
fn domain_phrase(d: DomainEvent<&str>) -> Option<String> {
    let token = d.token();
    Some(match d {
        D::Acquired { lease, .. } => match token {
            Some(t) => format!("acquired lease {lease}, token {t}"),
            None => format!("acquired lease {lease}"),
        },
        D::Denied => "denied".to_owned(),
        D::Read { value, version } => match version {
            Some(v) => format!("read value {value} (version {v})"),
            None => format!("read value {value}"),
        },
        D::Wrote { write, op, .. } => {
            let verb = if op == Op::Increment {
                "incremented"
            } else {
                "wrote"
            };
            with_token(format!("{verb} {write}"), token)
        }
        D::Acked { write, ok, .. } => {
            let verdict = if ok { "ok" } else { "REFUSED" };
            format!("ack {write} {verdict}")
        }
        D::LockReleased { client, lease } => format!("lease {lease} of {client} released"),
        D::Released { lease } => format!("released lease {lease}"),
        D::Granted { client, lease, .. } => match token {
            Some(t) => format!("granted {client} token {t}"),
            None => format!("granted {client} lease {lease}"),
        },
        // A server's own reason (a session its keepalive closed, an API
        // server's takeover) is no clock of its running out.
        D::Expired {
            client,
            lease,
            reason,
            ..
        } => match HoldEnd::of_expired(reason).reason_words() {
            Some(words) => format!("lease {lease} of {client} ended: {words}"),
            None => format!("lease {lease} of {client} expired"),
        },
        D::LockRenewed { client, lease, .. } => format!("renewed lease {lease} of {client}"),
        D::Renewed { lease, ttl_ms, .. } => match ttl_ms {
            Some(ms) => format!("renewed lease {lease} (+{})", seconds_ms(ms)),
            None => format!("renewed lease {lease}"),
        },
        D::Lost => "lost the lock".to_owned(),
        D::Checked {
            lease,
            remaining_ms,
        } => match remaining_ms {
            Some(ms) => format!("checked lease {}: {} left", lease?, seconds_ms(ms)),
            None => format!("checked lease {}", lease?),
        },
        D::Lapsed { lease, overdue_ms } => match overdue_ms {
            Some(ms) => format!("lease {} lapsed {} ago", lease?, seconds_ms(ms)),
            None => format!("lease {} lapsed", lease?),
        },
        D::Fenced { write, .. } => with_token(format!("fenced {write}"), token),
        D::Accepted { write, .. } => with_token(format!("accepted {write}"), token),
        D::Rejected {
            write,
            max_token,
            reason,
            ..
        } => match (token, max_token, reason) {
            (Some(t), Some(max), _) => format!("REJECTED {write} (token {t} < {max})"),
            (Some(t), None, _) => format!("REJECTED {write} (token {t})"),
            (None, _, Some(reason)) => format!("REJECTED {write} ({reason})"),
            (None, _, None) => format!("REJECTED {write}"),
        },
    })
}

fn with_token(s: String, token: Option<u64>) -> String {
    match token {
        Some(t) => format!("{s} (token {t})"),
        None => s,
    }
}

/// How a phrase is coloured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tone {
    Plain,
    Good,
    Warn,
    Bad,
}

impl Tone {
    fn of(e: &Event) -> Tone {
        match decoded(e) {
            Decoded::Domain(D::Rejected { .. }) | Decoded::World(W::Crash { .. }) => Tone::Bad,
            Decoded::World(
                W::Pause { .. }
                | W::Drop { .. }
                | W::Clock { .. }
                | W::Partition { .. }
                | W::Link { .. },
            )
            | Decoded::Domain(
                D::Expired { .. }
                | D::Denied
                | D::Lost
                | D::Lapsed { .. }
                | D::Acked { ok: false, .. },
            ) => Tone::Warn,
            Decoded::Domain(
                D::Acquired { .. }
                | D::Granted { .. }
                | D::Accepted { .. }
                | D::Renewed { .. }
                | D::LockRenewed { .. },
            ) => Tone::Good,
            _ => Tone::Plain,
        }
    }

    fn ansi(self) -> Option<&'static str> {
        match self {
            Tone::Plain => None,
            Tone::Good => Some("\x1b[32m"),
            Tone::Warn => Some("\x1b[33m"),
            Tone::Bad => Some("\x1b[31m"),
        }
    }
}

/// The tokens seen so far, to flag acceptances that look stale. It reads
/// only the journal, in order, like every renderer.
#[derive(Default)]
struct Fences {
    /// Highest token of any client grant (`acquired`).
    newest_grant: Option<u64>,
    /// Per storage node, the highest token it accepted (or said it holds,
    /// through a rejection's `max_token`).
    highest_accepted: BTreeMap<String, u64>,
}

impl Fences {
    /// The event's phrase and tone, with the marker of a stale-looking
    /// acceptance; then records the event's tokens.
    fn phrase(&mut self, e: &Event) -> (String, Tone) {
        let mut phrase = describe(e);
        let mut tone = Tone::of(e);
        match DomainEvent::decode(e) {
            Ok(Some(D::Acquired { token, .. })) => self.newest_grant = self.newest_grant.max(token),
            Ok(Some(D::Accepted { token, write, .. })) => {
                if let Some(t) = token {
                    let accepted = self.highest_accepted.get(e.node.as_str()).copied();
                    if let Some(max) = accepted.filter(|max| t < *max) {
                        phrase = format!("⚠ ACCEPTED {write} (token {t} < {max})");
                        tone = Tone::Bad;
                    } else if let Some(newest) = self.newest_grant.filter(|n| t < *n) {
                        phrase = format!("⚠ accepted {write} (token {t} < {newest})");
                        tone = Tone::Warn;
                    }
                }
                self.note_accepted(&e.node, token);
            }
            Ok(Some(D::Rejected { max_token, .. })) => self.note_accepted(&e.node, max_token),
            _ => {}
        }
        (phrase, tone)
    }

    fn note_accepted(&mut self, node: &str, token: Option<u64>) {
        if let Some(t) = token {
            let max = self.highest_accepted.entry(node.to_owned()).or_insert(t);
            *max = (*max).max(t);
        }
    }
}

/// `text` cut to at most `width` chars, ending in `…` when cut.
fn fit(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_owned();
    }
    let head: String = text.chars().take(width.saturating_sub(1)).collect();
    format!("{}…", head.trim_end())
}

/// Appends a cell holding `text` (already fitted), padded to `width` chars.
fn push_cell(row: &mut String, text: &str, width: usize, tone: Tone, color: bool) {
    match tone.ansi().filter(|_| color) {
        Some(code) => write!(row, "{code}{text}\x1b[0m").unwrap(),
        None => row.push_str(text),
    }
    let used = text.chars().count();
    row.extend(std::iter::repeat(' ').take(width.saturating_sub(used)));
}

fn end_line(out: &mut String, row: String) {
    out.push_str(row.trim_end());
    out.push('\n');
}

/// A duration journalled in milliseconds, printed like true times.
fn seconds_ms(ms: u64) -> String {
    seconds(ms.saturating_mul(1_000_000))
}

fn signed_seconds(ns: i64) -> String {
    let sign = if ns < 0 { '-' } else { '+' };
    format!("{sign}{}", seconds(ns.unsigned_abs()))
}
