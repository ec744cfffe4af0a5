//! Text from a scenario file, made safe for each medium it reaches.
//!
//! Whatever a scenario says (its name, description, node names, keys, and
//! what a design journals from it, such as SQLite's error text) is data. It
//! must not clear a terminal, set its title or write its clipboard, hide a
//! report's verdict in a Markdown comment, or end a Mermaid statement. One
//! function per medium, used by every printer and renderer:
//!
//! - [`terminal`] (one line) and [`terminal_lines`] (keeps line breaks):
//!   control characters and bidirectional overrides shown visibly, as
//!   `\x1b` or `\u{202e}`.
//! - [`markdown`]: one line of inert Markdown text, for paragraphs and
//!   table cells; [`fence`] and [`code_span`] for literal blocks and spans.
//! - [`mermaid`]: a Mermaid label (participant, message or note text).
//! - [`html`]: HTML text or a quoted attribute value.
//! - [`json_line`]: a serialized JSON value made safe to print as is.
//!
//! (The module is the crate's own; its examples are its unit tests.)

use std::fmt::Write as _;

/// Whether a terminal (or a reader) could be misled by `c` printed raw:
/// C0 and C1 control characters, DEL, and the Unicode format characters
/// that reorder or hide text (bidirectional embeddings, overrides and
/// isolates, zero-width marks, the line and paragraph separators).
pub fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{200b}'..='\u{200f}'
                | '\u{2028}'..='\u{202e}'
                | '\u{2060}'..='\u{2069}'
                | '\u{feff}'
                | '\u{fff9}'..='\u{fffb}'
        )
}

/// `c` as visible text: `\x1b` for a control character below U+0100,
/// `\u{202e}` above.
fn visible(c: char, out: &mut String) {
    let n = c as u32;
    if n < 0x100 {
        write!(out, "\\x{n:02x}").unwrap();
    } else {
        write!(out, "\\u{{{n:x}}}").unwrap();
    }
}

/// One line for the terminal: every unsafe character (line breaks and tabs
/// included) shown visibly.
pub fn terminal(s: &str) -> String {
    if !s.chars().any(is_unsafe) {
        return s.to_owned();
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if is_unsafe(c) {
            visible(c, &mut out);
        } else {
            out.push(c);
        }
    }
    out
}

/// Text of several lines for the terminal: like [`terminal`], but `\n` and
/// `\t` pass (a `\r` does not: it would let a line overwrite itself).
pub fn terminal_lines(s: &str) -> String {
    if !s.chars().any(|c| is_unsafe(c) && c != '\n' && c != '\t') {
        return s.to_owned();
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if is_unsafe(c) && c != '\n' && c != '\t' {
            visible(c, &mut out);
        } else {
            out.push(c);
        }
    }
    out
}

/// One line of Markdown that renders as exactly the text given, for a
/// paragraph or a table cell: no HTML (comments included), no emphasis,
/// links, images, math or strikethrough, no heading, list or quote at the
/// start, no cell break. Runs of whitespace (line breaks included) become
/// one space; other unsafe characters are shown as in [`terminal`]. A word
/// that GitHub would turn into a link by itself (a URL, `www.…`, an e-mail
/// address: no escape stops that) is shown as code, which is never linked.
pub fn markdown(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for (i, word) in s.split_whitespace().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        if linkable(word) {
            // A `|` would end a table cell even inside code; `<` and `>`
            // are kept out of the page, so that no scenario text holds the
            // start of an HTML comment, even as code.
            let shown = word
                .replace('|', "\\x7c")
                .replace('<', "\\x3c")
                .replace('>', "\\x3e");
            out.push_str(&code_span(&shown));
        } else {
            markdown_word(word, &mut out);
        }
    }
    // Block syntax needs its marker at the start of the line: a heading
    // (`#`), a list item (`-`, `+`, `1.`, `1)`) or a setext underline (`=`).
    let digits = out.chars().take_while(char::is_ascii_digit).count();
    let marker = match out.as_bytes().get(digits) {
        Some(b'.' | b')') if digits > 0 => Some(digits),
        Some(b'#' | b'-' | b'+' | b'=') if digits == 0 => Some(0),
        _ => None,
    };
    if let Some(at) = marker {
        out.insert(at, '\\');
    }
    out
}

/// Whether GitHub's renderer could make a link of `word` without any
/// Markdown syntax (its extended autolinks: `scheme://`, `www.`,
/// `mailto:`, `xmpp:`, an address with `@` and a domain).
fn linkable(word: &str) -> bool {
    let lower = word.to_ascii_lowercase();
    ["://", "www.", "mailto:", "xmpp:"]
        .iter()
        .any(|p| lower.contains(p))
        || lower
            .split_once('@')
            .is_some_and(|(local, domain)| !local.is_empty() && domain.contains('.'))
}

fn markdown_word(word: &str, out: &mut String) {
    for c in word.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '~' | '$' => {
                out.push('\\');
                out.push(c);
            }
            c if is_unsafe(c) => visible(c, out),
            c => out.push(c),
        }
    }
}

/// A fenced code block around `body` (which ends with a newline or is
/// empty) that `body` cannot close: the fence is longer than any run of
/// backticks inside it.
pub fn fence(info: &str, body: &str) -> String {
    let ticks = "`".repeat(longest_run(body, '`').max(2) + 1);
    let newline = if body.is_empty() || body.ends_with('\n') {
        ""
    } else {
        "\n"
    };
    format!("{ticks}{info}\n{body}{newline}{ticks}\n")
}

/// An inline code span holding `s` literally (made one line, with unsafe
/// characters shown as in [`terminal`]).
pub fn code_span(s: &str) -> String {
    let one_line = terminal(s);
    let ticks = "`".repeat(longest_run(&one_line, '`') + 1);
    let pad = if one_line.starts_with('`') || one_line.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{ticks}{pad}{one_line}{pad}{ticks}")
}

fn longest_run(s: &str, c: char) -> usize {
    let (mut longest, mut run) = (0, 0);
    for x in s.chars() {
        run = if x == c { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    longest
}

/// Text for a Mermaid label (a participant's alias, a message or a note):
/// what ends a statement (`;`, a line break), starts a comment or a
/// directive (`%%`, `%%{…}%%`), reads as markup (`<`, `>`, `&`) or could
/// close the Markdown fence around the diagram (`` ` ``) is written as a
/// Mermaid entity (`#59;`); other unsafe characters as in [`terminal`].
pub fn mermaid(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in terminal(s).chars() {
        match c {
            '<' => out.push_str("#lt;"),
            '>' => out.push_str("#gt;"),
            '#' | ';' | '%' | '{' | '}' | '&' | '`' | '"' => write!(out, "#{};", c as u32).unwrap(),
            c => out.push(c),
        }
    }
    out
}

/// HTML text, or an attribute value in double quotes (the only quotes
/// fencesim's pages use).
pub fn html(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
    out
}

/// A serialized JSON value (`serde_json` output) safe to print: `serde_json`
/// escapes C0 controls, but passes DEL, C1 controls and the format
/// characters of [`is_unsafe`] raw. Outside strings JSON is plain ASCII, so
/// every such character is inside a string, where `\uXXXX` means the same.
pub fn json_line(json: &str) -> String {
    if !json.chars().any(is_unsafe) {
        return json.to_owned();
    }
    let mut out = String::with_capacity(json.len() + 8);
    for c in json.chars() {
        if is_unsafe(c) {
            // Unsafe characters are all in the Basic Multilingual Plane.
            write!(out, "\\u{:04x}", c as u32).unwrap();
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_medium_gets_its_own_escape() {
        assert_eq!(terminal("a\x1b]52;c;aGk=\x07b"), "a\\x1b]52;c;aGk=\\x07b");
        assert_eq!(
            markdown("**Verdict:** SAFE <!--"),
            "\\*\\*Verdict:\\*\\* SAFE &lt;!--"
        );
        assert_eq!(
            mermaid("a;b%%{init}%%"),
            "a#59;b#37;#37;#123;init#125;#37;#37;"
        );
        assert_eq!(html("</script>"), "&lt;/script&gt;");
    }

    #[test]
    fn a_word_github_would_link_is_shown_as_code() {
        assert_eq!(markdown("see *www.example.com*"), "see `*www.example.com*`");
        assert_eq!(markdown("ops@example.com"), "`ops@example.com`");
        assert_eq!(markdown("a_b"), "a\\_b");
    }

    #[test]
    fn terminal_shows_every_control_and_format_character() {
        let attack = "\x1b[2J\x1b]0;title\x07\r\u{9b}31m\u{7f}\u{202e}txt.exe\n\t";
        let shown = terminal(attack);
        assert!(!shown.chars().any(is_unsafe), "{shown}");
        assert_eq!(
            shown,
            "\\x1b[2J\\x1b]0;title\\x07\\x0d\\x9b31m\\x7f\\u{202e}txt.exe\\x0a\\x09"
        );
        assert_eq!(terminal_lines("a\x1bb\nc\td\re"), "a\\x1bb\nc\td\\x0de");
        assert_eq!(terminal("figure-9-6 ⏸ é"), "figure-9-6 ⏸ é");
    }

    #[test]
    fn markdown_is_inert_text() {
        assert_eq!(markdown("# Heading"), "\\# Heading");
        assert_eq!(markdown("- item"), "\\- item");
        assert_eq!(markdown("12. item"), "12\\. item");
        assert_eq!(markdown("a\n\n# b\n---"), "a # b ---");
        // A word with a URL in it is code: GitHub links a bare URL.
        assert_eq!(
            markdown("[x](http://e) ![i](j)"),
            "`[x](http://e)` !\\[i\\](j)"
        );
        assert_eq!(markdown("[x](y)"), "\\[x\\](y)");
        assert_eq!(markdown("a|www.b.c"), "`a\\x7cwww.b.c`");
        assert_eq!(markdown("<!--http://e"), "`\\x3c!--http://e`");
        assert_eq!(markdown("<b>&amp;</b>"), "&lt;b&gt;&amp;amp;&lt;/b&gt;");
        assert_eq!(
            markdown("a|b `c` _d_ ~e~ $f$"),
            "a\\|b \\`c\\` \\_d\\_ \\~e\\~ \\$f\\$"
        );
        assert_eq!(
            markdown("figure-9-6 (token 33 ≥ 34)."),
            "figure-9-6 (token 33 ≥ 34)."
        );
        assert_eq!(markdown("\x1b]0;x\x07"), "\\x1b\\]0;x\\x07");
    }

    #[test]
    fn fences_and_spans_outlast_their_contents() {
        assert_eq!(fence("text", "a\n"), "```text\na\n```\n");
        assert_eq!(fence("", "```\n````x"), "`````\n```\n````x\n`````\n");
        assert_eq!(code_span("a`b"), "``a`b``");
        assert_eq!(code_span("`a"), "`` `a ``");
    }

    #[test]
    fn mermaid_labels_cannot_end_a_statement_or_the_fence() {
        assert_eq!(
            mermaid("x;y\n%%{i}%%```<br>"),
            "x#59;y\\x0a#37;#37;#123;i#125;#37;#37;#96;#96;#96;#lt;br#gt;"
        );
        assert_eq!(mermaid("client1"), "client1");
    }

    #[test]
    fn json_lines_escape_what_serde_json_passes() {
        let v = serde_json::json!({ "name": "a\u{9b}\u{7f}\u{202e}\x1b" });
        let line = json_line(&v.to_string());
        assert!(!line.chars().any(is_unsafe));
        let back: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(back, v);
    }
}
