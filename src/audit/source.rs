//! One source file, read just enough for the audit's patterns: comments
//! blanked out, string literals set apart, lines, functions and calls
//! located.
//!
//! Each language with a grammar is parsed ([`super::syntax`]); SQL is
//! lexed here, by its comments and quotes and nothing else. `code` is the
//! text with every comment and every string's contents replaced by spaces
//! (quotes, newlines and byte offsets kept), so a pattern matched in `code`
//! is never prose; the literals are kept in `strings`, where SQL
//! statements and Redis commands passed as text are looked for.

use std::cell::OnceCell;
use std::collections::BTreeMap;

use super::syntax::{self, Call, Function, With};
use super::Language;

pub(crate) use super::syntax::Literal;

/// A read source file.
pub(crate) struct Source {
    pub language: Language,
    /// The text with comments and string contents blanked (same length).
    pub code: String,
    /// Every string literal, in order.
    pub strings: Vec<Literal>,
    /// Byte ranges of the comments, in order.
    pub comments: Vec<(usize, usize)>,
    /// Every function, method, closure and lambda, in the order they
    /// start (none in SQL).
    pub functions: Vec<Function>,
    /// The named ones' indexes in `functions`, by name, in order.
    functions_named: BTreeMap<String, Vec<usize>>,
    /// Every call, in order.
    pub calls: Vec<Call>,
    /// Every Python `with` on a name, in order.
    pub withs: Vec<With>,
    /// The byte ranges of the logging and tracing calls (`log.info(…)`,
    /// `MDC.put(…)`, `span.set_attribute(…)`, `tracing::info!(…)`), in
    /// order: they write nothing a lock protects.
    pub quiet: Vec<(usize, usize)>,
    /// Byte offset of the start of each line.
    line_starts: Vec<usize>,
    /// The original text, for columns.
    text: String,
    /// The SQL statements kept in named constants, found on first use
    /// ([`super::fence`]): every lock's writes look them up.
    pub sql_constants: OnceCell<Vec<(String, String, usize)>>,
}

impl Source {
    pub fn new(language: Language, text: &str) -> Source {
        let (code, parsed) = match syntax::parse(language, text) {
            Some(parsed) => (blank(text, &parsed.comments, &parsed.strings), parsed),
            None => {
                let (code, strings, comments) = lex_sql(text);
                let calls = sql_calls(&code);
                let parsed = syntax::Parsed {
                    comments,
                    strings,
                    calls,
                    ..syntax::Parsed::default()
                };
                (code, parsed)
            }
        };
        let mut functions_named: BTreeMap<String, Vec<usize>> = BTreeMap::new();
        for (i, f) in parsed.functions.iter().enumerate() {
            if let Some(name) = &f.name {
                functions_named.entry(name.clone()).or_default().push(i);
            }
        }
        let mut quiet: Vec<(usize, usize)> = parsed
            .calls
            .iter()
            .filter(|c| is_logging(c))
            .map(|c| (c.at, c.close))
            .chain(
                parsed
                    .macros
                    .iter()
                    .filter(|(name, _, _)| LOG_MACROS.contains(&name.as_str()))
                    .map(|&(_, a, b)| (a, b)),
            )
            .collect();
        quiet.sort_unstable();
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Source {
            language,
            code,
            strings: parsed.strings,
            comments: parsed.comments,
            functions: parsed.functions,
            functions_named,
            calls: parsed.calls,
            withs: parsed.withs,
            quiet,
            line_starts,
            text: text.to_owned(),
            sql_constants: OnceCell::new(),
        }
    }

    /// Whether `at` is inside a logging or tracing call.
    pub fn is_quiet(&self, at: usize) -> bool {
        self.quiet.iter().any(|&(a, b)| a <= at && at <= b)
    }

    /// 1-based line of byte offset `at`.
    pub fn line(&self, at: usize) -> usize {
        self.line_starts.partition_point(|&s| s <= at)
    }

    /// 1-based column (in characters) of byte offset `at`.
    pub fn column(&self, at: usize) -> usize {
        let start = self.line_starts[self.line(at) - 1];
        self.text[start..at.min(self.text.len())].chars().count() + 1
    }

    /// Byte offset of the start of 1-based `line` (the end of the text past
    /// the last line).
    pub fn line_start(&self, line: usize) -> usize {
        self.line_starts
            .get(line.saturating_sub(1))
            .copied()
            .unwrap_or(self.text.len())
    }

    /// The scope a finding at `at` is judged in: the byte range from `at` to
    /// the end of the function, method, closure or lambda around it (the
    /// whole rest of the file at the top level). For SQL: a `$$` body, else
    /// up to the transaction's end or the unlock.
    pub fn scope_end(&self, at: usize) -> usize {
        if self.language == Language::Sql {
            return self.sql_scope_end(at);
        }
        self.function_at(at).map_or(self.code.len(), |f| f.end)
    }

    /// The functions of the file named `name` (lowercased), in order.
    pub fn defined<'s>(&'s self, name: &str) -> impl Iterator<Item = &'s Function> + 's {
        let named = self
            .functions_named
            .get(name)
            .map_or(&[][..], Vec::as_slice);
        named.iter().map(|&i| &self.functions[i])
    }

    /// The call whose name starts at `at`.
    pub fn call_at(&self, at: usize) -> Option<&Call> {
        let i = self.calls.partition_point(|c| c.at < at);
        self.calls.get(i).filter(|c| c.at == at)
    }

    /// The string literals that start in `from..to`.
    pub fn strings_in(&self, from: usize, to: usize) -> &[Literal] {
        &self.strings[in_range(&self.strings, |l| l.start, from, to)]
    }

    /// The calls whose names start in `from..to`.
    pub fn calls_in(&self, from: usize, to: usize) -> &[Call] {
        &self.calls[in_range(&self.calls, |c| c.at, from, to)]
    }

    /// The innermost function around `at`.
    pub fn function_at(&self, at: usize) -> Option<&Function> {
        self.functions
            .iter()
            .filter(|f| f.start <= at && at < f.end)
            .max_by_key(|f| f.start)
    }

    /// The end of the method an annotation at `at` stands on: the function
    /// around it (an annotation is part of its method), else the next one,
    /// else the end of the file.
    pub fn annotated_end(&self, at: usize) -> usize {
        self.function_at(at)
            .or_else(|| self.functions.iter().find(|f| f.start > at))
            .map_or(self.code.len(), |f| f.end)
    }

    /// The code of 1-based `line` as written, up to a comment, trimmed.
    pub fn snippet(&self, line: usize) -> &str {
        let start = self.line_start(line);
        let end = self.text[start..]
            .find('\n')
            .map_or(self.text.len(), |n| start + n);
        let end = self
            .comments
            .iter()
            .find(|&&(a, b)| b > start && a < end)
            .map_or(end, |&(a, _)| a.max(start));
        self.text[start..end].trim()
    }

    fn sql_scope_end(&self, at: usize) -> usize {
        let code = &self.code;
        // Inside a dollar-quoted body (`$$ … $$`): the body.
        let marks: Vec<usize> = code.match_indices("$$").map(|(i, _)| i).collect();
        let before = marks.iter().filter(|&&m| m < at).count();
        if before % 2 == 1 {
            if let Some(&end) = marks.iter().find(|&&m| m > at) {
                return end;
            }
        }
        let lower = code[at..].to_ascii_lowercase();
        let skip = lower.find('(').map_or(0, |i| i + 1);
        [
            "commit",
            "rollback",
            "pg_advisory_unlock",
            "release_lock",
            "sp_releaseapplock",
            "$$",
        ]
        .iter()
        .filter_map(|w| find_word(&lower[skip..], w).map(|i| at + skip + i))
        .min()
        .unwrap_or(code.len())
    }
}

/// Receivers (the name a call is reached through, or the first name of
/// its callee) of logging and tracing calls: loggers, the MDC, spans.
const LOG_RECEIVERS: [&str; 24] = [
    "log",
    "_log",
    "logger",
    "_logger",
    "logging",
    "slog",
    "zap",
    "zerolog",
    "logrus",
    "klog",
    "glog",
    "sugar",
    "mdc",
    "threadcontext",
    "console",
    "span",
    "tracer",
    "tracing",
    "trace",
    "otel",
    "opentelemetry",
    "baggage",
    "sentry",
    "timber",
];

/// Methods that record on a span or a log, whatever they are called on.
const LOG_METHODS: [&str; 14] = [
    "set_attribute",
    "set_attributes",
    "setattribute",
    "setattributes",
    "add_event",
    "addevent",
    "set_tag",
    "settag",
    "record_exception",
    "recordexception",
    "set_status",
    "setstatus",
    "println",
    "printf",
];

/// Rust's logging, tracing and printing macros.
const LOG_MACROS: [&str; 18] = [
    "trace",
    "debug",
    "info",
    "warn",
    "error",
    "event",
    "span",
    "trace_span",
    "debug_span",
    "info_span",
    "warn_span",
    "error_span",
    "log",
    "println",
    "eprintln",
    "print",
    "eprint",
    "dbg",
];

/// Whether `c` logs, traces or prints: a call on a logger, the MDC, a span
/// or a tracer (`log.info`, `s.logger.Info`, `MDC.put`, `zap.Int64`,
/// `Span.current().setAttribute`), a span's or a printer's method, `print`.
pub(crate) fn is_logging(c: &Call) -> bool {
    let root: String = c
        .callee
        .split(['.', ':', '('])
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    let logger = |name: &str| {
        LOG_RECEIVERS.contains(&name) || name.ends_with("logger") || name.ends_with("span")
    };
    let printer = root == "fmt" && (c.name.starts_with("print") || c.name.starts_with("fprint"));
    c.receiver.as_deref().is_some_and(logger)
        || (root != c.name && logger(&root))
        || LOG_METHODS.contains(&c.name.as_str())
        || printer
        || (c.receiver.is_none() && matches!(c.name.as_str(), "print" | "println" | "printf"))
}

/// The indexes of the items of `items`, in order of `at`, whose `at` is in
/// `from..to`: a binary search, as a lock's writes are looked for in
/// every call of its scope.
fn in_range<T>(
    items: &[T],
    at: impl Fn(&T) -> usize,
    from: usize,
    to: usize,
) -> std::ops::Range<usize> {
    let lo = items.partition_point(|i| at(i) < from);
    let hi = items.partition_point(|i| at(i) < to);
    lo..hi.max(lo)
}

/// The offset of the bracket closing the one at `open`.
pub(crate) fn matching(code: &[u8], open: usize, up: u8, down: u8) -> Option<usize> {
    let mut depth = 0usize;
    for (i, &b) in code.iter().enumerate().skip(open) {
        if b == up {
            depth += 1;
        } else if b == down {
            depth -= 1;
            if depth == 0 {
                return Some(i);
            }
        }
    }
    None
}

/// Whether `b` can be part of an identifier.
pub(crate) fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Each identifier-like word of `text`, as its start and end: a run of
/// [`is_ident`] bytes (a number is one too).
pub(crate) fn words(text: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
    let bytes = text.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < bytes.len() && !is_ident(bytes[i]) {
            i += 1;
        }
        let start = i;
        while i < bytes.len() && is_ident(bytes[i]) {
            i += 1;
        }
        (start < i).then_some((start, i))
    })
}

/// The first occurrence of `word` in `text` not inside a longer identifier.
pub(crate) fn find_word(text: &str, word: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    text.match_indices(word).map(|(i, _)| i).find(|&i| {
        let before = i == 0 || !is_ident(bytes[i - 1]);
        let after = i + word.len() >= bytes.len() || !is_ident(bytes[i + word.len()]);
        before && after
    })
}

/// `text` with the comments and the strings' contents blanked (newlines
/// kept).
fn blank(text: &str, comments: &[(usize, usize)], strings: &[Literal]) -> String {
    let mut code = text.as_bytes().to_vec();
    let ranges = comments
        .iter()
        .copied()
        .chain(strings.iter().map(|l| (l.body, l.end)));
    for (from, to) in ranges {
        for b in &mut code[from.min(text.len())..to.min(text.len())] {
            if *b != b'\n' {
                *b = b' ';
            }
        }
    }
    // Whole nodes are blanked, so every multi-byte character is replaced
    // whole; were one cut, its bytes become spaces (offsets kept).
    String::from_utf8(code).unwrap_or_else(|e| {
        let bytes = e.into_bytes();
        bytes
            .iter()
            .map(|&b| if b.is_ascii() { b as char } else { ' ' })
            .collect()
    })
}

/// Blanks SQL's comments (`--`, `/* */`) and string contents (`'…'`, a
/// doubled quote escaping one) out of `text` and collects the string
/// literals.
fn lex_sql(text: &str) -> (String, Vec<Literal>, Vec<(usize, usize)>) {
    let bytes = text.as_bytes();
    let mut strings = Vec::new();
    let mut comments = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let rest = &bytes[i..];
        if rest.starts_with(b"--") {
            let end = rest
                .iter()
                .position(|&b| b == b'\n')
                .map_or(bytes.len(), |n| i + n);
            comments.push((i, end));
            i = end;
            continue;
        }
        if rest.starts_with(b"/*") {
            let end = text[i + 2..]
                .find("*/")
                .map_or(bytes.len(), |n| i + 2 + n + 2);
            comments.push((i, end));
            i = end;
            continue;
        }
        if rest[0] != b'\'' {
            i += 1;
            continue;
        }
        let body = i + 1;
        let mut j = body;
        let end = loop {
            if j >= bytes.len() {
                break bytes.len();
            }
            if bytes[j] == b'\'' {
                if bytes.get(j + 1) == Some(&b'\'') {
                    j += 2;
                    continue;
                }
                break j;
            }
            j += 1;
        };
        strings.push(Literal {
            start: i,
            body,
            end,
            text: text[body..end].to_owned(),
            bound: None,
        });
        i = (end + 1).min(bytes.len());
    }
    (blank(text, &comments, &strings), strings, comments)
}

/// Every call in SQL code: a name followed by `(`, and the name before its
/// `.` (`pg_catalog.pg_advisory_lock(…)`).
fn sql_calls(code: &str) -> Vec<Call> {
    let bytes = code.as_bytes();
    let mut out = Vec::new();
    for (start, i) in words(code) {
        let open = i + bytes[i..].iter().take_while(|&&b| b == b' ').count();
        if bytes.get(open) != Some(&b'(') || bytes[start].is_ascii_digit() {
            continue;
        }
        let receiver = code[..start].strip_suffix('.').and_then(|before| {
            let from = before
                .bytes()
                .rposition(|b| !is_ident(b))
                .map_or(0, |k| k + 1);
            (from < before.len()).then(|| before[from..].to_ascii_lowercase())
        });
        out.push(Call {
            name: code[start..i].to_ascii_lowercase(),
            at: start,
            receiver,
            callee: code[start..i].to_owned(),
            open,
            close: matching(bytes, open, b'(', b')').unwrap_or(bytes.len()),
            functions: None,
            held_in: None,
            statement: false,
            via_field: false,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_are_blanked_and_strings_kept_apart() {
        let text = "x = r.setnx(\"lock\", 1)  # SETNX here\n# r.setnx(k)\ny = 'a # b'\n";
        let s = Source::new(Language::Python, text);
        assert_eq!(s.code.len(), text.len());
        assert!(s.code.contains("r.setnx(\""));
        assert_eq!(s.code.matches("setnx").count(), 1);
        let texts: Vec<&str> = s.strings.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(texts, ["lock", "a # b"]);
        assert_eq!(s.line(text.find("y =").unwrap()), 3);
        assert_eq!(s.column(text.find("setnx").unwrap()), 7);
    }

    #[test]
    fn rust_lifetimes_are_not_strings_and_raw_strings_are() {
        let text = "fn f<'a>(x: &'a str) { let q = r#\"UPDATE t SET v = 1\"#; }\n";
        let s = Source::new(Language::Rust, text);
        assert_eq!(s.strings.len(), 1);
        assert_eq!(s.strings[0].text, "UPDATE t SET v = 1");
    }

    #[test]
    fn a_scope_is_the_enclosing_method() {
        let text = "class A {\n  void run() throws E {\n    if (x) {\n      lock();\n    }\n    write();\n  }\n  void other() {}\n}\n";
        let s = Source::new(Language::Java, text);
        let at = text.find("lock()").unwrap();
        let end = s.scope_end(at);
        assert!(text[at..end].contains("write()"));
        assert!(!text[at..end].contains("other"));
    }

    #[test]
    fn a_python_scope_ends_with_its_def() {
        let text = "def a():\n    lock()\n    write()\n\ndef b():\n    pass\n";
        let s = Source::new(Language::Python, text);
        let at = text.find("lock").unwrap();
        let end = s.scope_end(at);
        assert!(text[at..end].contains("write"));
        assert!(!text[at..end].contains("def b"));
    }

    #[test]
    fn a_lambda_is_a_scope_and_an_annotation_stands_on_its_method() {
        let text = "class A {\n  @SchedulerLock(name = \"x\")\n  void run() {\n    pool.submit(() -> {\n      lock();\n      inner();\n    });\n    outer();\n  }\n}\n";
        let s = Source::new(Language::Java, text);
        let at = text.find("lock()").unwrap();
        let end = s.scope_end(at);
        assert!(text[at..end].contains("inner()"));
        assert!(!text[at..end].contains("outer()"));
        let end = s.annotated_end(text.find("@SchedulerLock").unwrap());
        assert!(text[..end].ends_with("outer();\n  }"));
    }

    #[test]
    fn sql_has_its_own_lexer() {
        let text = "-- pg_advisory_lock(1) in a comment\nSELECT pg_catalog.pg_advisory_lock(42);\nUPDATE t SET v = 'it''s' WHERE id = 1;\n";
        let s = Source::new(Language::Sql, text);
        assert_eq!(s.comments.len(), 1);
        assert_eq!(s.strings.len(), 1);
        assert_eq!(s.strings[0].text, "it''s");
        let calls: Vec<(&str, Option<&str>)> = s
            .calls
            .iter()
            .map(|c| (c.name.as_str(), c.receiver.as_deref()))
            .collect();
        assert_eq!(calls, [("pg_advisory_lock", Some("pg_catalog"))]);
        assert!(s.functions.is_empty());
    }
}
