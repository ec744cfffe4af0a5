//! The documentation, held to what the code does: the transcripts of the
//! README and of the docs pages are run and compared with what the binary prints
//! (`transcripts`), `docs/cli.md` names every JSON field, flag, command and
//! exit code the binary has (`cli`), `docs/oracle.md` every verdict,
//! violation kind and milestone (`oracle`), the catalogue of bundled
//! scenarios (`docs/catalogue.md`) is the directory (`catalogue`), and
//! every relative link of the pages resolves (`links`).
//!
//! A transcript is a ```` ```text ```` block of a page whose first line is
//! a shell prompt:
//!
//! ```text
//! $ fencesim run scenarios/figure-9-6-unfenced.toml
//! …
//! stale_write (event 31):
//! …
//! $ echo $?
//! 0
//! ```
//!
//! Each `$ fencesim ARGS` line runs the real binary with ARGS; the lines up
//! to the next prompt are its standard output, line for line, where a line
//! holding only `…` stands for any number of lines (an excerpt says so).
//! `$ echo $?` gives the previous command's exit code; without it, the
//! command must exit 0. `$ cat FILE` shows a file the commands wrote. A
//! command ending in `2>&1` shows its standard error after its standard
//! output. A ```` ```toml file=NAME ```` block is written to NAME before the
//! commands after it run. All blocks of a page run in order, in one fresh
//! directory holding copies of `scenarios/` and `examples/`.
//!
//! Only what truly varies between two runs is normalized, and only where a
//! block says so in its info string: `varies=speed` replaces the wall-clock
//! figures of explore's `speed` line (seeds per second, wall seconds and the
//! simulated/wall ratio) on both sides. Trailing spaces are ignored (editors
//! strip them).

mod catalogue;
mod cli;
mod designs;
mod links;
mod oracle;
mod transcripts;

#[path = "../support/mod.rs"]
mod support;

pub use support::{crate_root, fencesim_in, TempDir};

/// A page of the documentation, read at test time (so a failure names the
/// page as it is now).
pub fn page(path: &str) -> String {
    std::fs::read_to_string(crate_root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The pages: `README.md` and every `docs/*.md`, as paths from the
/// repository's root, in order.
pub fn pages() -> Vec<String> {
    let mut pages = vec!["README.md".to_owned()];
    let mut docs: Vec<String> = std::fs::read_dir(crate_root().join("docs"))
        .expect("docs/")
        .map(|e| {
            e.expect("dir entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|name| name.ends_with(".md"))
        .map(|name| format!("docs/{name}"))
        .collect();
    docs.sort();
    pages.extend(docs);
    pages
}

/// A fenced block of a Markdown page.
#[derive(Clone, Debug)]
pub struct Block {
    /// 1-based line of the opening fence.
    pub line: usize,
    /// The info string: the language, then any words after it.
    pub info: String,
    /// The lines between the fences.
    pub lines: Vec<String>,
}

impl Block {
    /// The language of the block (`text`, `toml`, `sh`, or empty).
    pub fn lang(&self) -> &str {
        self.info.split_whitespace().next().unwrap_or("")
    }

    /// The value of `key=value` in the info string.
    pub fn attr(&self, key: &str) -> Option<&str> {
        self.info
            .split_whitespace()
            .skip(1)
            .find_map(|w| w.strip_prefix(key)?.strip_prefix('='))
    }
}

/// The fenced blocks of `text` (fences may be indented, as in a list).
pub fn blocks(file: &str, text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut open: Option<(Block, usize)> = None;
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        match &mut open {
            None => {
                if let Some(info) = trimmed.strip_prefix("```") {
                    let block = Block {
                        line: i + 1,
                        info: info.trim().to_owned(),
                        lines: Vec::new(),
                    };
                    open = Some((block, indent));
                }
            }
            Some((block, indent)) => {
                if trimmed.starts_with("```") {
                    out.extend(open.take().map(|(b, _)| b));
                } else {
                    let cut = line.len().min(*indent);
                    let body = if line[..cut].trim().is_empty() {
                        &line[cut..]
                    } else {
                        line
                    };
                    block.lines.push(body.to_owned());
                }
            }
        }
    }
    if let Some((block, _)) = open {
        panic!("{file}:{}: a ``` block is never closed", block.line);
    }
    out
}

/// A fresh directory holding copies of the bundled `scenarios/` and the
/// example scenarios of `examples/`, as a checkout has them.
pub fn checkout(test: &str) -> TempDir {
    let dir = TempDir::new(test);
    for sub in ["scenarios", "examples"] {
        std::fs::create_dir_all(dir.path().join(sub)).expect("create dir");
        let entries = std::fs::read_dir(crate_root().join(sub)).expect("read dir");
        for entry in entries {
            let path = entry.expect("dir entry").path();
            if path.extension().is_some_and(|e| e == "toml") {
                let name = path.file_name().expect("a file name");
                std::fs::copy(&path, dir.path().join(sub).join(name)).expect("copy");
            }
        }
    }
    dir
}
