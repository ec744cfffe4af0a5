//! The journal: the append-only truth of a run.
//!
//! Every world event (send, deliver, pause, crash, …) and every actor event
//! (emitted through `tracing`, see [`crate::emit!`]) becomes one [`Event`]. Renderers
//! and checkers read the journal and nothing else.
//!
//! A run journals thousands of events that repeat a few names, so an
//! event's node, kind and field names are [`Name`]s, not `String`s: the
//! world's constant kinds and field names are `&'static str`s, and each node
//! name is one `Arc<str>` that every event of that node, and every string
//! field naming that node (`to`, `from`, `client`, …), shares. A message's
//! summary is made once when it is sent, and shared by its `send`,
//! `deliver` and `drop` events. A `Name` reads like a `&str` (`e.node ==
//! "lock"`), and the JSON form of an event does not depend on how its names
//! are stored. Readers do not interpret kinds and fields by name: they
//! decode an event into a typed vocabulary ([`decode`]; the world's is
//! [`crate::events::WorldEvent`]) and match on that.
//!
//! ```
//! use sim::journal::{Event, Journal, Value};
//! let mut journal = Journal::default();
//! journal.push(Event::new(0, 3_000_000, "lock", 3_000_000, "granted")
//!     .with("client", "client1")
//!     .with("token", 33u64));
//! assert_eq!(journal.events()[0].u64("token"), Some(33));
//! assert_eq!(
//!     journal.to_jsonl(),
//!     "{\"seq\":0,\"t_ns\":3000000,\"node\":\"lock\",\"local_ns\":3000000,\
//!      \"kind\":\"granted\",\"fields\":{\"client\":\"client1\",\"token\":33}}\n"
//! );
//! ```

use std::cell::RefCell;
use std::fmt::{self, Write as _};

pub mod decode;
mod name;

pub use decode::DecodeError;
pub use name::Name;

/// A typed field value of an event.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// An unsigned integer (tokens, ids, counts).
    U64(u64),
    /// A signed integer (local times, which a clock jump can make negative).
    I64(i64),
    /// A flag.
    Bool(bool),
    /// A string (node names, message summaries): a [`Name`], so that a
    /// node name in a field shares the world's copy.
    Str(Name),
    /// A float (clock rates).
    F64(f64),
}

impl Value {
    /// The value as an unsigned integer, when it is one (or a non-negative `I64`).
    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            Value::U64(v) => Some(v),
            Value::I64(v) => u64::try_from(v).ok(),
            _ => None,
        }
    }

    /// The value as a signed integer, when it is an integer that fits.
    pub fn as_i64(&self) -> Option<i64> {
        match *self {
            Value::I64(v) => Some(v),
            Value::U64(v) => i64::try_from(v).ok(),
            _ => None,
        }
    }

    /// The value as a string slice, when it is a string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The value as a flag, when it is one.
    pub fn as_bool(&self) -> Option<bool> {
        match *self {
            Value::Bool(b) => Some(b),
            _ => None,
        }
    }

    fn write_json(&self, out: &mut String) {
        match self {
            Value::U64(v) => push_u64(out, *v),
            Value::I64(v) => push_i64(out, *v),
            Value::Bool(v) => out.push_str(if *v { "true" } else { "false" }),
            Value::Str(s) => write_json_str(out, s),
            // Floats print with Rust's shortest round-trip form, which is the
            // same on every platform; non-finite values are not JSON, so they
            // become strings.
            Value::F64(v) if v.is_finite() => write!(out, "{v:?}").unwrap(),
            Value::F64(v) => write_json_str(out, &v.to_string()),
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::U64(v) => write!(f, "{v}"),
            Value::I64(v) => write!(f, "{v}"),
            Value::Bool(v) => write!(f, "{v}"),
            Value::Str(s) => f.write_str(s),
            Value::F64(v) => write!(f, "{v}"),
        }
    }
}

macro_rules! value_from {
    ($($t:ty => $variant:ident as $as:ty),* $(,)?) => {
        $(impl From<$t> for Value {
            fn from(v: $t) -> Self {
                Value::$variant(v as $as)
            }
        })*
    };
}
value_from!(u64 => U64 as u64, u32 => U64 as u64, usize => U64 as u64, i64 => I64 as i64, i32 => I64 as i64, f64 => F64 as f64);

impl From<bool> for Value {
    fn from(v: bool) -> Self {
        Value::Bool(v)
    }
}

impl From<&str> for Value {
    fn from(v: &str) -> Self {
        Value::Str(Name::from(v))
    }
}

impl From<String> for Value {
    fn from(v: String) -> Self {
        Value::Str(Name::from(v))
    }
}

impl From<Name> for Value {
    fn from(v: Name) -> Self {
        Value::Str(v)
    }
}

impl From<&Name> for Value {
    fn from(v: &Name) -> Self {
        Value::Str(v.clone())
    }
}

/// One entry of the journal.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    /// Position in the journal, from 0, without gaps.
    pub seq: u64,
    /// True simulated time since the start of the run, in nanoseconds.
    pub t_ns: u64,
    /// The node the event happened on (for a message: the sender on `send`,
    /// the receiver on `deliver`).
    pub node: Name,
    /// The node's own wall clock reading when the event happened, in
    /// nanoseconds; it differs from `t_ns` by the node's skew, drift and jumps.
    pub local_ns: i64,
    /// What happened: `send`, `pause`, `acquired`, `accepted`, …
    pub kind: Name,
    /// Typed fields, in the order they were given.
    pub fields: Vec<(Name, Value)>,
}

impl Event {
    /// A new event without fields. `node` and `kind` are anything a
    /// [`Name`] is made from (`&str`, `String`, a `Name`).
    pub fn new(
        seq: u64,
        t_ns: u64,
        node: impl Into<Name>,
        local_ns: i64,
        kind: impl Into<Name>,
    ) -> Self {
        Event {
            seq,
            t_ns,
            node: node.into(),
            local_ns,
            kind: kind.into(),
            fields: Vec::new(),
        }
    }

    /// Adds a field (builder style, for tests and world events).
    pub fn with(mut self, name: impl Into<Name>, value: impl Into<Value>) -> Self {
        self.fields.push((name.into(), value.into()));
        self
    }

    /// The field named `name`, if present.
    #[inline]
    pub fn get(&self, name: &str) -> Option<&Value> {
        // A name of another length is passed over before any comparison of
        // bytes; one of the same copy is found without one.
        self.fields
            .iter()
            .find(|(n, _)| {
                let n = n.as_str();
                n.len() == name.len()
                    && (std::ptr::eq(n.as_ptr(), name.as_ptr()) || n.as_bytes() == name.as_bytes())
            })
            .map(|(_, v)| v)
    }

    /// The field `name` as an unsigned integer.
    pub fn u64(&self, name: &str) -> Option<u64> {
        self.get(name).and_then(Value::as_u64)
    }

    /// The field `name` as a signed integer.
    pub fn i64(&self, name: &str) -> Option<i64> {
        self.get(name).and_then(Value::as_i64)
    }

    /// The field `name` as a string.
    pub fn str(&self, name: &str) -> Option<&str> {
        self.get(name).and_then(Value::as_str)
    }

    /// The field `name` as a flag.
    pub fn bool(&self, name: &str) -> Option<bool> {
        self.get(name).and_then(Value::as_bool)
    }

    /// True time in milliseconds, for display.
    pub fn t_ms(&self) -> f64 {
        self.t_ns as f64 / 1e6
    }

    /// Whether this event is `node:kind`.
    pub fn is(&self, node: &str, kind: &str) -> bool {
        self.node == node && self.kind == kind
    }

    /// Appends the canonical JSON form of the event (no trailing newline).
    pub fn write_json(&self, out: &mut String) {
        write!(
            out,
            "{{\"seq\":{},\"t_ns\":{},\"node\":",
            self.seq, self.t_ns
        )
        .unwrap();
        write_json_str(out, &self.node);
        write!(out, ",\"local_ns\":{},\"kind\":", self.local_ns).unwrap();
        write_json_str(out, &self.kind);
        out.push_str(",\"fields\":{");
        for (i, (name, value)) in self.fields.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            write_json_str(out, name);
            out.push(':');
            value.write_json(out);
        }
        out.push_str("}}");
    }

    /// The fields as `name=value` pairs separated by spaces, for humans.
    pub fn fields_text(&self) -> String {
        let mut s = String::new();
        for (i, (name, value)) in self.fields.iter().enumerate() {
            if i > 0 {
                s.push(' ');
            }
            write!(s, "{name}={value}").unwrap();
        }
        s
    }
}

/// Appends the decimal digits of `v`: the journal is serialized once per
/// run (for its hash), so this path avoids the formatting machinery.
fn push_u64(out: &mut String, mut v: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    // The bytes are ASCII digits.
    out.push_str(std::str::from_utf8(&digits[i..]).expect("ASCII digits"));
}

fn push_i64(out: &mut String, v: i64) {
    if v < 0 {
        out.push('-');
    }
    push_u64(out, v.unsigned_abs());
}

/// A true time as seconds with 3 decimals (`16.012s`), truncated to the
/// millisecond by integer arithmetic, so every platform prints the same text.
/// Reports, explanations and the CLI all print times this way.
pub fn seconds(t_ns: u64) -> String {
    let ms = t_ns / 1_000_000;
    format!("{}.{:03}s", ms / 1000, ms % 1000)
}

/// Writes `s` as a JSON string literal.
fn write_json_str(out: &mut String, s: &str) {
    // Most strings need no escaping: copy them whole.
    if !s.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20) {
        out.push('"');
        out.push_str(s);
        out.push('"');
        return;
    }
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => write!(out, "\\u{:04x}", c as u32).unwrap(),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// The append-only list of events of one run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Journal {
    events: Vec<Event>,
}

impl Journal {
    /// Appends an event. Its `seq` must be the journal's length: the journal
    /// has no gaps and no reordering.
    pub fn push(&mut self, event: Event) {
        assert_eq!(
            event.seq,
            self.events.len() as u64,
            "journal sequence numbers must be contiguous"
        );
        if let Some(last) = self.events.last() {
            assert!(event.t_ns >= last.t_ns, "journal time must not go back");
        }
        // One thread-local look per event when no sink is set.
        let _ = SINK.try_with(|sink| {
            if let Ok(mut sink) = sink.try_borrow_mut() {
                if let Some(sink) = sink.as_mut() {
                    sink(&event);
                }
            }
        });
        self.events.push(event);
    }

    /// Builds a journal from events, renumbering `seq` from 0 (for tests and
    /// hand-built journals). Events must be in true-time order.
    pub fn from_events(events: impl IntoIterator<Item = Event>) -> Self {
        let mut journal = Journal::default();
        for (i, mut e) in events.into_iter().enumerate() {
            e.seq = i as u64;
            journal.push(e);
        }
        journal
    }

    /// All events, in order.
    pub fn events(&self) -> &[Event] {
        &self.events
    }

    /// Number of events.
    pub fn len(&self) -> usize {
        self.events.len()
    }

    /// Whether the journal is empty.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// The canonical serialization: one JSON object per line, fields in a fixed
    /// order, integers for times. Byte-identical for identical runs.
    pub fn to_jsonl(&self) -> String {
        let mut out = String::with_capacity(self.events.len() * 128);
        for e in &self.events {
            e.write_json(&mut out);
            out.push('\n');
        }
        out
    }

    /// A stable 64-bit hash (FNV-1a) of the canonical serialization, as 16
    /// hex digits. Equal journals give equal hashes on every platform.
    pub fn hash(&self) -> String {
        let mut h = Fnv1a::default();
        let mut line = String::with_capacity(256);
        for e in &self.events {
            line.clear();
            e.write_json(&mut line);
            line.push('\n');
            h.write(line.as_bytes());
        }
        format!("{:016x}", h.0)
    }
}

/// What [`set_sink`] sends each event to.
pub type Sink = Box<dyn FnMut(&Event)>;

thread_local! {
    static SINK: RefCell<Option<Sink>> = const { RefCell::new(None) };
}

/// From now on, every event journaled on the calling thread (by any
/// [`Journal::push`] there) is also given to `sink` as it is journaled
/// (`None`: to nobody). Returns the sink set before. A run that never ends
/// (a handler that loops) keeps its journal on its thread; its sink shows
/// the events up to the loop to whoever waits for it ([`crate::run_within`]
/// does so). A sink must not journal events itself (they would not reach it).
pub fn set_sink(sink: Option<Sink>) -> Option<Sink> {
    SINK.with(|s| std::mem::replace(&mut *s.borrow_mut(), sink))
}

/// The hash [`Journal::hash`] gives a journal whose events' JSON forms
/// ([`Event::write_json`]) are `lines`, in order: a journal's prefix known
/// only by its lines (streamed from another process) is hashed so.
pub fn hash_lines<'a>(lines: impl IntoIterator<Item = &'a str>) -> String {
    let mut h = Fnv1a::default();
    for line in lines {
        h.write(line.as_bytes());
        h.write(b"\n");
    }
    format!("{:016x}", h.0)
}

/// 64-bit FNV-1a: tiny, stable across platforms and versions, and good enough
/// to tell two traces apart.
struct Fnv1a(u64);

impl Default for Fnv1a {
    fn default() -> Self {
        Fnv1a(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv1a {
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_escapes_and_orders_fields() {
        let e = Event::new(0, 1, "n\"1", -5, "k")
            .with("b", true)
            .with("a", "x\ny");
        let mut s = String::new();
        e.write_json(&mut s);
        assert_eq!(
            s,
            r#"{"seq":0,"t_ns":1,"node":"n\"1","local_ns":-5,"kind":"k","fields":{"b":true,"a":"x\ny"}}"#
        );
    }

    #[test]
    fn integers_print_like_display() {
        for v in [0u64, 7, 10, 1_000_000_007, u64::MAX] {
            let mut out = String::new();
            push_u64(&mut out, v);
            assert_eq!(out, v.to_string());
        }
        for v in [0i64, -1, 42, i64::MIN, i64::MAX] {
            let mut out = String::new();
            push_i64(&mut out, v);
            assert_eq!(out, v.to_string());
        }
    }

    #[test]
    fn hash_tells_journals_apart_and_is_stable() {
        let a = Journal::from_events([Event::new(0, 1, "a", 1, "x")]);
        let b = Journal::from_events([Event::new(0, 2, "a", 2, "x")]);
        assert_ne!(a.hash(), b.hash());
        assert_eq!(a.hash(), a.clone().hash());
        // Pinned: the hash is part of the reproducibility contract.
        assert_eq!(
            Journal::default().hash(),
            format!("{:016x}", 0xcbf2_9ce4_8422_2325u64)
        );
    }

    #[test]
    fn lines_hash_as_their_journal() {
        let journal = Journal::from_events([
            Event::new(0, 1, "a", 1, "x").with("n", 3u64),
            Event::new(0, 2, "b", -2, "y\"z"),
        ]);
        let jsonl = journal.to_jsonl();
        assert_eq!(hash_lines(jsonl.lines()), journal.hash());
        assert_eq!(hash_lines([]), Journal::default().hash());
    }

    #[test]
    fn a_sink_sees_every_event_pushed_on_its_thread() {
        let seen = std::rc::Rc::new(RefCell::new(Vec::new()));
        let mine = seen.clone();
        assert!(set_sink(Some(Box::new(move |e: &Event| {
            mine.borrow_mut().push(e.kind.to_string())
        })))
        .is_none());
        let mut j = Journal::default();
        j.push(Event::new(0, 0, "a", 0, "x"));
        j.push(Event::new(1, 0, "a", 0, "y"));
        assert!(set_sink(None).is_some());
        j.push(Event::new(2, 0, "a", 0, "z"));
        assert_eq!(*seen.borrow(), ["x", "y"]);
    }

    #[test]
    #[should_panic(expected = "contiguous")]
    fn push_rejects_gaps() {
        let mut j = Journal::default();
        j.push(Event::new(1, 0, "a", 0, "x"));
    }
}
