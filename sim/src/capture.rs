//! Captures actors' `tracing` events into the journal.
//!
//! Actors emit events with [`crate::emit!`], a thin wrapper over
//! `tracing::info!` with target `sim` and a `kind` field. A
//! `tracing-subscriber` layer, installed per run as the thread's default
//! dispatcher, collects them into a thread-local buffer; the world drains the
//! buffer after each handler and stamps every event with its node and times.
//! Because the dispatcher is thread-scoped and a thread runs one seed at a
//! time (draining the buffer when each run starts), parallel seeds never
//! mix, and neither do seeds run one after the other on one thread.

use std::cell::RefCell;
use std::fmt;

use tracing::field::{Field, Visit};
use tracing::{Event as TracingEvent, Metadata, Subscriber};
use tracing_subscriber::layer::{Context as LayerContext, Layer};

use crate::journal::{Name, Value};

/// Target of the events the journal records.
pub const TARGET: &str = "sim";

/// An actor event before the world stamps it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct RawEvent {
    pub kind: Name,
    pub fields: Vec<(Name, Value)>,
}

thread_local! {
    static BUFFER: RefCell<Vec<RawEvent>> = const { RefCell::new(Vec::new()) };
    static VOCABULARY: RefCell<Vocabulary> = const { RefCell::new(Vocabulary::new()) };
}

/// Takes the events captured on this thread since the last call.
pub(crate) fn drain() -> Vec<RawEvent> {
    BUFFER.with(|b| std::mem::take(&mut *b.borrow_mut()))
}

/// Takes the events captured on this thread since the last call into
/// `into` (emptied first), keeping both buffers' allocations.
pub(crate) fn drain_into(into: &mut Vec<RawEvent>) {
    into.clear();
    BUFFER.with(|b| std::mem::swap(&mut *b.borrow_mut(), into));
}

/// The names events captured on this thread repeat, so that each becomes
/// a clone of one shared [`Name`] instead of a fresh copy: the node names
/// of the run (given by the world when it starts: a string field equal to
/// one, such as `client = "client1"`, shares the world's copy) and every
/// event kind seen so far.
///
/// It is a cache and nothing more: a `Name` compares, orders and prints as
/// its text, so what the cache holds (left by an earlier run on this
/// thread, or not) never changes a journal.
struct Vocabulary {
    /// Sorted by text.
    nodes: Vec<Name>,
    /// Sorted by text, at most [`Vocabulary::MAX_KINDS`].
    kinds: Vec<Name>,
    /// Scratch text for values that arrive formatted (`%x`, `?x`).
    scratch: String,
}

impl Vocabulary {
    /// A design's vocabulary is a few dozen kinds; kinds made up at run
    /// time beyond this bound are simply not shared.
    const MAX_KINDS: usize = 256;

    const fn new() -> Self {
        Vocabulary {
            nodes: Vec::new(),
            kinds: Vec::new(),
            scratch: String::new(),
        }
    }

    fn find(list: &[Name], text: &str) -> Result<usize, usize> {
        list.binary_search_by(|n| n.as_str().cmp(text))
    }

    fn value(&self, text: &str) -> Name {
        match Self::find(&self.nodes, text) {
            Ok(i) => self.nodes[i].clone(),
            Err(_) => Name::from(text),
        }
    }

    fn kind(&mut self, text: &str) -> Name {
        match Self::find(&self.kinds, text) {
            Ok(i) => self.kinds[i].clone(),
            Err(at) => {
                let name = Name::from(text);
                if self.kinds.len() < Self::MAX_KINDS {
                    self.kinds.insert(at, name.clone());
                }
                name
            }
        }
    }
}

/// Makes `names` (a run's node names) the ones captured string fields share.
pub(crate) fn share_node_names(names: &[Name]) {
    VOCABULARY.with(|v| {
        let mut v = v.borrow_mut();
        v.nodes.clear();
        v.nodes.extend(names.iter().cloned());
        v.nodes.sort_unstable();
        v.nodes.dedup();
    });
}

/// How many events were captured since the last drain.
pub(crate) fn len() -> usize {
    BUFFER.with(|b| b.borrow().len())
}

/// Whether events were captured since the last drain.
#[cfg(test)]
pub(crate) fn is_empty() -> bool {
    len() == 0
}

/// The layer that records `sim` events.
#[derive(Clone, Copy, Debug, Default)]
pub struct JournalLayer;

impl<S: Subscriber> Layer<S> for JournalLayer {
    fn enabled(&self, metadata: &Metadata<'_>, _ctx: LayerContext<'_, S>) -> bool {
        metadata.target() == TARGET
    }

    fn on_event(&self, event: &TracingEvent<'_>, _ctx: LayerContext<'_, S>) {
        if event.metadata().target() != TARGET {
            return;
        }
        let mut visitor = Collect::default();
        event.record(&mut visitor);
        let Some(kind) = visitor.kind else {
            return;
        };
        BUFFER.with(|b| {
            b.borrow_mut().push(RawEvent {
                kind,
                fields: visitor.fields,
            })
        });
    }
}

/// Installs the journal layer as this thread's default dispatcher until the
/// guard drops.
///
/// The subscriber (a `tracing-subscriber` registry with the layer) is made
/// once per process and shared: the layer keeps no state of its own (events
/// go to the calling thread's buffer), and building a registry costs more
/// than a whole simulated run of figure 9-6.
pub fn install() -> tracing::dispatcher::DefaultGuard {
    use tracing_subscriber::layer::SubscriberExt;
    static DISPATCH: std::sync::OnceLock<tracing::Dispatch> = std::sync::OnceLock::new();
    drain();
    let dispatch = DISPATCH
        .get_or_init(|| tracing::Dispatch::new(tracing_subscriber::registry().with(JournalLayer)));
    tracing::dispatcher::set_default(dispatch)
}

#[derive(Default)]
struct Collect {
    kind: Option<Name>,
    fields: Vec<(Name, Value)>,
}

impl Collect {
    fn put(&mut self, field: &Field, value: Value) {
        // Field names are the `&'static str`s written in the handler's source.
        self.fields.push((Name::from_static(field.name()), value));
    }

    fn put_str(&mut self, field: &Field, value: &str) {
        VOCABULARY.with(|v| {
            let mut v = v.borrow_mut();
            if field.name() == "kind" {
                self.kind = Some(v.kind(value));
            } else {
                let value = v.value(value);
                self.put(field, Value::Str(value));
            }
        });
    }
}

impl Visit for Collect {
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.put(field, Value::U64(value));
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.put(field, Value::I64(value));
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.put(field, Value::Bool(value));
    }
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.put(field, Value::F64(value));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.put_str(field, value);
    }
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        use std::fmt::Write as _;
        // `%x` (Display) arrives here too, already formatted as Display.
        let mut text = VOCABULARY.with(|v| std::mem::take(&mut v.borrow_mut().scratch));
        text.clear();
        write!(text, "{value:?}").expect("formatting into a String");
        self.put_str(field, &text);
        VOCABULARY.with(|v| v.borrow_mut().scratch = text);
    }
}

/// Emits a journal event from inside an actor handler.
///
/// The first argument is the event kind; the rest are `tracing` fields
/// (`name = value`, `name = %display`, `name = ?debug`). `Option` values are
/// recorded only when `Some`.
///
/// ```
/// # let (lease, token) = (1u64, Some(33u64));
/// sim::emit!("acquired", lease = lease, token = token, client = "client1");
/// ```
#[macro_export]
macro_rules! emit {
    ($kind:expr $(, $($fields:tt)*)?) => {
        $crate::__private::tracing::info!(target: "sim", kind = $kind $(, $($fields)*)?)
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn captures_typed_fields_in_order_and_skips_none() {
        let _guard = install();
        let none: Option<u64> = None;
        crate::emit!(
            "acquired",
            lease = 1u64,
            token = Some(33u64),
            missing = none,
            who = "c1",
            ok = true,
            skew = -5i64
        );
        tracing::info!(target: "other", kind = "ignored");
        let events = drain();
        assert_eq!(
            events,
            vec![RawEvent {
                kind: "acquired".into(),
                fields: vec![
                    ("lease".into(), Value::U64(1)),
                    ("token".into(), Value::U64(33)),
                    ("who".into(), Value::Str("c1".into())),
                    ("ok".into(), Value::Bool(true)),
                    ("skew".into(), Value::I64(-5)),
                ],
            }]
        );
    }

    #[test]
    fn node_names_and_kinds_are_shared_not_copied() {
        let _guard = install();
        let names = [Name::from("client1"), Name::from("lock")];
        share_node_names(&names);
        crate::emit!("granted", client = "client1", write = "client1/1");
        crate::emit!("granted", client = %"lock");
        let events = drain();
        let same = |a: &str, b: &str| std::ptr::eq(a.as_ptr(), b.as_ptr());
        let value = |e: &RawEvent, i: usize| e.fields[i].1.as_str().unwrap().to_owned();
        assert_eq!(value(&events[0], 0), "client1");
        assert!(same(events[0].fields[0].1.as_str().unwrap(), &names[0]));
        assert!(same(events[1].fields[0].1.as_str().unwrap(), &names[1]));
        // A value that names no node is a copy of its own.
        assert_eq!(value(&events[0], 1), "client1/1");
        assert!(same(&events[0].kind, &events[1].kind));
    }

    #[test]
    fn other_threads_do_not_see_this_threads_events() {
        let _guard = install();
        std::thread::spawn(|| {
            let _guard = install();
            crate::emit!("elsewhere");
            assert_eq!(drain().len(), 1);
        })
        .join()
        .unwrap();
        assert!(is_empty());
    }
}
