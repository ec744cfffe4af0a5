//! Typed reading of an event's fields: the one place where a field's
//! absence or wrong type becomes a [`DecodeError`] instead of a `None`
//! that each reader interprets its own way.
//!
//! A vocabulary (the world's [`crate::events::WorldEvent`], a domain's own)
//! decodes from any [`Fields`]: a journal [`Event`], or the [`RawEvent`] that
//! its serde form deserializes into. Strings borrow from the source, so
//! decoding a journal allocates nothing; a vocabulary's owned form (its
//! strings `String`s) is what deserializes.
//!
//! ```
//! use sim::journal::{decode::Fields, Event};
//! let e = Event::new(4, 0, "lock", 0, "granted").with("lease", 1u64).with("client", "c1");
//! let f = &e;
//! assert_eq!(f.req::<u64>("lease"), Ok(1));
//! assert_eq!(f.opt::<u64>("token"), Ok(None));
//! assert_eq!(
//!     f.req::<u64>("client").unwrap_err().to_string(),
//!     "event 4 (lock granted): field `client` is \"c1\", not an unsigned integer"
//! );
//! ```

use std::collections::BTreeMap;
use std::fmt;

use serde::Deserialize;

use super::{Event, Value};

/// One field value as a decoder sees it, strings borrowed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Field<'a> {
    /// An unsigned integer.
    U64(u64),
    /// A negative integer.
    I64(i64),
    /// A float.
    F64(f64),
    /// A flag.
    Bool(bool),
    /// A string.
    Str(&'a str),
}

impl fmt::Display for Field<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Field::U64(v) => write!(f, "{v}"),
            Field::I64(v) => write!(f, "{v}"),
            Field::F64(v) => write!(f, "{v}"),
            Field::Bool(v) => write!(f, "{v}"),
            Field::Str(s) => write!(f, "{s:?}"),
        }
    }
}

/// A type a field decodes into.
pub trait FromField<'a>: Sized {
    /// What the field must be, for errors (`an unsigned integer`).
    const EXPECTED: &'static str;
    /// The value, when the field has this type.
    fn from_field(field: Field<'a>) -> Option<Self>;
}

impl<'a> FromField<'a> for u64 {
    const EXPECTED: &'static str = "an unsigned integer";
    fn from_field(field: Field<'a>) -> Option<Self> {
        match field {
            Field::U64(v) => Some(v),
            Field::I64(v) => u64::try_from(v).ok(),
            _ => None,
        }
    }
}

impl<'a> FromField<'a> for i64 {
    const EXPECTED: &'static str = "an integer";
    fn from_field(field: Field<'a>) -> Option<Self> {
        match field {
            Field::I64(v) => Some(v),
            Field::U64(v) => i64::try_from(v).ok(),
            _ => None,
        }
    }
}

impl<'a> FromField<'a> for f64 {
    const EXPECTED: &'static str = "a number";
    fn from_field(field: Field<'a>) -> Option<Self> {
        match field {
            Field::F64(v) => Some(v),
            Field::U64(v) => Some(v as f64),
            Field::I64(v) => Some(v as f64),
            _ => None,
        }
    }
}

impl<'a> FromField<'a> for bool {
    const EXPECTED: &'static str = "a flag";
    fn from_field(field: Field<'a>) -> Option<Self> {
        match field {
            Field::Bool(v) => Some(v),
            _ => None,
        }
    }
}

impl<'a> FromField<'a> for &'a str {
    const EXPECTED: &'static str = "a string";
    fn from_field(field: Field<'a>) -> Option<Self> {
        match field {
            Field::Str(s) => Some(s),
            _ => None,
        }
    }
}

/// Why an event did not decode (boxed: decoding returns it on a path that
/// must stay small when all is well).
#[derive(Clone, Debug, PartialEq)]
pub struct DecodeError(Box<Details>);

impl DecodeError {
    /// What went wrong, and where.
    pub fn details(&self) -> &Details {
        &self.0
    }
}

/// The event and field a [`DecodeError`] is about.
#[derive(Clone, Debug, PartialEq)]
pub struct Details {
    /// The event's journal position (`None`: not from a journal).
    pub seq: Option<u64>,
    /// The event's node (empty: not known).
    pub node: String,
    /// The event's kind.
    pub kind: String,
    /// The field at fault.
    pub field: &'static str,
    /// What is wrong with it.
    pub problem: Problem,
}

/// What is wrong with a field.
#[derive(Clone, Debug, PartialEq)]
pub enum Problem {
    /// The kind needs it and the event has none.
    Missing,
    /// It has another type (the value as found, and what it should be).
    WrongType {
        /// The value found, as text.
        found: String,
        /// What it should be (`an unsigned integer`).
        expected: &'static str,
    },
    /// A string field holds a value the kind does not know (`op = "swap"`).
    Unknown {
        /// The value found.
        found: String,
        /// The values it may take.
        expected: Vec<&'static str>,
    },
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = &self.0;
        match d.seq {
            Some(seq) => write!(f, "event {seq} (")?,
            None => write!(f, "event (")?,
        }
        if !d.node.is_empty() {
            write!(f, "{} ", d.node)?;
        }
        write!(f, "{}): field `{}` ", d.kind, d.field)?;
        match &d.problem {
            Problem::Missing => write!(f, "is missing"),
            Problem::WrongType { found, expected } => write!(f, "is {found}, not {expected}"),
            Problem::Unknown { found, expected } => {
                write!(f, "is {found:?}, not one of {}", expected.join(", "))
            }
        }
    }
}

impl std::error::Error for DecodeError {}

/// Where a decoder reads an event's kind and fields from.
pub trait Fields<'a> {
    /// The event's kind.
    fn kind(&self) -> &'a str;
    /// The field `name`, if present.
    fn field(&self, name: &str) -> Option<Field<'a>>;
    /// The journal position and node, for errors.
    fn origin(&self) -> (Option<u64>, &str);

    /// An error about field `name` of this event.
    #[cold]
    fn error(&self, name: &'static str, problem: Problem) -> DecodeError {
        let (seq, node) = self.origin();
        DecodeError(Box::new(Details {
            seq,
            node: node.to_owned(),
            kind: self.kind().to_owned(),
            field: name,
            problem,
        }))
    }

    /// The field `name`, which this kind needs.
    #[inline(always)]
    fn req<T: FromField<'a>>(&self, name: &'static str) -> Result<T, DecodeError> {
        self.opt(name)?
            .ok_or_else(|| self.error(name, Problem::Missing))
    }

    /// The field `name`, which this kind may leave out.
    #[inline(always)]
    fn opt<T: FromField<'a>>(&self, name: &'static str) -> Result<Option<T>, DecodeError> {
        match self.field(name) {
            None => Ok(None),
            Some(f) => T::from_field(f).map(Some).ok_or_else(|| {
                self.error(
                    name,
                    Problem::WrongType {
                        found: f.to_string(),
                        expected: T::EXPECTED,
                    },
                )
            }),
        }
    }
}

impl<'a> Fields<'a> for &'a Event {
    fn kind(&self) -> &'a str {
        self.kind.as_str()
    }

    #[inline]
    fn field(&self, name: &str) -> Option<Field<'a>> {
        self.get(name).map(|v| match v {
            Value::U64(v) => Field::U64(*v),
            Value::I64(v) => Field::I64(*v),
            Value::F64(v) => Field::F64(*v),
            Value::Bool(v) => Field::Bool(*v),
            Value::Str(s) => Field::Str(s.as_str()),
        })
    }

    fn origin(&self) -> (Option<u64>, &str) {
        (Some(self.seq), self.node.as_str())
    }
}

/// The serde form of an event: its `kind` beside its fields, flat
/// (`{"kind":"granted","client":"client1","lease":1}`). A vocabulary's
/// owned form deserializes through this and the same decoder as a journal
/// event.
#[derive(Debug, Deserialize)]
pub struct RawEvent {
    /// The event's kind.
    pub kind: String,
    /// Every other field.
    #[serde(flatten)]
    pub fields: BTreeMap<String, RawField>,
}

/// A field of a [`RawEvent`].
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum RawField {
    /// An unsigned integer.
    U64(u64),
    /// A negative integer.
    I64(i64),
    /// A float.
    F64(f64),
    /// A flag.
    Bool(bool),
    /// A string.
    Str(String),
}

impl<'a> Fields<'a> for &'a RawEvent {
    fn kind(&self) -> &'a str {
        &self.kind
    }

    fn field(&self, name: &str) -> Option<Field<'a>> {
        self.fields.get(name).map(|f| match f {
            RawField::U64(v) => Field::U64(*v),
            RawField::I64(v) => Field::I64(*v),
            RawField::F64(v) => Field::F64(*v),
            RawField::Bool(v) => Field::Bool(*v),
            RawField::Str(s) => Field::Str(s),
        })
    }

    fn origin(&self) -> (Option<u64>, &str) {
        (None, "")
    }
}

/// Reads a string field that takes one of a closed set of values.
pub fn one_of<'a, T: Copy>(
    source: &impl Fields<'a>,
    name: &'static str,
    values: &'static [(&'static str, T)],
) -> Result<Option<T>, DecodeError> {
    let Some(text) = source.opt::<&str>(name)? else {
        return Ok(None);
    };
    values
        .iter()
        .find(|(n, _)| *n == text)
        .map(|(_, v)| Some(*v))
        .ok_or_else(|| {
            source.error(
                name,
                Problem::Unknown {
                    found: text.to_owned(),
                    expected: values.iter().map(|(n, _)| *n).collect(),
                },
            )
        })
}
