//! Reading a scenario file from disk, for every command: only a regular
//! file, never through a symbolic link, and at most [`MAX_FILE_BYTES`].
//!
//! A scenario may come with a pull request, and Git stores symbolic links:
//! a link named like a scenario could point at a device (`/dev/zero` never
//! ends), at itself, or at a file whose first line would be shown in an
//! error. So a link is refused, not followed (as the file, and in a relative
//! path, where a checkout's links are, on the way to it), and so is
//! anything that is not a regular file (a device, a pipe, a socket: opening a pipe would
//! wait for a writer, so the file is opened without waiting and checked
//! again once open).

use std::fs::{File, OpenOptions};
use std::io::Read as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};

use super::ScenarioError;

/// The largest scenario file read, in bytes (1 MiB). A file of 1 000
/// clients, the most a scenario may have, takes about 40 000.
pub const MAX_FILE_BYTES: u64 = 1 << 20;

/// The text of the scenario file at `path`, named `file` in errors (at line
/// 0 when it cannot be read, at the first bad byte's line and column when
/// it is not UTF-8).
pub(super) fn read(path: &Path, file: &str) -> Result<String, ScenarioError> {
    read_regular(path, file, Kind::SCENARIO)?.ok_or_else(|| {
        ScenarioError::new(
            file,
            0,
            0,
            "cannot read scenario file: No such file or directory (os error 2)".to_owned(),
        )
    })
}

/// What a file read by [`read_regular`] is: its name in errors and its
/// size bound.
#[derive(Clone, Copy, Debug)]
pub struct Kind {
    /// `scenario`, `corpus`, …
    pub noun: &'static str,
    /// The largest file read, in bytes.
    pub max_bytes: u64,
}

impl Kind {
    /// A scenario file: at most [`MAX_FILE_BYTES`].
    pub const SCENARIO: Kind = Kind {
        noun: "scenario",
        max_bytes: MAX_FILE_BYTES,
    };
}

/// The text of the `kind` file at `path`, read as a scenario file is (a
/// regular file, never through a symbolic link, at most `kind.max_bytes`),
/// or `None` when nothing is there.
pub fn read_regular(path: &Path, file: &str, kind: Kind) -> Result<Option<String>, ScenarioError> {
    let refuse = |message: String| ScenarioError::new(file, 0, 0, message);
    let noun = kind.noun;
    if let Some(link) = link_on_the_way(path) {
        return Err(refuse(format!(
            "the {noun} path goes through the symbolic link {}: fencesim reads only \
             regular files, never through a link",
            link.display()
        )));
    }
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(refuse(format!("cannot read {noun} file: {e}"))),
    };
    if meta.file_type().is_symlink() {
        return Err(refuse(format!(
            "the {noun} file is a symbolic link: fencesim reads only regular files \
             (a link could point anywhere); name the file it points to"
        )));
    }
    check_kind(&meta, kind).map_err(refuse)?;
    let opened = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(|e| refuse(format!("cannot read {noun} file: {e}")))?;
    // The path may have been replaced since it was inspected.
    let meta = opened
        .metadata()
        .map_err(|e| refuse(format!("cannot read {noun} file: {e}")))?;
    check_kind(&meta, kind).map_err(refuse)?;
    let bytes = read_at_most(opened, kind).map_err(refuse)?;
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|e| not_utf8(file, noun, e))
}

/// In a relative path (where a checkout's links are), the first directory
/// on the way that is a symbolic link.
fn link_on_the_way(path: &Path) -> Option<PathBuf> {
    if !path.is_relative() {
        return None;
    }
    let mut prefix = PathBuf::new();
    let mut components = path.components().peekable();
    while let Some(component) = components.next() {
        prefix.push(component);
        let last = components.peek().is_none();
        if !last && std::fs::symlink_metadata(&prefix).is_ok_and(|m| m.file_type().is_symlink()) {
            return Some(prefix);
        }
    }
    None
}

/// Refuses a file that is not regular, or larger than `kind.max_bytes`.
fn check_kind(meta: &std::fs::Metadata, kind: Kind) -> Result<(), String> {
    if !meta.file_type().is_file() {
        let what = if meta.is_dir() {
            "a directory"
        } else {
            "not a regular file (a device, a pipe or a socket)"
        };
        return Err(format!(
            "the {} path is {what}: fencesim reads only regular files",
            kind.noun
        ));
    }
    if meta.len() > kind.max_bytes {
        return Err(too_large(meta.len(), kind));
    }
    Ok(())
}

fn too_large(bytes: u64, kind: Kind) -> String {
    let max = kind.max_bytes;
    format!(
        "the {noun} file is {} bytes, more than a {noun} may have ({max} bytes)",
        if bytes > max {
            bytes.to_string()
        } else {
            format!("more than {max}")
        },
        noun = kind.noun
    )
}

/// Reads at most one byte more than `kind.max_bytes`, whatever the file
/// said its size was (a file can grow while it is read).
fn read_at_most(file: File, kind: Kind) -> Result<Vec<u8>, String> {
    let mut bytes = Vec::new();
    file.take(kind.max_bytes + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read {} file: {e}", kind.noun))?;
    if bytes.len() as u64 > kind.max_bytes {
        return Err(too_large(0, kind));
    }
    Ok(bytes)
}

/// An error at the line and column (in characters) of the first byte that
/// is not UTF-8; the line itself is not shown.
fn not_utf8(file: &str, noun: &str, e: std::string::FromUtf8Error) -> ScenarioError {
    let at = e.utf8_error().valid_up_to();
    let bytes = e.as_bytes();
    let bad = bytes[at];
    // The prefix is valid UTF-8 by definition of `valid_up_to`.
    let before = std::str::from_utf8(&bytes[..at]).unwrap_or_default();
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let line = before.matches('\n').count() + 1;
    let col = before[line_start..].chars().count() + 1;
    ScenarioError::new(
        file,
        line,
        col,
        format!("the {noun} file is not UTF-8 text: byte 0x{bad:02x} is not valid UTF-8 here"),
    )
}
