//! Guided search (`explore --guided --corpus FILE`): milestones as coverage,
//! a corpus of the schedules that reached a new milestone combination, and
//! mutations of its entries alongside fresh random seeds.
//!
//! Every schedule is a pure function of (scenario, seed, corpus as loaded):
//! seed `s` draws, from an RNG seeded by `s`, whether it runs the ordinary
//! [`random::schedule`] (half the time, and always with an empty corpus) or
//! a mutation of a corpus entry (one to three of: add a fault, remove one,
//! shift one's trigger, lengthen one). Entries found during a sweep are
//! never drawn from in that sweep (which ones exist at a given moment would
//! depend on the threads' timing): they are appended, in seed order, to the
//! corpus the sweep writes at its end, for the next sweep to draw from. A
//! guided seed therefore replays alone from its seed and the corpus file's
//! first [`Corpus::len`] entries (`run FILE --seed N --faults guided
//! --corpus FILE --corpus-entries K`).
//!
//! A *milestone combination* is the set of milestones a run reached (count
//! > 0, counts ignored); the empty set is never an entry.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Duration;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use sim::fault::random::Draw;

use super::random::{self, Targets};
use super::sweep::SeedReport;
use crate::oracle::{milestones, Milestones};
use crate::scenario::{ExploreSpec, Fault, FaultSpec, Scenario, ScenarioError, Trigger};

/// Mixed into the seed so that the guided choice's stream is unrelated to
/// the random schedule's ("guided!!" in ASCII).
const GUIDED_SALT: u64 = 0x6775_6964_6564_2121;

/// The most faults a mutation grows a schedule to.
const MAX_MUTATED_FAULTS: usize = 8;

/// The largest corpus file read, in bytes (16 MiB): an entry takes a few
/// hundred bytes, and a corpus holds one per milestone combination.
pub const MAX_CORPUS_BYTES: u64 = 16 << 20;

/// One corpus entry: a schedule (the random faults only, not the
/// scenario's own) and the milestones it reached when seed `seed` ran it.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    /// The seed whose run first reached this combination.
    pub seed: u64,
    /// The milestones reached, in [`milestones::NAMES`] order.
    pub milestones: Vec<String>,
    /// The schedule.
    pub faults: Vec<FaultSpec>,
}

/// The corpus a guided sweep draws from: the entries of its file as loaded.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Corpus {
    /// The file it was read from (empty for a corpus never read).
    pub file: String,
    /// Its entries, in file order.
    pub entries: Vec<Entry>,
}

// Faults hold clock rates (f64), never NaN: equality is total.
impl Eq for Corpus {}

impl Corpus {
    /// Reads the corpus file `path` for `scenario`; a file that does not
    /// exist is an empty corpus. With `entries`, only its first `entries`
    /// (a file with fewer is an error): the corpus a sweep loaded before
    /// it appended to the file.
    pub fn load(
        path: &Path,
        scenario: &Scenario,
        entries: Option<usize>,
    ) -> Result<Corpus, ScenarioError> {
        let file = path.display().to_string();
        // Read as a scenario file is: a regular file, never through a link,
        // of bounded size.
        let kind = crate::scenario::FileKind {
            noun: "corpus",
            max_bytes: MAX_CORPUS_BYTES,
        };
        let text = match crate::scenario::read_regular(path, &file, kind)? {
            Some(text) => text,
            None if entries.unwrap_or(0) == 0 => String::new(),
            None => {
                return Err(ScenarioError::new(
                    &file,
                    0,
                    0,
                    "cannot read corpus file: No such file or directory (os error 2)".to_owned(),
                ))
            }
        };
        let mut corpus = Corpus::read(&file, &text, scenario)?;
        if let Some(n) = entries {
            if n > corpus.entries.len() {
                return Err(ScenarioError::new(
                    &file,
                    0,
                    0,
                    format!(
                        "--corpus-entries {n}, but the corpus file has only {} entries",
                        corpus.entries.len()
                    ),
                ));
            }
            corpus.entries.truncate(n);
        }
        Ok(corpus)
    }

    /// Reads corpus `text` (named `file` in errors) for `scenario`.
    pub fn read(file: &str, text: &str, scenario: &Scenario) -> Result<Corpus, ScenarioError> {
        let raw =
            crate::scenario::corpus::read(file, text, &scenario.node_names(), &milestones::NAMES)?;
        let entries = raw
            .into_iter()
            .map(|(seed, milestones, mut faults)| {
                // Lines of the corpus file, not of the scenario: a schedule
                // is the same whether read from a file or kept in memory.
                for f in &mut faults {
                    f.line = 0;
                }
                Entry {
                    seed,
                    milestones,
                    faults,
                }
            })
            .collect();
        Ok(Corpus {
            file: file.to_owned(),
            entries,
        })
    }

    /// How many entries it has.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether it has no entry.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The corpus as its file holds it: `[[entries]]` tables whose faults
    /// are rendered as a scenario's `[[faults]]` are (one inline table each).
    pub fn to_text(&self, scenario: &Scenario) -> String {
        format!(
            "# fencesim corpus for {}: fault schedules that reached a new milestone\n\
             # combination (`explore --guided`), in the order they were found.\n{}",
            scenario.file,
            self.entries_text()
        )
    }

    /// A 64-bit FNV-1a of its entries as its file writes them, 16 hex
    /// digits: a resumed sweep checks that it draws from the entries the
    /// stopped one loaded.
    pub fn fingerprint(&self) -> String {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in self.entries_text().bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        format!("{h:016x}")
    }

    fn entries_text(&self) -> String {
        let mut out = String::new();
        for e in &self.entries {
            out.push_str("\n[[entries]]\n");
            out.push_str(&format!("seed = {}\n", e.seed));
            let names: Vec<String> = e.milestones.iter().map(|m| format!("\"{m}\"")).collect();
            out.push_str(&format!("milestones = [{}]\n", names.join(", ")));
            if e.faults.is_empty() {
                out.push_str("faults = []\n");
            } else {
                out.push_str("faults = [\n");
                for f in &e.faults {
                    out.push_str(&format!("  {},\n", super::describe(f)));
                }
                out.push_str("]\n");
            }
        }
        out
    }
}

/// The milestones reached (count > 0), in [`milestones::NAMES`] order.
pub fn combination(m: &Milestones) -> Vec<String> {
    m.pairs()
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(name, _)| (*name).to_owned())
        .collect()
}

/// The random faults of `seed` for `scenario`, guided by `corpus`: a fresh
/// [`random::schedule`], or a mutation of one of the corpus's entries.
pub fn schedule(scenario: &Scenario, seed: u64, corpus: &Corpus) -> Vec<FaultSpec> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ GUIDED_SALT);
    if corpus.is_empty() || rng.chance(0.5) {
        return random::schedule(scenario, seed);
    }
    let entry = &corpus.entries[rng.index(corpus.len())];
    let mut faults = entry.faults.clone();
    let spec = random::swarm(&mut rng, scenario, &scenario.explore_spec());
    let targets = Targets::new(scenario, &spec);
    for _ in 0..rng.u32_in(1, 3) {
        mutate(&mut rng, scenario, &spec, &targets, &mut faults);
    }
    faults
}

/// One mutation of `faults`: add a fresh fault, remove one, shift one's
/// trigger, or lengthen one. An empty schedule can only grow.
fn mutate(
    d: &mut dyn Draw,
    s: &Scenario,
    spec: &ExploreSpec,
    targets: &Targets,
    faults: &mut Vec<FaultSpec>,
) {
    let op = if faults.is_empty() { 0 } else { d.u32_in(0, 3) };
    match op {
        0 if faults.len() < MAX_MUTATED_FAULTS => {
            faults.push(random::fault(d, s, spec, targets));
        }
        0 | 1 => {
            faults.remove(d.index(faults.len()));
        }
        2 => {
            let i = d.index(faults.len());
            shift(d, &mut faults[i].trigger);
        }
        _ => {
            let i = d.index(faults.len());
            lengthen(d, &mut faults[i].fault);
        }
    }
}

/// Moves a trigger: an `at` time by up to 2 s either way; an `after`
/// trigger to the previous or next occurrence of its event, or its delay
/// by up to 1 s either way.
fn shift(d: &mut dyn Draw, trigger: &mut Trigger) {
    let ms = |d: &mut dyn Draw, t: Duration, by: u64| {
        let t = t.as_millis() as u64;
        let moved = if d.chance(0.5) {
            t + d.u64_in(1, by)
        } else {
            t.saturating_sub(d.u64_in(1, by))
        };
        Duration::from_millis(moved)
    };
    match trigger {
        Trigger::At(t) => *t = ms(d, *t, 2000),
        Trigger::After { nth, delay, .. } => {
            if d.chance(0.5) {
                *nth = if d.chance(0.5) || *nth <= 1 {
                    (*nth + 1).min(8)
                } else {
                    *nth - 1
                };
            } else {
                *delay = ms(d, *delay, 1000);
            }
        }
    }
}

/// Makes a fault last longer or hit harder: half again to twice as long
/// (a pause, a delay, a partition, a restart delay, a window, a clock jump
/// or offset), or one more message (a counted link fault), as its kind
/// says ([`FaultKind::lengthen`](crate::scenario::fault_kind::FaultKind::lengthen)).
fn lengthen(d: &mut dyn Draw, fault: &mut Fault) {
    let factor = d.u64_in(150, 200);
    crate::scenario::fault_kind::of(fault).lengthen(fault, factor);
}

/// The corpus a guided sweep writes: the entries it loaded, then one per
/// seed (in seed order) whose milestone combination no earlier entry or
/// seed had reached.
///
/// It keeps, for each new combination, the lowest seed that reached it:
/// the entry an uninterrupted pass in seed order appends. So a stopped
/// sweep's [`Growth::found`], recorded in its checkpoints, and the seeds its
/// resumption runs give the same corpus as one sweep over all of them, in
/// whatever order the two cover the range.
#[derive(Clone, Debug)]
pub struct Growth {
    /// The combinations of the entries loaded.
    loaded_seen: BTreeSet<Vec<String>>,
    /// Each new combination and the lowest seed found reaching it.
    found: BTreeMap<Vec<String>, u64>,
    /// The corpus as loaded.
    loaded: Corpus,
}

impl Growth {
    /// Starts from `corpus` as loaded.
    pub fn new(corpus: &Corpus) -> Growth {
        Growth {
            loaded_seen: corpus
                .entries
                .iter()
                .map(|e| e.milestones.clone())
                .collect(),
            found: BTreeMap::new(),
            loaded: corpus.clone(),
        }
    }

    /// Starts from `corpus` as loaded and the new combinations an earlier
    /// part of the same sweep found, as [`Growth::found`] listed them.
    pub fn resume(corpus: &Corpus, found: &[(u64, Vec<String>)]) -> Growth {
        let mut growth = Growth::new(corpus);
        for (seed, combination) in found {
            growth.take(*seed, combination.clone());
        }
        growth
    }

    /// Takes `report`: when its seed reached a non-empty milestone
    /// combination no loaded entry has, and no lower seed seen so far
    /// reached, it becomes that combination's entry. Returns whether it did.
    pub fn observe(&mut self, report: &SeedReport) -> bool {
        self.take(report.seed, combination(&report.milestones))
    }

    fn take(&mut self, seed: u64, combination: Vec<String>) -> bool {
        if combination.is_empty() || self.loaded_seen.contains(&combination) {
            return false;
        }
        match self.found.get(&combination) {
            Some(&lower) if lower <= seed => false,
            _ => {
                self.found.insert(combination, seed);
                true
            }
        }
    }

    /// The new combinations and their seeds, in seed order.
    pub fn found(&self) -> Vec<(u64, Vec<String>)> {
        let mut out: Vec<(u64, Vec<String>)> =
            self.found.iter().map(|(c, s)| (*s, c.clone())).collect();
        out.sort();
        out
    }

    /// How many entries were added.
    pub fn added(&self) -> usize {
        self.found.len()
    }

    /// How many entries were loaded.
    pub fn loaded(&self) -> usize {
        self.loaded.len()
    }

    /// The grown corpus: the loaded entries, then the new ones in seed
    /// order, each schedule recomputed from its seed and the corpus as
    /// loaded.
    pub fn corpus(&self, scenario: &Scenario) -> Corpus {
        let mut corpus = self.loaded.clone();
        for (seed, milestones) in self.found() {
            let faults = schedule(scenario, seed, &self.loaded);
            corpus.entries.push(Entry {
                seed,
                milestones,
                faults,
            });
        }
        corpus
    }
}

/// A guided sweep of `options.seeds` drawing from `corpus` (as loaded):
/// its summary and the grown corpus (what `explore --guided` writes).
///
/// ```no_run
/// use fencesim::design::catalog::Registry;
/// use fencesim::explore::guided::{self, Corpus};
/// use fencesim::explore::sweep::SweepOptions;
/// let s = fencesim::scenario::load_file(&Registry::builtin(), "scenarios/figure-9-6-unfenced.toml".as_ref()).unwrap();
/// let (_, first) = guided::sweep(&s, &Corpus::default(), &SweepOptions { seeds: 0..200, ..SweepOptions::default() });
/// let (_, next) = guided::sweep(&s, &first, &SweepOptions { seeds: 200..400, ..SweepOptions::default() });
/// assert!(next.len() >= first.len());
/// ```
pub fn sweep(
    scenario: &Scenario,
    corpus: &Corpus,
    options: &super::sweep::SweepOptions,
) -> (super::sweep::SweepSummary, Corpus) {
    use super::sweep::{FaultMode, Runs, SweepEvent, SweepOptions};
    let options = SweepOptions {
        faults: FaultMode::Guided(std::sync::Arc::new(corpus.clone())),
        ..options.clone()
    };
    let mut growth = Growth::new(corpus);
    let summary = super::sweep::sweep_streaming(
        scenario,
        &options,
        &Runs::default(),
        &[],
        &|| false,
        &mut |event| {
            if let SweepEvent::Seed(report) = event {
                growth.observe(report);
            }
        },
    );
    (summary, growth.corpus(scenario))
}
