//! The deterministic cost per seed of the sweeps `benches/cost.toml`
//! names: what a seed allocates (calls and bytes), counted by the bench's
//! allocator (`counting.rs`). Each sweep runs as `fencesim explore --jobs 1`
//! runs it (the full journal, oracle and milestones of every seed, the
//! command line's 60 s budget per run), and the figure per seed is that of
//! seeds 0..900 less that of seeds 0..300, over 600: the sweep's own
//! set-up cancels out. `.ci/cost.sh` compares the figures with the file's.

use std::time::Duration;

use fencesim::design::catalog::Registry;
use fencesim::explore::shard::Shard;
use fencesim::explore::sweep::{sweep_streaming, FaultMode, Runs, SweepOptions};
use fencesim::scenario;

use super::counting::Allocated;

/// The seeds of the short and of the long sweep.
const SHORT: u64 = 300;
const LONG: u64 = 900;

/// One sweep of `benches/cost.toml`.
pub struct Case {
    pub name: String,
    /// The scenario file, from the repository's root.
    pub file: String,
    /// `scenario` or `random`.
    pub faults: String,
    /// Instructions per seed as recorded (callgrind's, by `.ci/cost.sh`).
    pub instructions: Option<u64>,
}

/// What a seed costs.
pub struct Figures {
    pub allocations: u64,
    pub bytes: u64,
}

/// The sweeps `benches/cost.toml` names, in its order.
pub fn cases() -> Vec<Case> {
    let path = format!("{}/benches/cost.toml", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).expect("benches/cost.toml reads");
    let table: toml::Table = text.parse().expect("benches/cost.toml is TOML");
    let sweeps = table["sweep"].as_array().expect("[[sweep]] tables");
    sweeps
        .iter()
        .map(|s| {
            let text = |key: &str| {
                s.get(key)
                    .and_then(toml::Value::as_str)
                    .unwrap_or_else(|| panic!("a [[sweep]] of benches/cost.toml has no {key}"))
                    .to_owned()
            };
            Case {
                name: text("name"),
                file: text("file"),
                faults: text("faults"),
                instructions: s
                    .get("instructions")
                    .and_then(toml::Value::as_integer)
                    .map(|i| i as u64),
            }
        })
        .collect()
}

/// Allocations of seeds `0..seeds` of `s`, with `faults`.
fn allocated(s: &scenario::Scenario, faults: &FaultMode, seeds: u64) -> Allocated {
    let options = SweepOptions {
        seeds: 0..seeds,
        jobs: 1,
        shard: Shard::WHOLE,
        faults: faults.clone(),
    };
    let runs = Runs::within(Some(Duration::from_secs(60)));
    let before = Allocated::now();
    let summary = sweep_streaming(s, &options, &runs, &[], &|| false, &mut |_| {});
    let allocated = Allocated::since(before);
    assert_eq!(summary.seeds, seeds, "every seed ran");
    allocated
}

/// The cost per seed of `case`.
pub fn measure(case: &Case) -> Figures {
    let path = format!("{}/{}", env!("CARGO_MANIFEST_DIR"), case.file);
    let s = scenario::load_file(&Registry::builtin(), path.as_ref())
        .unwrap_or_else(|e| panic!("{}: {e}", case.file));
    let faults = match case.faults.as_str() {
        "scenario" => FaultMode::Scenario,
        "random" => FaultMode::Random,
        other => panic!("{}: faults = {other:?}: scenario or random", case.name),
    };
    // A first sweep makes whatever is made once per process.
    allocated(&s, &faults, 10);
    let short = allocated(&s, &faults, SHORT);
    let long = allocated(&s, &faults, LONG);
    let per_seed = |a: u64, b: u64| (b - a) / (LONG - SHORT);
    Figures {
        allocations: per_seed(short.allocations, long.allocations),
        bytes: per_seed(short.bytes, long.bytes),
    }
}

/// Every case of `benches/cost.toml`, measured.
pub fn measure_all() -> Vec<(Case, Figures)> {
    cases()
        .into_iter()
        .map(|case| {
            let figures = measure(&case);
            (case, figures)
        })
        .collect()
}
