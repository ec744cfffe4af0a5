//! The walk: vendored and hidden directories skipped, binary and huge files
//! skipped with a note, symbolic links never followed.

use std::path::PathBuf;

use fencesim::audit::{self, walk};

use crate::{fencesim_in, TempDir, FIXTURES};

const LOCK: &[u8] =
    b"def f(r, db):\n    r.set('k', 1, nx=True, px=1000)\n    db.execute('UPDATE t SET v = 1')\n";

#[test]
fn vendored_and_installed_dependencies_are_not_read() {
    let report = audit::audit(
        &[PathBuf::from(FIXTURES)],
        std::path::Path::new("scenarios"),
    )
    .expect("audit");
    assert!(report.skipped_dirs >= 2, "vendor/ and node_modules/");
    assert!(!report
        .findings
        .iter()
        .any(|f| f.file.contains("/vendor/") || f.file.contains("/node_modules/")));
}

#[test]
fn binary_and_huge_files_are_skipped_with_a_note() {
    let dir = TempDir::new("skips");
    dir.write("tree/ok.py", LOCK);
    dir.write("tree/blob.go", b"package x\x00\x01\x02 SetNX(");
    let mut huge = b"// generated\n".to_vec();
    huge.resize(walk::MAX_FILE_BYTES as usize + 1, b'x');
    dir.write("tree/bundle.min.js", &huge);
    dir.write("tree/.git/hooks/lock.py", LOCK);
    dir.write("tree/target/debug/lock.py", LOCK);
    let out = fencesim_in(dir.path(), &["audit", "tree"]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert_eq!(
        out.stdout
            .lines()
            .filter(|l| l.starts_with("tree/"))
            .count(),
        1
    );
    assert!(out.stdout.contains("tree/ok.py:2:"), "{}", out.stdout);
    assert!(
        out.stderr
            .contains("note: tree/blob.go: a binary file, skipped"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("note: tree/bundle.min.js: ") && out.stderr.contains("larger than"),
        "{}",
        out.stderr
    );
    assert!(
        out.stdout.contains("(2 skipped: see the notes)"),
        "{}",
        out.stdout
    );
}

#[cfg(unix)]
#[test]
fn symbolic_links_are_not_followed() {
    let dir = TempDir::new("links");
    dir.write("outside/lock.py", LOCK);
    dir.write("tree/own.py", LOCK);
    std::os::unix::fs::symlink(dir.path().join("outside"), dir.path().join("tree/out"))
        .expect("symlink");
    std::os::unix::fs::symlink(
        dir.path().join("outside/lock.py"),
        dir.path().join("tree/lock.py"),
    )
    .expect("symlink");
    let out = fencesim_in(dir.path(), &["audit", "tree"]);
    let files: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| !l.starts_with("audit:"))
        .collect();
    assert_eq!(files.len(), 1, "{}", out.stdout);
    assert!(files[0].starts_with("tree/own.py:"), "{}", out.stdout);
    assert!(
        out.stderr
            .contains("tree/out: a symbolic link, not followed")
            && out
                .stderr
                .contains("tree/lock.py: a symbolic link, not followed"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_file_given_by_name_is_read_and_other_files_are_ignored() {
    let dir = TempDir::new("single");
    dir.write("job.py", LOCK);
    dir.write("notes.txt", b"r.set('k', 1, nx=True, px=1000)\n");
    let out = fencesim_in(dir.path(), &["audit", "job.py", "notes.txt", "job.py"]);
    assert_eq!(out.code, 1);
    let findings: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.starts_with("job.py:"))
        .collect();
    assert_eq!(
        findings.len(),
        1,
        "a file given twice is read once:\n{}",
        out.stdout
    );
    assert!(
        out.stderr
            .contains("note: notes.txt: not a source file the audit reads"),
        "{}",
        out.stderr
    );
}
