//! The loader's one error type, rendered like rustc's diagnostics.

use std::fmt;
use std::ops::Range;

use crate::escape;

/// A problem with a scenario file: where it is and what is wrong.
///
/// `line` and `col` are 1-based (columns count characters, not bytes). They
/// are 0 only when the file could not be read at all.
///
/// Its `Display` renders like rustc, with the offending line underlined:
///
/// ```text
/// error: unknown key `ttll` in [lock] for design `lease` (did you mean `ttl`?); accepted keys: …
///   --> scenarios/figure-9-6.toml:12:1
///    |
/// 12 | ttll = "10s"
///    | ^^^^
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    /// The file as it was named to the loader.
    pub file: String,
    /// 1-based line, 0 when the file could not be read.
    pub line: usize,
    /// 1-based column in characters, 0 when the file could not be read.
    pub col: usize,
    /// What is wrong, in one sentence (with the accepted alternatives when
    /// there are few).
    pub message: String,
    /// The offending source line and how many characters to underline.
    snippet: Option<(String, usize)>,
}

impl ScenarioError {
    /// An error at `file:line:col` with no source line to show.
    pub fn new(
        file: impl Into<String>,
        line: usize,
        col: usize,
        message: impl Into<String>,
    ) -> ScenarioError {
        ScenarioError {
            file: file.into(),
            line,
            col,
            message: message.into(),
            snippet: None,
        }
    }

    /// An error covering the byte range `span` of `text`, the contents of
    /// `file`. Out-of-range or mid-character spans are clamped rather than
    /// trusted, so a bad span can never turn an error into a panic.
    pub(crate) fn at(file: &str, text: &str, span: Range<usize>, message: String) -> ScenarioError {
        let start = floor_char_boundary(text, span.start);
        let end = floor_char_boundary(text, span.end.max(start));
        let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
        let line_end = text[start..].find('\n').map_or(text.len(), |i| start + i);
        let source_line = text[line_start..line_end].trim_end_matches('\r');
        let line = text[..start].matches('\n').count() + 1;
        let col = text[line_start..start].chars().count() + 1;
        let underlined = text[start..end.min(line_end)].trim_end().chars().count();
        ScenarioError {
            file: file.to_string(),
            line,
            col,
            message,
            snippet: Some((source_line.to_string(), underlined.max(1))),
        }
    }

    /// The same error without the offending line, for a file that may not
    /// be a scenario at all.
    pub(crate) fn without_source(self) -> ScenarioError {
        ScenarioError {
            snippet: None,
            ..self
        }
    }

    /// `file:line:col`, or just `file` when there is no position.
    pub fn location(&self) -> String {
        if self.line == 0 {
            self.file.clone()
        } else {
            format!("{}:{}:{}", self.file, self.line, self.col)
        }
    }
}

fn floor_char_boundary(text: &str, index: usize) -> usize {
    let mut index = index.min(text.len());
    while !text.is_char_boundary(index) {
        index -= 1;
    }
    index
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Everything here can come from the file (a quoted key, the line
        // itself) or its name: control characters are shown, never sent to
        // the terminal.
        writeln!(f, "error: {}", escape::terminal(&self.message))?;
        let number = self.line.to_string();
        let gutter = " ".repeat(number.len());
        writeln!(f, "{gutter}--> {}", escape::terminal(&self.location()))?;
        let Some((source_line, underlined)) = &self.snippet else {
            return Ok(());
        };
        // Tabs are copied into the padding so the carets line up under the
        // same characters in any terminal; an escaped character is as wide
        // as its escape.
        let mut shown = String::new();
        let mut padding = String::new();
        let (mut carets, mut covered) = (0, 0);
        let first = self.col.saturating_sub(1);
        for (i, c) in source_line.chars().enumerate() {
            let text = if c == '\t' {
                "\t".to_owned()
            } else {
                escape::terminal(c.encode_utf8(&mut [0; 4]))
            };
            let width = text.chars().count();
            if i < first {
                padding.push_str(&if c == '\t' {
                    text.clone()
                } else {
                    " ".repeat(width)
                });
            } else if i < first + underlined {
                carets += width;
                covered += 1;
            }
            shown.push_str(&text);
        }
        // A span past the end of the line (a missing value) keeps its carets.
        let carets = carets + underlined.saturating_sub(covered);
        writeln!(f, "{gutter} |")?;
        writeln!(f, "{number} | {shown}")?;
        writeln!(f, "{gutter} | {padding}{}", "^".repeat(carets))
    }
}

impl std::error::Error for ScenarioError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_like_rustc_with_the_span_underlined() {
        let text = "a = 1\n".repeat(11) + "ttll = \"10s\"\n";
        let start = text.find("ttll").unwrap();
        let error = ScenarioError::at("s.toml", &text, start..start + 4, "bad".into());
        assert_eq!((error.line, error.col), (12, 1));
        assert_eq!(
            error.to_string(),
            "error: bad\n  --> s.toml:12:1\n   |\n12 | ttll = \"10s\"\n   | ^^^^\n"
        );
    }

    #[test]
    fn columns_count_characters_and_spans_are_clamped() {
        let text = "name = \"é\" x";
        let error = ScenarioError::at("s", text, 12..500, "m".into());
        assert_eq!((error.line, error.col), (1, 12));
        let inside_e = text.find('é').unwrap() + 1;
        let error = ScenarioError::at("s", text, inside_e..inside_e, "m".into());
        assert_eq!(error.col, 9);
    }

    #[test]
    fn an_error_at_the_end_of_the_text_still_renders() {
        let error = ScenarioError::at("s", "a = ", 4..4, "m".into());
        assert_eq!((error.line, error.col), (1, 5));
        assert!(error.to_string().ends_with("1 | a = \n  |     ^\n"));
    }

    #[test]
    fn control_characters_in_the_line_and_message_are_shown_not_sent() {
        let text = "name = \"x\"\n\x1b]0;t\x07 = 1\n";
        let start = text.find('\x1b').unwrap();
        let key = "\x1b]0;t\x07";
        let error = ScenarioError::at(
            "s\x1b.toml",
            text,
            start..start + key.len(),
            format!("unknown key `{key}`"),
        );
        let shown = error.to_string();
        assert!(
            !shown.chars().any(|c| c.is_control() && c != '\n'),
            "{shown:?}"
        );
        assert_eq!(
            shown,
            "error: unknown key `\\x1b]0;t\\x07`\n --> s\\x1b.toml:2:1\n  |\n\
             2 | \\x1b]0;t\\x07 = 1\n  | ^^^^^^^^^^^^\n"
        );
        // The carets follow the escapes: a tab stays a tab, `\x1b` is 4 wide.
        let text = "\t\x1bk = 1";
        let error = ScenarioError::at("s", text, 2..3, "m".into());
        assert!(error
            .to_string()
            .ends_with("1 | \t\\x1bk = 1\n  | \t    ^\n"));
    }

    #[test]
    fn an_error_without_position_names_only_the_file() {
        let error = ScenarioError::new("missing.toml", 0, 0, "cannot read");
        assert_eq!(error.to_string(), "error: cannot read\n --> missing.toml\n");
    }
}
