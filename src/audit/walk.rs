//! The files an audit reads: the paths given, directories walked in sorted
//! order, with what is skipped and why.

use std::path::{Path, PathBuf};

use super::Language;

/// Files larger than this are skipped with a note (generated or minified
/// code, data dumps).
pub const MAX_FILE_BYTES: u64 = 1 << 20;

/// At most this many files are read; the rest are skipped with a note.
pub const MAX_FILES: usize = 100_000;

/// Directories never entered: version control, build output, dependencies
/// vendored or installed into the tree.
const SKIPPED_DIRS: [&str; 11] = [
    "target",
    "node_modules",
    "vendor",
    "third_party",
    "third-party",
    "venv",
    "__pycache__",
    "dist",
    "build",
    "bower_components",
    "site-packages",
];

/// A source file to read: its path and language.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct SourceFile {
    /// The path as the audit shows it (the given path, joined with `/`).
    pub display: String,
    /// The path to open.
    pub path: PathBuf,
    /// Its language, from its extension.
    pub language: Language,
}

/// What the walk found: the files to read, in order, and notes on what it
/// skipped.
#[derive(Debug, Default)]
pub struct Walk {
    /// Source files, sorted by path, each once.
    pub files: Vec<SourceFile>,
    /// One line per skipped file or directory worth telling (`PATH: why`).
    pub notes: Vec<String>,
    /// Directories skipped by name (`.git`, `target`, `node_modules`, …).
    pub skipped_dirs: usize,
}

/// Walks `paths`: a missing path is an error naming it; a directory is
/// walked (entries sorted by name; hidden and vendored directories and
/// symbolic links skipped); a file is read if its extension names a
/// language the audit knows.
pub fn walk(paths: &[PathBuf]) -> Result<Walk, String> {
    let mut walk = Walk::default();
    for path in paths {
        let display = path.to_string_lossy().replace('\\', "/");
        let meta =
            std::fs::symlink_metadata(path).map_err(|e| format!("{display}: {}", reason(&e)))?;
        if meta.is_dir() {
            visit(path, display.trim_end_matches('/'), &mut walk);
        } else if meta.file_type().is_symlink() {
            // A link named on the command line is the user's choice.
            let target =
                std::fs::metadata(path).map_err(|e| format!("{display}: {}", reason(&e)))?;
            if target.is_dir() {
                visit(path, display.trim_end_matches('/'), &mut walk);
            } else {
                add_file(path, &display, &mut walk);
            }
        } else if Language::of(path).is_some() {
            add_file(path, &display, &mut walk);
        } else {
            walk.notes.push(format!(
                "{display}: not a source file the audit reads (by its extension), skipped"
            ));
        }
    }
    walk.files.sort();
    walk.files.dedup_by(|a, b| a.display == b.display);
    if walk.files.len() > MAX_FILES {
        walk.notes.push(format!(
            "{} source files found; only the first {MAX_FILES} (in path order) were read",
            walk.files.len()
        ));
        walk.files.truncate(MAX_FILES);
    }
    Ok(walk)
}

fn reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file or directory".to_owned(),
        std::io::ErrorKind::PermissionDenied => "permission denied".to_owned(),
        _ => e.to_string(),
    }
}

fn visit(dir: &Path, display: &str, walk: &mut Walk) {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) => {
            walk.notes
                .push(format!("{display}: not read ({})", reason(&e)));
            return;
        }
    };
    let mut names: Vec<(std::ffi::OsString, PathBuf)> = entries
        .filter_map(Result::ok)
        .map(|e| (e.file_name(), e.path()))
        .collect();
    names.sort();
    for (name, path) in names {
        let name_text = name.to_string_lossy();
        let shown = format!("{display}/{name_text}");
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if meta.file_type().is_symlink() {
            // Never followed: it may lead out of the tree, or around in it.
            if Language::of(&path).is_some() || std::fs::metadata(&path).is_ok_and(|m| m.is_dir()) {
                walk.notes
                    .push(format!("{shown}: a symbolic link, not followed"));
            }
            continue;
        }
        if meta.is_dir() {
            if name_text.starts_with('.') || SKIPPED_DIRS.contains(&name_text.as_ref()) {
                walk.skipped_dirs += 1;
                continue;
            }
            visit(&path, &shown, walk);
        } else if meta.is_file() {
            add_file(&path, &shown, walk);
        }
    }
}

fn add_file(path: &Path, display: &str, walk: &mut Walk) {
    if let Some(language) = Language::of(path) {
        walk.files.push(SourceFile {
            display: display.to_owned(),
            path: path.to_owned(),
            language,
        });
    }
}

/// Reads a source file: its text, or a note on why it is skipped (too
/// large, binary, not UTF-8, unreadable).
pub fn read(file: &SourceFile) -> Result<String, String> {
    let note = |why: String| format!("{}: {why}, skipped", file.display);
    let meta = std::fs::metadata(&file.path).map_err(|e| note(reason(&e)))?;
    if meta.len() > MAX_FILE_BYTES {
        return Err(note(format!(
            "{} bytes, larger than {MAX_FILE_BYTES}",
            meta.len()
        )));
    }
    let bytes = std::fs::read(&file.path).map_err(|e| note(reason(&e)))?;
    if bytes.iter().take(8192).any(|&b| b == 0) {
        return Err(note("a binary file".to_owned()));
    }
    String::from_utf8(bytes).map_err(|_| note("not UTF-8 text".to_owned()))
}
