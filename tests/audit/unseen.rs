//! The audit scored on trees written by someone who had not read its
//! rules, whose markers name the library, not the audit's kind:
//! `audit: new:LIBRARY fenced=yes|no|unknown|storage` on the line that
//! takes each lock (`tests/fixtures/audit-libraries/README.md` explains
//! the convention).
//!
//! The score is that README's "Measured" section's: a marker is found when
//! a finding of any kind is on its line or up to six lines above it (the
//! audit reports where a lock object is made, a line or a few before the
//! call that takes it), each finding matching one marker; a finding that
//! matches none is a false positive. `fenced` agrees when a marker's `yes`
//! or `storage` is reported fenced, `no` unfenced and `unknown` unknown.
//!
//! `cargo test --test audit unseen -- --nocapture` prints each tree's
//! table. Another tree with the same markers is scored by adding one line
//! to [`TREES`].

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use fencesim::audit::{self, Language};

use crate::crate_root;

/// How far above its marker a finding may be and still be the marker's.
const REACH: usize = 6;

/// The trees scored, each with the floors it must reach (what the audit
/// reaches, so a regression fails).
const TREES: &[(&str, Floor)] = &[
    (
        "tests/fixtures/audit-libraries",
        Floor {
            found: 68,
            false_positives: 5,
            fenced_right: 64,
        },
    ),
    // Written before the rules for issue 39's shapes, by an author who had
    // not seen the audit, and kept from the rules' author until they were
    // done: before them 63 of 72 found, 13 false positives, 40 of 63
    // `fenced` right; after, as below.
    (
        "tests/fixtures/audit-unseen",
        Floor {
            found: 63,
            false_positives: 10,
            fenced_right: 51,
        },
    ),
];

/// What a tree's score must reach: at least `found` markers found and
/// `fenced_right` verdicts right, at most `false_positives`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Floor {
    pub found: usize,
    pub false_positives: usize,
    pub fenced_right: usize,
}

/// A marker's verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expect {
    Yes,
    No,
    Unknown,
    /// Held by the storage that takes the writes: reported fenced.
    Storage,
}

impl Expect {
    fn agrees(self, fenced: Option<bool>) -> bool {
        match self {
            Expect::Yes | Expect::Storage => fenced == Some(true),
            Expect::No => fenced == Some(false),
            Expect::Unknown => fenced.is_none(),
        }
    }
}

/// One marker: file, line, library, verdict.
#[derive(Clone, Debug)]
struct Marker {
    file: String,
    line: usize,
    library: String,
    expect: Expect,
}

/// One finding: file, line, kind, verdict.
#[derive(Clone, Debug)]
struct Found {
    file: String,
    line: usize,
    kind: String,
    fenced: Option<bool>,
}

/// Counts for one language, or for the whole tree.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Counts {
    pub markers: usize,
    pub findings: usize,
    pub found: usize,
    pub false_positives: usize,
    pub fenced_right: usize,
}

impl Counts {
    pub fn missed(self) -> usize {
        self.markers - self.found
    }

    pub fn precision(self) -> f64 {
        ratio(self.found, self.found + self.false_positives)
    }

    pub fn recall(self) -> f64 {
        ratio(self.found, self.markers)
    }

    fn add(&mut self, o: Counts) {
        self.markers += o.markers;
        self.findings += o.findings;
        self.found += o.found;
        self.false_positives += o.false_positives;
        self.fenced_right += o.fenced_right;
    }
}

fn ratio(num: usize, den: usize) -> f64 {
    if den == 0 {
        1.0
    } else {
        num as f64 / den as f64
    }
}

/// A tree's score: the totals, per language, and what went wrong.
#[derive(Debug, Default)]
pub(crate) struct Score {
    pub total: Counts,
    pub languages: BTreeMap<&'static str, Counts>,
    /// `file:line library` of each marker no finding matched.
    pub missed: Vec<String>,
    /// `file:line kind` of each finding that matched no marker.
    pub false_positives: Vec<String>,
    /// `file:line library: marked X, reported Y` of each wrong verdict.
    pub fenced_wrong: Vec<String>,
}

impl Score {
    /// The table `--nocapture` prints.
    pub fn table(&self, dir: &str) -> String {
        let mut out = format!(
            "{dir}\n{:<12} {:>7} {:>8} {:>5} {:>5} {:>6} {:>9} {:>6} {:>7}\n",
            "language",
            "markers",
            "findings",
            "found",
            "false",
            "missed",
            "precision",
            "recall",
            "fenced"
        );
        let line = |name: &str, c: Counts| {
            format!(
                "{name:<12} {:>7} {:>8} {:>5} {:>5} {:>6} {:>8.0}% {:>5.0}% {:>4}/{}\n",
                c.markers,
                c.findings,
                c.found,
                c.false_positives,
                c.missed(),
                100.0 * c.precision(),
                100.0 * c.recall(),
                c.fenced_right,
                c.found
            )
        };
        for (language, &c) in &self.languages {
            out.push_str(&line(language, c));
        }
        out.push_str(&line("all", self.total));
        let list = |title: &str, items: &[String]| {
            let mut s = format!("{title} ({}):\n", items.len());
            for i in items {
                s.push_str(&format!("  {i}\n"));
            }
            s
        };
        out.push_str(&list("missed", &self.missed));
        out.push_str(&list("false positives", &self.false_positives));
        out.push_str(&list("fenced wrong", &self.fenced_wrong));
        out
    }
}

/// Every source file under `dir`, sorted.
fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .map(|e| e.expect("an entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            files(&path, out);
        } else if Language::of(&path).is_some() {
            out.push(path);
        }
    }
}

/// The `audit: new:LIBRARY fenced=WORD` markers of the tree at `dir`.
fn markers(dir: &str) -> Vec<Marker> {
    let mut paths = Vec::new();
    files(&crate_root().join(dir), &mut paths);
    let mut out = Vec::new();
    for path in paths {
        let text = std::fs::read_to_string(&path).expect("a source file is text");
        let file = path
            .strip_prefix(crate_root())
            .expect("under the crate")
            .to_string_lossy()
            .replace('\\', "/");
        for (i, line) in text.lines().enumerate() {
            let Some(marker) = line.split("audit: new:").nth(1) else {
                continue;
            };
            let mut words = marker.split_whitespace();
            let library = words.next().unwrap_or("").to_owned();
            let word = words.next().and_then(|w| w.strip_prefix("fenced="));
            let expect = match word {
                Some("yes") => Expect::Yes,
                Some("no") => Expect::No,
                Some("unknown") => Expect::Unknown,
                Some("storage") => Expect::Storage,
                other => panic!("{file}:{}: a marker says fenced={other:?}", i + 1),
            };
            out.push(Marker {
                file: file.clone(),
                line: i + 1,
                library,
                expect,
            });
        }
    }
    out
}

fn language_of(file: &str) -> &'static str {
    Language::of(Path::new(file)).map_or("?", Language::name)
}

/// Scores the audit of the tree at `dir` (relative to the crate root)
/// against its markers.
pub(crate) fn score(dir: &str) -> Score {
    let markers = markers(dir);
    let report = audit::audit(&[PathBuf::from(dir)], &crate_root().join("scenarios"))
        .unwrap_or_else(|e| panic!("{e}"));
    let found: Vec<Found> = report
        .findings
        .iter()
        .map(|f| Found {
            file: f.file.replace('\\', "/"),
            line: f.line,
            kind: f.kind.name().to_owned(),
            fenced: f.fenced,
        })
        .collect();
    score_of(&markers, &found)
}

/// The matching: first each finding on its marker's own line, then, for
/// the markers left, the nearest finding left up to [`REACH`] lines above.
fn score_of(markers: &[Marker], found: &[Found]) -> Score {
    let mut taken: BTreeSet<usize> = BTreeSet::new();
    let mut matched: Vec<Option<usize>> = vec![None; markers.len()];
    for (m, marker) in markers.iter().enumerate() {
        let same = found
            .iter()
            .enumerate()
            .find(|(i, f)| !taken.contains(i) && f.file == marker.file && f.line == marker.line);
        if let Some((i, _)) = same {
            taken.insert(i);
            matched[m] = Some(i);
        }
    }
    for (m, marker) in markers.iter().enumerate() {
        if matched[m].is_some() {
            continue;
        }
        let near = found
            .iter()
            .enumerate()
            .filter(|(i, f)| {
                !taken.contains(i)
                    && f.file == marker.file
                    && f.line < marker.line
                    && marker.line - f.line <= REACH
            })
            .max_by_key(|(_, f)| f.line);
        if let Some((i, _)) = near {
            taken.insert(i);
            matched[m] = Some(i);
        }
    }
    let mut score = Score::default();
    for (marker, hit) in markers.iter().zip(&matched) {
        let c = score
            .languages
            .entry(language_of(&marker.file))
            .or_default();
        c.markers += 1;
        let at = format!("{}:{} {}", marker.file, marker.line, marker.library);
        match hit {
            Some(i) => {
                c.found += 1;
                let f = &found[*i];
                if marker.expect.agrees(f.fenced) {
                    c.fenced_right += 1;
                } else {
                    score.fenced_wrong.push(format!(
                        "{at}: marked {:?}, reported {} ({} at line {})",
                        marker.expect,
                        match f.fenced {
                            Some(true) => "yes",
                            Some(false) => "no",
                            None => "unknown",
                        },
                        f.kind,
                        f.line
                    ));
                }
            }
            None => score.missed.push(at),
        }
    }
    for (i, f) in found.iter().enumerate() {
        let c = score.languages.entry(language_of(&f.file)).or_default();
        c.findings += 1;
        if !taken.contains(&i) {
            c.false_positives += 1;
            score
                .false_positives
                .push(format!("{}:{} {}", f.file, f.line, f.kind));
        }
    }
    for &c in score.languages.values() {
        score.total.add(c);
    }
    score
}

#[test]
fn unseen_trees_score_at_their_floors() {
    for &(dir, floor) in TREES {
        let score = score(dir);
        let text = score.table(dir);
        println!("{text}");
        let t = score.total;
        assert!(
            t.found >= floor.found
                && t.false_positives <= floor.false_positives
                && t.fenced_right >= floor.fenced_right,
            "{dir} fell below its floors (found {}, false positives {}, fenced right {}):\n{text}",
            floor.found,
            floor.false_positives,
            floor.fenced_right
        );
    }
}

#[test]
fn the_score_matches_each_finding_to_one_marker_up_to_six_lines_above() {
    let marker = |line: usize, expect: Expect| Marker {
        file: "a.go".to_owned(),
        line,
        library: "new:x".to_owned(),
        expect,
    };
    let found = |line: usize, fenced: Option<bool>| Found {
        file: "a.go".to_owned(),
        line,
        kind: "etcd_lock".to_owned(),
        fenced,
    };
    let markers = [
        marker(10, Expect::Yes),
        marker(12, Expect::Storage),
        marker(30, Expect::Unknown),
        marker(50, Expect::No),
    ];
    let findings = [
        // Line 10's own, and line 12's from a line above it.
        found(10, Some(true)),
        found(8, Some(true)),
        // Seven lines above line 30: too far, a false positive.
        found(23, None),
        found(50, None),
        found(70, Some(false)),
    ];
    let s = score_of(&markers, &findings);
    assert_eq!(
        s.total,
        Counts {
            markers: 4,
            findings: 5,
            found: 3,
            false_positives: 2,
            fenced_right: 2,
        }
    );
    assert_eq!(s.missed, ["a.go:30 new:x"]);
    assert_eq!(s.total.missed(), 1);
    assert_eq!(s.fenced_wrong.len(), 1);
}
