//! One source file, lexed just enough for the audit's patterns: comments
//! blanked out, string literals set apart, lines and scopes located.
//!
//! The lexer knows each language's comments and string quotes and nothing
//! else. `code` is the text with every comment and every string's contents
//! replaced by spaces (quotes, newlines and byte offsets kept), so a pattern
//! matched in `code` is never prose; the literals are kept in `strings`,
//! where SQL statements and Redis commands passed as text are looked for.

use super::Language;

/// A string literal: byte offsets of its opening and closing quotes (the
/// closing quote's offset is the end for an unterminated one) and its
/// contents as written (escapes not decoded).
#[derive(Clone, Debug)]
pub(crate) struct Literal {
    pub start: usize,
    /// Byte offset of the first byte of its contents (after a prefix and
    /// one to three quotes).
    pub body: usize,
    pub end: usize,
    pub text: String,
}

/// A lexed source file.
pub(crate) struct Source {
    pub language: Language,
    /// The text with comments and string contents blanked (same length).
    pub code: String,
    /// Every string literal, in order.
    pub strings: Vec<Literal>,
    /// Byte ranges of the comments, in order.
    pub comments: Vec<(usize, usize)>,
    /// Byte offset of the start of each line.
    line_starts: Vec<usize>,
    /// The original text, for columns.
    text: String,
}

impl Source {
    pub fn new(language: Language, text: &str) -> Source {
        let (code, strings, comments) = lex(language, text);
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Source {
            language,
            code,
            strings,
            comments,
            line_starts,
            text: text.to_owned(),
        }
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
    /// the end of the function around it (the whole rest of the file at the
    /// top level). For SQL: a `$$` body, else up to the transaction's end or
    /// the unlock.
    pub fn scope_end(&self, at: usize) -> usize {
        match self.language {
            Language::Python => self.python_scope_end(at),
            Language::Sql => self.sql_scope_end(at),
            _ => self.brace_scope_end(at),
        }
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

    /// The end of the block opened by the first `{` at or after `at` (the
    /// method an annotation stands on), or the end of the file.
    pub fn next_block_end(&self, at: usize) -> usize {
        let code = self.code.as_bytes();
        match self.code[at..].find('{') {
            Some(i) => matching(code, at + i, b'{', b'}').unwrap_or(code.len()),
            None => code.len(),
        }
    }

    /// If the name at `name_at`, whose parameter list closes at `close`,
    /// is a function being defined (`def f(…):`, `func (r R) f(…) error {`,
    /// `private void f() {`): the byte range of its body.
    pub fn function_body(&self, name_at: usize, close: usize) -> Option<(usize, usize)> {
        let code = &self.code;
        if self.language == Language::Python {
            let line = self.line(name_at);
            let before = code[self.line_start(line)..name_at].trim();
            if !(before == "def" || before == "async def") {
                return None;
            }
            let body = self.line_start(line + 1).min(code.len());
            return Some((close, self.python_scope_end(body).max(body)));
        }
        if self.language == Language::Sql {
            return None;
        }
        // The body's `{` on the same line as the parameter list, and a
        // header from the name on that declares a function.
        let rest = code.get(close..)?;
        let open = close + rest.find(['{', ';', '}', '\n'])?;
        if code.as_bytes()[open] != b'{' {
            return None;
        }
        let head_start = code[..open].rfind([';', '{', '}']).map_or(0, |i| i + 1);
        if head_start > name_at || !is_function_header(header(code, open)) {
            return None;
        }
        let end = matching(code.as_bytes(), open, b'{', b'}').unwrap_or(code.len());
        Some((open, end))
    }

    fn brace_scope_end(&self, at: usize) -> usize {
        let code = self.code.as_bytes();
        // Walk out through the blocks around `at`; the first whose header
        // declares a function is the scope.
        let mut depth = 0usize;
        let mut i = at;
        while i > 0 {
            i -= 1;
            match code[i] {
                b'}' => depth += 1,
                b'{' if depth > 0 => depth -= 1,
                b'{' if is_function_header(header(&self.code, i)) => {
                    return matching(code, i, b'{', b'}').unwrap_or(code.len());
                }
                _ => {}
            }
        }
        code.len()
    }

    fn python_scope_end(&self, at: usize) -> usize {
        let line = self.line(at);
        let lines: Vec<&str> = self.code.split('\n').collect();
        let indent = |l: &str| l.len() - l.trim_start().len();
        let own = indent(lines[line - 1]);
        // The innermost `def` above with a smaller indent.
        let def = (0..line - 1).rev().find(|&i| {
            let t = lines[i].trim_start();
            (t.starts_with("def ") || t.starts_with("async def ")) && indent(lines[i]) < own
        });
        let Some(def) = def else {
            return self.code.len();
        };
        let def_indent = indent(lines[def]);
        (line..lines.len())
            .find(|&i| !lines[i].trim().is_empty() && indent(lines[i]) <= def_indent)
            .map_or(self.code.len(), |i| self.line_start(i + 1))
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
        ["commit", "rollback", "pg_advisory_unlock", "$$"]
            .iter()
            .filter_map(|w| find_word(&lower[skip..], w).map(|i| at + skip + i))
            .min()
            .unwrap_or(code.len())
    }
}

/// The text before the `{` at `open`, back to the previous `;`, `{` or `}`.
fn header(code: &str, open: usize) -> &str {
    let start = code[..open].rfind([';', '{', '}']).map_or(0, |i| i + 1);
    code[start..open].trim()
}

/// Whether a block header declares a function (or a closure passed on):
/// `fn f(…) -> T`, `func (r R) f(…) error`, `function f(…)`, `(x) =>`,
/// `fun f(…)`, a Java method `T f(…) throws E`, but no `if (…)`, `class X`.
fn is_function_header(header: &str) -> bool {
    let words: Vec<&str> = header
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect();
    let first = header
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '@'))
        .find(|w| !w.is_empty())
        .unwrap_or("");
    const CONTROL: [&str; 17] = [
        "if",
        "else",
        "for",
        "while",
        "switch",
        "catch",
        "try",
        "synchronized",
        "do",
        "match",
        "loop",
        "when",
        "with",
        "using",
        "select",
        "return",
        "finally",
    ];
    if CONTROL.contains(&first) {
        return false;
    }
    if words
        .iter()
        .any(|w| matches!(*w, "fn" | "func" | "fun" | "function" | "def"))
        || header.contains("=>")
    {
        return true;
    }
    if words.iter().any(|w| {
        matches!(
            *w,
            "class" | "interface" | "enum" | "struct" | "impl" | "object"
        )
    }) {
        return false;
    }
    // A Java method: `… name(args)` possibly followed by `throws A, B`.
    let core = match header.find(" throws ") {
        Some(i) => &header[..i],
        None => header,
    };
    core.trim_end().ends_with(')') && core.contains('(') && !core.starts_with('(')
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

/// The first occurrence of `word` in `text` not inside a longer identifier.
pub(crate) fn find_word(text: &str, word: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    text.match_indices(word).map(|(i, _)| i).find(|&i| {
        let before = i == 0 || !is_ident(bytes[i - 1]);
        let after = i + word.len() >= bytes.len() || !is_ident(bytes[i + word.len()]);
        before && after
    })
}

/// Blanks comments and string contents out of `text` and collects the
/// string literals.
fn lex(language: Language, text: &str) -> (String, Vec<Literal>, Vec<(usize, usize)>) {
    let bytes = text.as_bytes();
    let mut code = bytes.to_vec();
    let mut strings = Vec::new();
    let mut comments = Vec::new();
    let blank = |code: &mut Vec<u8>, from: usize, to: usize| {
        for b in &mut code[from..to.min(bytes.len())] {
            if *b != b'\n' {
                *b = b' ';
            }
        }
    };
    let line_comment: &[u8] = match language {
        Language::Python => b"#",
        Language::Sql => b"--",
        _ => b"//",
    };
    let block_comments = language != Language::Python;
    let mut i = 0;
    while i < bytes.len() {
        let rest = &bytes[i..];
        if rest.starts_with(line_comment) {
            let end = rest
                .iter()
                .position(|&b| b == b'\n')
                .map_or(bytes.len(), |n| i + n);
            blank(&mut code, i, end);
            comments.push((i, end));
            i = end;
            continue;
        }
        if block_comments && rest.starts_with(b"/*") {
            let end = text[i + 2..]
                .find("*/")
                .map_or(bytes.len(), |n| i + 2 + n + 2);
            blank(&mut code, i, end);
            comments.push((i, end));
            i = end;
            continue;
        }
        let Some((open_len, close)) = string_open(language, bytes, i) else {
            i += 1;
            continue;
        };
        let body = i + open_len;
        // Go's back-quoted strings and Rust's raw strings have no escapes.
        let raw = match language {
            Language::Go => close == b"`",
            Language::Rust => bytes[i] == b'r',
            Language::Sql => true,
            _ => false,
        };
        let escapes = !raw;
        let mut j = body;
        let end = loop {
            if j >= bytes.len() {
                break bytes.len();
            }
            if escapes && bytes[j] == b'\\' {
                j += 2;
                continue;
            }
            if bytes[j..].starts_with(close) {
                // SQL doubles a quote to escape it.
                if language == Language::Sql && bytes.get(j + 1) == Some(&b'\'') {
                    j += 2;
                    continue;
                }
                break j;
            }
            if close.len() == 1 && close != b"`" && bytes[j] == b'\n' && !is_multiline(language) {
                break j;
            }
            j += 1;
        };
        let body_end = end.min(bytes.len());
        strings.push(Literal {
            start: i,
            body,
            end: body_end,
            text: text[body..body_end].to_owned(),
        });
        blank(&mut code, body, body_end);
        i = (end + close.len()).min(bytes.len());
    }
    let code = String::from_utf8(code).expect("blanking keeps UTF-8: only whole runs are replaced");
    (code, strings, comments)
}

/// Whether a language's one-quote strings may span lines.
fn is_multiline(language: Language) -> bool {
    matches!(language, Language::Rust | Language::Sql)
}

/// If a string literal opens at `i`: the length of its opening (prefix and
/// quotes) and its closing delimiter.
fn string_open(language: Language, bytes: &[u8], i: usize) -> Option<(usize, &'static [u8])> {
    let rest = &bytes[i..];
    let prev_ident = i > 0 && is_ident(bytes[i - 1]);
    match language {
        Language::Sql => (rest[0] == b'\'').then_some((1, b"'".as_slice())),
        Language::Python => {
            if rest.starts_with(b"\"\"\"") {
                Some((3, b"\"\"\"".as_slice()))
            } else if rest.starts_with(b"'''") {
                Some((3, b"'''".as_slice()))
            } else if rest[0] == b'"' {
                Some((1, b"\"".as_slice()))
            } else if rest[0] == b'\'' {
                Some((1, b"'".as_slice()))
            } else {
                None
            }
        }
        Language::JavaScript | Language::TypeScript => match rest[0] {
            b'"' => Some((1, b"\"".as_slice())),
            b'\'' => Some((1, b"'".as_slice())),
            b'`' => Some((1, b"`".as_slice())),
            _ => None,
        },
        Language::Go => match rest[0] {
            b'"' => Some((1, b"\"".as_slice())),
            b'`' => Some((1, b"`".as_slice())),
            b'\'' => char_literal(rest),
            _ => None,
        },
        Language::Java | Language::Kotlin => {
            if rest.starts_with(b"\"\"\"") {
                Some((3, b"\"\"\"".as_slice()))
            } else if rest[0] == b'"' {
                Some((1, b"\"".as_slice()))
            } else if rest[0] == b'\'' {
                char_literal(rest)
            } else {
                None
            }
        }
        Language::Rust => {
            if rest[0] == b'"' {
                return Some((1, b"\"".as_slice()));
            }
            if rest[0] == b'\'' {
                return char_literal(rest);
            }
            // Raw strings: r"…", r#"…"#, br"…" (not inside an identifier).
            if rest[0] == b'r' && !prev_ident {
                let hashes = rest[1..].iter().take_while(|&&b| b == b'#').count();
                if rest.get(1 + hashes) == Some(&b'"') {
                    let close: &'static [u8] = match hashes {
                        0 => b"\"",
                        1 => b"\"#",
                        2 => b"\"##",
                        _ => return None,
                    };
                    return Some((2 + hashes, close));
                }
            }
            None
        }
    }
}

/// A character literal (`'x'`, `'\n'`), not a Rust lifetime (`'a`).
fn char_literal(rest: &[u8]) -> Option<(usize, &'static [u8])> {
    let simple = rest.len() >= 3 && rest[1] != b'\\' && rest[2] == b'\'';
    let escaped = rest.len() >= 4 && rest[1] == b'\\';
    let multibyte =
        rest.len() >= 3 && rest[1] >= 0x80 && rest[2..].iter().take(4).any(|&b| b == b'\'');
    (simple || escaped || multibyte).then_some((1, b"'".as_slice()))
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
    fn a_brace_scope_is_the_enclosing_function() {
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
}
