//! A small reader over `toml_edit`'s spanned document: typed accessors whose
//! errors point at the offending key or value, and tables that remember which
//! keys were read so that every other key is reported as unknown.

use std::ops::Range;
use std::time::Duration;

use toml_edit::{ImDocument, Item, TableLike, Value};

use super::error::ScenarioError;

pub(crate) use crate::design::catalog::MAX_DURATION;

pub(crate) type Result<T> = std::result::Result<T, ScenarioError>;

/// The file being read: its name (for errors) and its text.
#[derive(Clone, Copy)]
pub(crate) struct Source<'a> {
    pub file: &'a str,
    pub text: &'a str,
}

impl<'a> Source<'a> {
    pub fn error(&self, span: Range<usize>, message: impl Into<String>) -> ScenarioError {
        ScenarioError::at(self.file, self.text, span, message.into())
    }

    /// Parses the text, turning a syntax error into a positioned error.
    pub fn parse(&self) -> Result<ImDocument<&'a str>> {
        ImDocument::parse(self.text).map_err(|e| {
            let span = e.span().unwrap_or(0..0);
            if let Some(key) = missing_value(self.text, span.start) {
                let message = format!(
                    "invalid TOML: `{} =` has no value: write one after `=`, such as \"10s\" \
                     (a string or duration, in quotes), 3, true or an array [\"1ms\", \"5ms\"]",
                    &self.text[key.clone()]
                );
                return self.error(key, message);
            }
            let message = match e.message().trim_end() {
                "" => "unexpected end of file".to_string(),
                message => message.replace('\n', "; "),
            };
            self.error(span, format!("invalid TOML: {message}"))
        })
    }
}

/// Where the key of `key =` is, when a parse error at byte `at` sits where
/// its value should be: nothing but blanks or a comment after the `=`.
fn missing_value(text: &str, at: usize) -> Option<Range<usize>> {
    let at = (0..=at.min(text.len()))
        .rev()
        .find(|&i| text.is_char_boundary(i))?;
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let rest = text[at..].lines().next().unwrap_or("").trim();
    if !(rest.is_empty() || rest.starts_with('#')) {
        return None;
    }
    let before = text[line_start..at].trim_end().strip_suffix('=')?;
    // In an inline table, the key is the last one: `x = { a = 1, b =`.
    let key_start = line_start + before.rfind(['{', ',']).map_or(0, |i| i + 1);
    let key = text[key_start..line_start + before.len()].trim();
    if key.is_empty() || key.contains('=') {
        return None;
    }
    let start = key_start + text[key_start..].find(key)?;
    Some(start..start + key.len())
}

/// A table being read, with the keys read so far.
pub(crate) struct Table<'a> {
    src: Source<'a>,
    inner: &'a dyn TableLike,
    /// How messages name this table: "[lock]", "[[faults]] #2", "the top level".
    pub what: String,
    /// Where "missing key" errors point: the header, or the key of an inline table.
    header: Range<usize>,
    used: Vec<&'a str>,
    accepted: Vec<&'a str>,
}

/// A value found under a key (or in an array), with what is needed to
/// point at it.
#[derive(Clone)]
pub(crate) struct Field<'a> {
    src: Source<'a>,
    /// The key it was found under (an array's elements inherit the array's).
    key: Option<&'a str>,
    key_span: Option<Range<usize>>,
    node: Node<'a>,
}

#[derive(Clone, Copy)]
enum Node<'a> {
    Item(&'a Item),
    Value(&'a Value),
}

impl<'a> Table<'a> {
    pub fn root(src: Source<'a>, doc: &'a ImDocument<&'a str>) -> Table<'a> {
        Table::new(src, doc.as_table(), "the top level".into(), 0..0)
    }

    fn new(src: Source<'a>, inner: &'a dyn TableLike, what: String, header: Range<usize>) -> Self {
        Table {
            src,
            inner,
            what,
            header,
            used: Vec::new(),
            accepted: Vec::new(),
        }
    }

    /// Where this table starts: for errors about the table as a whole.
    pub fn header(&self) -> Range<usize> {
        self.header.clone()
    }

    /// The 1-based line of the header.
    pub fn line(&self) -> usize {
        self.src.error(self.header(), "").line
    }

    pub fn error(&self, message: impl Into<String>) -> ScenarioError {
        self.src.error(self.header(), message)
    }

    /// Declares the keys this table accepts and fails at the first key (in
    /// file order) that is not among them. Checking before reading means a
    /// typo is reported as a typo, not as the missing key it was meant to be.
    pub fn accept(&mut self, accepted: &[&'a str]) -> Result<()> {
        self.accepted = accepted.to_vec();
        let mut keys: Vec<_> = self.inner.iter().map(|(k, _)| k).collect();
        keys.sort_by_key(|k| self.key_span(k).map_or(usize::MAX, |s| s.start));
        match keys.into_iter().find(|k| !accepted.contains(k)) {
            Some(key) => Err(self.unknown_key(key)),
            None => Ok(()),
        }
    }

    fn key_span(&self, key: &str) -> Option<Range<usize>> {
        self.inner.get_key_value(key).and_then(|(k, _)| k.span())
    }

    fn unknown_key(&self, key: &str) -> ScenarioError {
        let mut message = format!("unknown key `{key}` in {}", self.what);
        message.push_str(&did_you_mean(key, &self.accepted));
        if self.accepted.is_empty() {
            message.push_str("; this table takes no keys");
        } else {
            message.push_str(&format!("; accepted keys: {}", self.accepted.join(", ")));
        }
        let span = self.key_span(key).unwrap_or_else(|| self.header());
        self.src.error(span, message)
    }

    /// The value under `key`, if present, marking the key as read.
    pub fn get(&mut self, key: &'a str) -> Option<Field<'a>> {
        let (k, item) = self.inner.get_key_value(key)?;
        self.used.push(key);
        Some(Field {
            src: self.src,
            key: Some(key),
            key_span: k.span(),
            node: Node::Item(item),
        })
    }

    /// The value under `key`, or an error at the table's header.
    /// Whether the table has `key` (without reading it).
    pub fn has(&self, key: &str) -> bool {
        self.inner.contains_key(key)
    }

    pub fn require(&mut self, key: &'a str) -> Result<Field<'a>> {
        self.get(key)
            .ok_or_else(|| self.error(format!("missing required key `{key}` in {}", self.what)))
    }

    /// Fails on any key that was not read: a safety net so that a key the
    /// loader forgot to read is never silently ignored.
    pub fn finish(self) -> Result<()> {
        match self
            .inner
            .iter()
            .map(|(k, _)| k)
            .find(|k| !self.used.contains(k))
        {
            Some(key) => Err(self.unknown_key(key)),
            None => Ok(()),
        }
    }
}

impl<'a> Field<'a> {
    /// The value's span, or the key's when the value has none.
    pub fn span(&self) -> Range<usize> {
        let span = match self.node {
            Node::Item(item) => item.span(),
            Node::Value(value) => value.span(),
        };
        span.or_else(|| self.key_span.clone()).unwrap_or(0..0)
    }

    pub fn error(&self, message: impl Into<String>) -> ScenarioError {
        self.src.error(self.span(), message)
    }

    /// An error at the key rather than the value (for "not allowed here").
    pub fn key_error(&self, message: impl Into<String>) -> ScenarioError {
        self.src.error(
            self.key_span.clone().unwrap_or_else(|| self.span()),
            message,
        )
    }

    fn value(&self) -> Option<&'a Value> {
        match self.node {
            Node::Item(Item::Value(value)) | Node::Value(value) => Some(value),
            Node::Item(_) => None,
        }
    }

    fn type_name(&self) -> &'static str {
        match self.node {
            Node::Item(Item::Table(_)) => "a table",
            Node::Item(Item::ArrayOfTables(_)) => "an array of tables",
            Node::Item(Item::None) => "nothing",
            Node::Item(Item::Value(value)) | Node::Value(value) => match value {
                Value::String(_) => "a string",
                Value::Integer(_) => "an integer",
                Value::Float(_) => "a float",
                Value::Boolean(_) => "a boolean",
                Value::Datetime(_) => "a datetime",
                Value::Array(_) => "an array",
                Value::InlineTable(_) => "an inline table",
            },
        }
    }

    /// `message` prefixed with the key, for messages that do not name it
    /// themselves: "`rounds`: expected an integer, found a string".
    pub fn named(&self, message: impl std::fmt::Display) -> String {
        match self.key {
            Some(key) => format!("`{key}`: {message}"),
            None => message.to_string(),
        }
    }

    fn expected(&self, expected: &str) -> ScenarioError {
        self.error(self.named(format_args!(
            "expected {expected}, found {}",
            self.type_name()
        )))
    }

    pub fn str(&self) -> Result<&'a str> {
        match self.value() {
            Some(Value::String(s)) => Ok(s.value()),
            _ => Err(self.expected("a string")),
        }
    }

    pub fn bool(&self) -> Result<bool> {
        match self.value() {
            Some(Value::Boolean(b)) => Ok(*b.value()),
            _ => Err(self.expected("a boolean (true or false)")),
        }
    }

    pub fn u64_in(&self, min: u64, max: u64) -> Result<u64> {
        let Some(Value::Integer(i)) = self.value() else {
            return Err(self.expected("an integer"));
        };
        let i = *i.value();
        let n = u64::try_from(i).map_err(|_| {
            self.error(self.named(format_args!("expected a non-negative integer, found {i}")))
        })?;
        if n < min || n > max {
            return Err(
                self.error(self.named(format_args!("{n} is out of range: expected {min}..={max}")))
            );
        }
        Ok(n)
    }

    pub fn u64(&self) -> Result<u64> {
        self.u64_in(0, u64::MAX)
    }

    /// A float; integers are taken too, since `rate = 2` means 2.0.
    pub fn f64(&self) -> Result<f64> {
        match self.value() {
            Some(Value::Float(f)) if f.value().is_finite() => Ok(*f.value()),
            Some(Value::Float(f)) => Err(self.error(self.named(format_args!(
                "expected a finite number, found {}",
                f.value()
            )))),
            // Exact for every integer a scenario could sensibly hold.
            Some(Value::Integer(i)) => Ok(*i.value() as f64),
            _ => Err(self.expected("a number")),
        }
    }

    pub fn duration(&self) -> Result<Duration> {
        let text = self.duration_str()?;
        parse_duration(text).map_err(|m| self.error(self.named(m)))
    }

    /// A duration that must be greater than zero; `what` names it in the message.
    pub fn positive_duration(&self, what: &str) -> Result<Duration> {
        let duration = self.duration()?;
        if duration.is_zero() {
            return Err(self.error(format!("{what} must be greater than 0")));
        }
        Ok(duration)
    }

    /// A signed duration (`"+20s"`, `"-5s"`, `"3s"`) in nanoseconds.
    pub fn signed_duration(&self) -> Result<i64> {
        let text = self.duration_str()?;
        parse_signed_duration(text).map_err(|m| self.error(self.named(m)))
    }

    fn duration_str(&self) -> Result<&'a str> {
        match self.value() {
            Some(Value::String(s)) => Ok(s.value()),
            _ => Err(self.expected("a duration string such as \"10s\"")),
        }
    }

    pub fn array(&self) -> Result<Vec<Field<'a>>> {
        match self.value() {
            Some(Value::Array(array)) => Ok(array
                .iter()
                .map(|value| Field {
                    src: self.src,
                    key: self.key,
                    key_span: None,
                    node: Node::Value(value),
                })
                .collect()),
            _ => Err(self.expected("an array")),
        }
    }

    /// A table (`[name]` or an inline `{ … }`); `what` names it in messages.
    pub fn table(&self, what: &str) -> Result<Table<'a>> {
        let header = self.key_span.clone().unwrap_or_else(|| self.span());
        match self.node {
            Node::Item(Item::Table(t)) => {
                // A table defined only through dotted keys has no span of its own.
                let header = t.span().map_or(header, |s| self.header_of(s));
                Ok(Table::new(self.src, t, what.into(), header))
            }
            Node::Item(Item::Value(Value::InlineTable(t))) | Node::Value(Value::InlineTable(t)) => {
                let header = if self.key_span.is_some() {
                    header
                } else {
                    self.span()
                };
                Ok(Table::new(self.src, t, what.into(), header))
            }
            _ => Err(self.expected(&format!("a table ({what})"))),
        }
    }

    /// An array of tables (`[[name]]` or an array of inline tables); the
    /// tables are named `[[name]] #1`, `#2`, … in messages.
    pub fn tables(&self, name: &str) -> Result<Vec<Table<'a>>> {
        let what = |i: usize| format!("[[{name}]] #{}", i + 1);
        match self.node {
            Node::Item(Item::ArrayOfTables(array)) => Ok(array
                .iter()
                .enumerate()
                .map(|(i, t)| {
                    let header = t.span().map_or_else(|| self.span(), |s| self.header_of(s));
                    Table::new(self.src, t, what(i), header)
                })
                .collect()),
            Node::Item(Item::Value(Value::Array(_))) => self
                .array()?
                .iter()
                .enumerate()
                .map(|(i, field)| field.table(&what(i)))
                .collect(),
            _ => Err(self.expected(&format!("an array of tables ([[{name}]])"))),
        }
    }

    /// A standard table's span runs from its header to its last value; the
    /// header alone is what an error about the whole table should underline.
    fn header_of(&self, span: Range<usize>) -> Range<usize> {
        let text = self.src.text.get(span.clone()).unwrap_or("");
        let line = text.lines().next().unwrap_or("");
        let closing = if line.starts_with("[[") { "]]" } else { "]" };
        let mut quote = None;
        for (i, c) in line.char_indices() {
            match (quote, c) {
                (None, '"' | '\'') => quote = Some(c),
                (Some(q), _) if c == q => quote = None,
                (None, ']') if line[i..].starts_with(closing) => {
                    return span.start..span.start + i + closing.len();
                }
                _ => {}
            }
        }
        span.start..span.start + line.trim_end().len()
    }
}

/// Parses a humantime duration of at most [`MAX_DURATION`].
pub(crate) fn parse_duration(text: &str) -> std::result::Result<Duration, String> {
    let duration = humantime::parse_duration(text).map_err(|e| {
        format!("invalid duration \"{text}\": {e}; write it like \"250ms\", \"10s\" or \"2m\"")
    })?;
    if duration > MAX_DURATION {
        return Err(format!("duration \"{text}\" is too long: at most 24h"));
    }
    Ok(duration)
}

/// Parses `"+20s"`, `"-5s"` or `"3s"` into signed nanoseconds.
pub(crate) fn parse_signed_duration(text: &str) -> std::result::Result<i64, String> {
    let (sign, magnitude) = match text.strip_prefix('-') {
        Some(rest) => (-1, rest),
        None => (1, text.strip_prefix('+').unwrap_or(text)),
    };
    let duration = parse_duration(magnitude.trim_start()).map_err(|_| {
        format!("invalid signed duration \"{text}\": write it like \"+20s\", \"-5s\" or \"3s\" (at most 24h)")
    })?;
    // At most 24h, so the nanoseconds fit an i64 with room to spare.
    Ok(sign * duration.as_nanos() as i64)
}

/// " (did you mean `x`?)" for the closest candidate within an edit distance
/// of 2, else "". Like rustc, short words get a tighter bound (a third of
/// their length) so that `zz` is not "corrected" to `a`.
pub(crate) fn did_you_mean(word: &str, candidates: &[&str]) -> String {
    let limit = (word.chars().count() / 3).clamp(1, 2);
    let mut best: Option<(usize, &str)> = None;
    for candidate in candidates {
        let distance = edit_distance(word, candidate);
        if distance <= limit && best.map_or(true, |(d, _)| distance < d) {
            best = Some((distance, candidate));
        }
    }
    best.map_or(String::new(), |(_, c)| format!(" (did you mean `{c}`?)"))
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut current = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != *cb);
            current.push(substitution.min(previous[j + 1] + 1).min(current[j] + 1));
        }
        previous = current;
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_root<T>(text: &str, f: impl FnOnce(Table<'_>) -> T) -> T {
        let src = Source {
            file: "t.toml",
            text,
        };
        let doc = src.parse().unwrap();
        f(Table::root(src, &doc))
    }

    #[test]
    fn durations_are_humantime_and_bounded() {
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("24h"), Ok(MAX_DURATION));
        assert!(parse_duration("25h").unwrap_err().contains("too long"));
        assert!(parse_duration("10")
            .unwrap_err()
            .contains("invalid duration \"10\""));
        assert!(parse_duration("").is_err());
    }

    #[test]
    fn signed_durations_take_an_optional_sign() {
        assert_eq!(parse_signed_duration("+20s"), Ok(20_000_000_000));
        assert_eq!(parse_signed_duration("-5s"), Ok(-5_000_000_000));
        assert_eq!(parse_signed_duration("3ms"), Ok(3_000_000));
        assert!(parse_signed_duration("--5s").is_err());
        assert!(parse_signed_duration("-").is_err());
    }

    #[test]
    fn a_key_without_a_value_is_named() {
        for text in [
            "seed =",
            "seed = ",
            "seed =\n",
            "seed =   # none\nname = \"t\"\n",
        ] {
            let src = Source {
                file: "t.toml",
                text,
            };
            let error = src.parse().unwrap_err();
            assert_eq!(error.location(), "t.toml:1:1", "{text:?}: {error}");
            assert!(
                error
                    .message
                    .starts_with("invalid TOML: `seed =` has no value"),
                "{text:?}: {error}"
            );
        }
        let src = Source {
            file: "t.toml",
            text: "x = { a = 1, b =",
        };
        let error = src.parse().unwrap_err();
        assert!(error.message.contains("`b =` has no value"), "{error}");
        // Other syntax errors keep the parser's words.
        let src = Source {
            file: "t.toml",
            text: "seed = 1 2\n",
        };
        assert!(!src.parse().unwrap_err().message.contains("no value"));
    }

    #[test]
    fn suggestions_need_a_close_match() {
        assert_eq!(
            did_you_mean("ttll", &["design", "ttl"]),
            " (did you mean `ttl`?)"
        );
        assert_eq!(
            did_you_mean("desing", &["design", "ttl"]),
            " (did you mean `design`?)"
        );
        assert_eq!(did_you_mean("zz", &["a"]), "");
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }

    #[test]
    fn unknown_keys_are_reported_in_file_order_at_the_key() {
        let error = with_root("a = 1\nzz = 2\nyy = 3\n", |mut t| {
            t.accept(&["a"]).unwrap_err()
        });
        assert_eq!((error.line, error.col), (2, 1));
        assert!(error
            .message
            .contains("unknown key `zz` in the top level; accepted keys: a"));
    }

    #[test]
    fn keys_never_read_are_unknown_at_finish() {
        let error = with_root("a = 1\nb = 2\n", |mut t| {
            t.accept(&["a", "b"]).unwrap();
            t.get("a");
            t.finish()
        });
        assert!(error.unwrap_err().message.contains("unknown key `b`"));
    }

    #[test]
    fn type_errors_point_at_the_value_and_name_both_types() {
        let error = with_root("n = \"3\"", |mut t| t.get("n").unwrap().u64().unwrap_err());
        assert_eq!((error.line, error.col), (1, 5));
        assert_eq!(error.message, "`n`: expected an integer, found a string");
        let error = with_root("n = -3", |mut t| t.get("n").unwrap().u64().unwrap_err());
        assert!(error.message.contains("non-negative"));
    }

    #[test]
    fn missing_keys_point_at_the_table_header() {
        let error = with_root("a = 1\n\n[lock] # note]\nx = 1\n", |mut t| {
            let mut lock = t.get("lock").unwrap().table("[lock]").unwrap();
            lock.require("design").err().unwrap()
        });
        assert_eq!((error.line, error.col), (3, 1));
        assert!(error
            .to_string()
            .contains("3 | [lock] # note]\n  | ^^^^^^\n"));
    }
}
