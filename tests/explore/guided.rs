//! Guided search: schedules from (scenario, seed, corpus file), a corpus
//! that grows only with new milestone combinations, and replays of guided
//! seeds alone.

use std::collections::BTreeSet;

use fencesim::explore::guided::{self, Corpus};
use fencesim::explore::random;
use fencesim::explore::sweep::{FaultMode, SweepOptions};
use serde_json::Value;

use crate::cli::UNFENCED;
use crate::{bundled, fencesim, TempDir};

fn options(seeds: std::ops::Range<u64>, jobs: usize) -> SweepOptions {
    SweepOptions {
        seeds,
        jobs,
        ..SweepOptions::default()
    }
}

/// `explore --guided --json` over `seeds`: its lines (the exit code is 1:
/// the unfenced scenario violates).
fn guided_lines(corpus: &str, out: Option<&str>, seeds: &str, jobs: &str) -> Vec<Value> {
    let mut args = vec![
        "explore", UNFENCED, "--guided", "--corpus", corpus, "--seeds", seeds, "--json", "--jobs",
        jobs,
    ];
    if let Some(out) = out {
        args.extend(["--corpus-out", out]);
    }
    let (code, stdout, err) = fencesim(&args).into_parts();
    assert_eq!(code, 1, "{stdout}{err}");
    stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .collect()
}

fn failing(lines: &[Value]) -> Vec<(u64, String)> {
    lines
        .iter()
        .filter(|l| l.get("seed").is_some())
        .map(|l| {
            (
                l["seed"].as_u64().unwrap(),
                l["trace_hash"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn a_guided_failing_seed_replays_alone_from_its_repro_command() {
    let tmp = TempDir::new("replay");
    let path = tmp.join("corpus.toml");
    let corpus = path.to_str().unwrap();
    // The first sweep starts from no corpus and writes one; the second
    // draws mutations from it, and appends to the same file.
    guided_lines(corpus, None, "0..60", "2");
    let loaded = Corpus::load(&path, &bundled("explore-lease-unfenced"), None).unwrap();
    assert!(!loaded.is_empty());
    let lines = guided_lines(corpus, None, "60..120", "2");
    let summary = lines.last().unwrap();
    assert_eq!(summary["corpus"]["loaded"], loaded.len());
    let s = bundled("explore-lease-unfenced");
    let mut mutated = 0;
    for line in lines.iter().filter(|l| l.get("seed").is_some()) {
        let seed = line["seed"].as_u64().unwrap();
        let repro = line["repro"].as_str().unwrap();
        assert_eq!(
            repro,
            format!(
                "fencesim run {UNFENCED} --seed {seed} --faults guided --corpus {corpus} \
                 --corpus-entries {}",
                loaded.len()
            )
        );
        if guided::schedule(&s, seed, &loaded) != random::schedule(&s, seed) {
            mutated += 1;
        }
        // The file has grown since; --corpus-entries names the entries the
        // sweep drew from.
        let mut args: Vec<&str> = repro.split(' ').skip(1).collect();
        args.push("--json");
        let (_, out, err) = fencesim(&args).into_parts();
        let replay: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {err}"));
        assert_eq!(replay["trace_hash"], line["trace_hash"], "seed {seed}");
        assert_eq!(replay["verdict"], "violation", "seed {seed}");
    }
    assert!(mutated > 0, "no failing seed ran a mutated schedule");
}

#[test]
fn guided_sweeps_find_the_same_seeds_and_write_the_same_corpus_with_one_job_or_two() {
    let tmp = TempDir::new("jobs");
    let path = tmp.join("corpus.toml");
    let corpus = path.to_str().unwrap();
    guided_lines(corpus, None, "0..50", "2");
    let dir = tmp.path();
    let (one, two) = (dir.join("one.toml"), dir.join("two.toml"));
    let a = guided_lines(corpus, Some(one.to_str().unwrap()), "50..130", "1");
    let b = guided_lines(corpus, Some(two.to_str().unwrap()), "50..130", "2");
    assert!(!failing(&a).is_empty());
    assert_eq!(failing(&a), failing(&b));
    let (one, two) = (
        std::fs::read_to_string(one).unwrap(),
        std::fs::read_to_string(two).unwrap(),
    );
    assert_eq!(one, two);
    // --corpus-out leaves the loaded corpus as it was, and keeps its entries first.
    let loaded = std::fs::read_to_string(&path).unwrap();
    let entries = |t: &str| t.split("\n[[entries]]").skip(1).count();
    assert!(one.contains(loaded.split_once("\n[[entries]]").unwrap().1));
    assert!(entries(&one) >= entries(&loaded));
}

#[test]
fn the_corpus_grows_only_with_new_milestone_combinations_and_deterministically() {
    let s = bundled("figure-9-6-unfenced");
    let (_, first) = guided::sweep(&s, &Corpus::default(), &options(0..150, 2));
    let (_, again) = guided::sweep(&s, &Corpus::default(), &options(0..150, 1));
    assert_eq!(first, again);
    let combos: BTreeSet<&Vec<String>> = first.entries.iter().map(|e| &e.milestones).collect();
    assert_eq!(combos.len(), first.len(), "a combination entered twice");
    assert!(first.entries.iter().all(|e| !e.milestones.is_empty()));
    assert!(first.entries.windows(2).all(|w| w[0].seed < w[1].seed));
    // Each entry is its seed's schedule, and its seed reached exactly its
    // combination; every seed's combination is an entry's, found no later.
    for seed in 0..150 {
        let mode = FaultMode::Guided(std::sync::Arc::new(Corpus::default()));
        let (run, _) = fencesim::explore::sweep::run_seed(&s, seed, mode);
        let combination = guided::combination(&run.milestones);
        if combination.is_empty() {
            continue;
        }
        let entry = first
            .entries
            .iter()
            .find(|e| e.milestones == combination)
            .unwrap_or_else(|| panic!("seed {seed}'s {combination:?} is not in the corpus"));
        assert!(entry.seed <= seed);
        if entry.seed == seed {
            assert_eq!(entry.faults, random::schedule(&s, seed));
        }
    }
    // A second sweep keeps every entry first, and adds only combinations
    // none of them has.
    let (_, next) = guided::sweep(&s, &first, &options(150..300, 2));
    assert_eq!(next.entries[..first.len()], first.entries[..]);
    let all: BTreeSet<&Vec<String>> = next.entries.iter().map(|e| &e.milestones).collect();
    assert_eq!(all.len(), next.len());
    // Written and read back, the corpus is the same.
    let text = next.to_text(&s);
    let read = Corpus::read("corpus.toml", &text, &s).unwrap();
    assert_eq!(read.entries, next.entries);
}

/// Distinct non-empty milestone combinations: an unguided sweep of 0..400
/// against guided sweeps of 0..200 then 200..400 (the second drawing from
/// the first's corpus). A guided sweep with an empty corpus runs the
/// ordinary random schedules, so its corpus counts the unguided sweep's.
#[test]
fn guided_search_reaches_at_least_as_many_milestone_combinations_as_random() {
    let s = bundled("figure-9-6-unfenced");
    let (_, unguided) = guided::sweep(&s, &Corpus::default(), &options(0..400, 2));
    let (_, half) = guided::sweep(&s, &Corpus::default(), &options(0..200, 2));
    let (_, guided) = guided::sweep(&s, &half, &options(200..400, 2));
    assert!(
        guided.len() >= unguided.len(),
        "guided {} < unguided {}",
        guided.len(),
        unguided.len()
    );
}

#[test]
fn a_bad_corpus_file_is_exit_2_with_its_line() {
    let tmp = TempDir::new("bad");
    let path = tmp.join("corpus.toml");
    std::fs::write(
        &path,
        "[[entries]]\nseed = 1\nfaults = [\n  { kind = \"pause\", node = \"client9\", duration = \"1s\", at = \"1s\" },\n]\n",
    )
    .unwrap();
    let corpus = path.to_str().unwrap();
    for args in [
        vec![
            "explore", UNFENCED, "--guided", "--corpus", corpus, "--seeds", "0..2",
        ],
        vec!["run", UNFENCED, "--faults", "guided", "--corpus", corpus],
    ] {
        let (code, out, err) = fencesim(&args).into_parts();
        assert_eq!(code, 2, "{out}{err}");
        assert!(err.contains(&format!("{corpus}:4:")), "{err}");
        assert!(err.contains("client9"), "{err}");
    }
    let (code, _, err) = fencesim(&["run", UNFENCED, "--faults", "guided"]).into_parts();
    assert_eq!(code, 2);
    assert!(err.contains("--corpus"), "{err}");
    let (code, _, err) = fencesim(&[
        "run",
        UNFENCED,
        "--faults",
        "guided",
        "--corpus",
        corpus,
        "--corpus-entries",
        "0",
    ])
    .into_parts();
    assert_eq!(
        code, 2,
        "the entries are read even when none is used: {err}"
    );
}
