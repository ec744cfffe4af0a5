//! Writing output files with care (`report --out`, `shrink --out`,
//! `run --trace`).
//!
//! - A symbolic link is never followed: a file is written to a fresh
//!   temporary file beside its target (created exclusively, so not through
//!   a link either) and renamed over the target, which replaces a link
//!   rather than writing where it points.
//! - An existing file is replaced only with `--force` or when it is
//!   fencesim's own earlier output: for `report`, a file listed in the
//!   directory's manifest ([`MANIFEST`]) that an earlier `report` wrote; for
//!   `shrink`, a file that starts with shrink's own header and whose text
//!   still matches the checksum that header gives (a file edited by hand
//!   is kept). Anything that is
//!   not a regular file (a directory, a device, a pipe) is never replaced.
//! - File names made from scenario names ([`file_stem`]) hold no path
//!   separator or control character, and never collide with the index.

use std::collections::BTreeSet;
use std::fs::OpenOptions;
use std::io::{self, Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::escape;

/// The file in which `report` lists, one per line, the files it wrote in a
/// directory: the only ones a later `report` there replaces without
/// `--force`.
pub(super) const MANIFEST: &str = ".fencesim-report";

/// The names of the index files `report` writes beside the reports.
pub(super) const INDEX_FILES: [&str; 2] = ["index.md", "index.html"];

/// What may be replaced when a target already exists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Replace {
    /// Only a regular file fencesim recognizes as its own output.
    Own,
    /// Anything but a directory or another special file: `--force`.
    Force,
}

/// Why a file was not written: a sentence naming it, for `error: …`.
#[derive(Debug)]
pub(super) struct Refused(pub String);

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn shown(path: &Path) -> String {
    escape::terminal(&path.display().to_string())
}

/// Whether `path` may be written: it does not exist; or it is a regular
/// file and `own` says it is fencesim's (or `replace` is
/// [`Replace::Force`]); or, with `--force`, a symbolic link (the link itself
/// is then replaced, never what it points to).
pub(super) fn check_target(
    path: &Path,
    replace: Replace,
    own: impl FnOnce(&Path) -> bool,
) -> Result<(), Refused> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Refused(format!("cannot inspect {}: {e}", shown(path)))),
    };
    let kind = meta.file_type();
    if kind.is_symlink() {
        return match replace {
            Replace::Force => Ok(()),
            Replace::Own => Err(Refused(format!(
                "{} is a symbolic link: fencesim does not write through links \
                 (--force replaces the link itself)",
                shown(path)
            ))),
        };
    }
    if !kind.is_file() {
        return Err(Refused(format!(
            "{} exists and is not a regular file: not replacing it",
            shown(path)
        )));
    }
    if replace == Replace::Force || own(path) {
        Ok(())
    } else {
        Err(Refused(format!(
            "{} already exists and was not written by fencesim: not replacing it \
             (--force replaces it)",
            shown(path)
        )))
    }
}

/// The symbolic link that writing into the directory `path` would go
/// through, if any: its last component, once trailing `/` and `/.` are
/// taken off and `..` applied (`linkdir/`, `linkdir/.` and `linkdir/sub/..`
/// all resolve `linkdir`); a component that a `..` after it would leave
/// through; and, in a relative path (where a checkout's links are), any
/// component on the way.
pub(super) fn link_in(path: &Path) -> Option<PathBuf> {
    use std::path::Component;
    let is_link = |p: &Path| {
        !p.as_os_str().is_empty()
            && std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink())
    };
    let relative = path.is_relative();
    let mut lexical = PathBuf::new();
    for component in path.components() {
        if (relative || component == Component::ParentDir) && is_link(&lexical) {
            return Some(lexical);
        }
        match component {
            Component::ParentDir
                if matches!(lexical.components().next_back(), Some(Component::Normal(_))) =>
            {
                lexical.pop();
            }
            other => lexical.push(other),
        }
    }
    is_link(&lexical).then_some(lexical)
}

/// Writes `bytes` to `path` through a temporary file renamed over it, after
/// [`check_target`].
pub(super) fn write(
    path: &Path,
    bytes: &[u8],
    replace: Replace,
    own: impl FnOnce(&Path) -> bool,
) -> Result<(), Refused> {
    check_target(path, replace, own)?;
    write_checked(path, bytes).map_err(|e| Refused(format!("cannot write {}: {e}", shown(path))))
}

/// The write itself: a new temporary file in the target's directory, then
/// a rename over the target (which replaces a link, never follows it).
fn write_checked(path: &Path, bytes: &[u8]) -> io::Result<()> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not a file name"))?;
    // A bounded number of attempts: names are unique per process and call,
    // so a clash means a leftover from a crashed run with the same pid.
    for _ in 0..16 {
        let temp = dir.join(format!(
            ".{}.{}-{}.fencesim-tmp",
            name.to_string_lossy(),
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        // `create_new` is O_CREAT | O_EXCL, which fails on an existing
        // link rather than following it (POSIX), as O_NOFOLLOW would.
        let mut file = match OpenOptions::new().write(true).create_new(true).open(&temp) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        };
        let written = file.write_all(bytes).and_then(|()| file.flush());
        drop(file);
        let renamed = written.and_then(|()| std::fs::rename(&temp, path));
        if renamed.is_err() {
            let _ = std::fs::remove_file(&temp);
        }
        return renamed;
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        "no free temporary file name beside it",
    ))
}

/// Whether `path` starts with `header`: how `shrink` recognizes a scenario
/// it wrote. Reads at most the header's length, never through a link.
pub(super) fn starts_with(path: &Path, header: &str) -> bool {
    let is_file = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_file());
    if !is_file {
        return false;
    }
    let mut head = Vec::with_capacity(header.len());
    std::fs::File::open(path)
        .and_then(|f| f.take(header.len() as u64).read_to_end(&mut head))
        .is_ok_and(|_| head == header.as_bytes())
}

/// The text of the regular file `path`, read without following a link and
/// only when it has at most `max` bytes.
pub(super) fn read_own(path: &Path, max: u64) -> io::Result<String> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    let mut bytes = Vec::new();
    file.take(max + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(io::Error::new(io::ErrorKind::InvalidData, "too large"));
    }
    String::from_utf8(bytes).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

/// The files an earlier `report` wrote in `dir`, from its manifest (empty
/// when there is none). A manifest that is a link or not a regular file is
/// an error: nothing in the directory is then taken as fencesim's.
pub(super) fn manifest(dir: &Path) -> Result<BTreeSet<String>, Refused> {
    let path = dir.join(MANIFEST);
    match std::fs::symlink_metadata(&path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(BTreeSet::new()),
        Err(e) => return Err(Refused(format!("cannot inspect {}: {e}", shown(&path)))),
        Ok(m) if !m.file_type().is_file() => {
            return Err(Refused(format!(
                "{} is not a regular file (a link?): not trusting it",
                shown(&path)
            )))
        }
        Ok(_) => {}
    }
    let text = std::fs::read_to_string(&path)
        .map_err(|e| Refused(format!("cannot read {}: {e}", shown(&path))))?;
    Ok(text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter(|l| is_plain_name(l))
        .map(str::to_owned)
        .collect())
}

/// The manifest's text: a comment, then the names, sorted.
pub(super) fn manifest_text(names: &BTreeSet<String>) -> String {
    let mut out = String::from(
        "# Files written by `fencesim report` in this directory. A later `report`\n\
         # replaces these and no others (unless given --force).\n",
    );
    for n in names {
        out.push_str(n);
        out.push('\n');
    }
    out
}

/// A name with no directory part, no control character, not `.` or `..`.
fn is_plain_name(name: &str) -> bool {
    !name.is_empty()
        && name != "."
        && name != ".."
        && !name.contains(['/', '\\'])
        && !name.chars().any(escape::is_unsafe)
}

/// Names that must not be a report's stem: the index's, and those Windows
/// reserves (a committed report must check out anywhere).
const RESERVED: &[&str] = &[
    "index", "con", "prn", "aux", "nul", "com1", "com2", "com3", "com4", "com5", "com6", "com7",
    "com8", "com9", "lpt1", "lpt2", "lpt3", "lpt4", "lpt5", "lpt6", "lpt7", "lpt8", "lpt9",
];

/// The longest stem, in bytes: with `.trace.json` and the temporary
/// file's decoration it stays below the usual 255-byte limit.
const MAX_STEM: usize = 160;

/// A scenario name as a file stem: anything but ASCII letters, digits, `.`,
/// `_` and `-` becomes `_`; a stem starting with `.` (hidden, or `..`), an
/// empty one and a reserved one (`index`, Windows' `con`, `nul`, …, in any
/// case) gets a leading `_`; at most 160 bytes.
pub fn file_stem(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .take(MAX_STEM)
        .collect();
    let base = s.split('.').next().unwrap_or("").to_ascii_lowercase();
    if s.is_empty() || s.starts_with('.') || RESERVED.contains(&base.as_str()) {
        s.insert(0, '_');
        s.truncate(MAX_STEM);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stems_have_no_separators_and_avoid_reserved_names() {
        assert_eq!(file_stem("figure-9-6"), "figure-9-6");
        assert_eq!(file_stem("../../etc/passwd"), "_.._.._etc_passwd");
        assert_eq!(file_stem("a/b\\c\x1b"), "a_b_c_");
        assert_eq!(file_stem("index"), "_index");
        assert_eq!(file_stem("INDEX"), "_INDEX");
        assert_eq!(file_stem("nul.txt"), "_nul.txt");
        assert_eq!(file_stem("README"), "README");
        assert_eq!(file_stem(""), "_");
        assert_eq!(file_stem(&"x".repeat(1000)).len(), MAX_STEM);
    }

    #[test]
    fn manifest_names_are_plain() {
        assert!(is_plain_name("figure-9-6.md"));
        for bad in ["", ".", "..", "../x", "a/b", "a\\b", "a\x1bb"] {
            assert!(!is_plain_name(bad), "{bad:?}");
        }
    }
}
