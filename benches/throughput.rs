//! Throughput of figure 9-6, in one run, side by side:
//! `cargo bench --bench throughput [-- SEEDS [ROUNDS]]` (default 10 000
//! seeds a row, 5 rounds).
//!
//! - bare madsim (`common/bare.rs`: the story written directly on madsim, no
//!   journal, no oracle) with madsim's own runner, `runtime::Builder::run`:
//!   a fresh thread and runtime per seed;
//! - the same bare story in a loop on one thread, a fresh runtime per seed;
//! - fencesim's sweep of `scenarios/figure-9-6.toml` with `--faults
//!   scenario`, as `fencesim explore --jobs 1` and `--jobs 2` run it (the
//!   full journal, the oracle and the expectations for every seed, each run
//!   watched against the command line's default 60 s budget);
//! - the same sweep of `scenarios/figure-9-6-async.toml`, whose clients are
//!   async processes (the same journal), with `--jobs 1`.
//!
//! Each row prints seeds/s and its ratio to the first two rows; fencesim's
//! rows also print journal events per second and simulated seconds per
//! wall second. Every side uses the allocator of the `fencesim` binary.
//!
//! fencesim's rows also print the allocations per seed that the bench's
//! allocator counted (`common/counting.rs`: mimalloc, counting), and the
//! table ends with the deterministic cost per seed of the sweeps that
//! `benches/cost.toml` records (allocations and bytes, the same on any
//! machine: see `common/cost.rs`). `cargo bench --bench throughput --
//! --cost` prints those figures alone, as `.ci/cost.sh` reads them.
//!
//! The five rows run one after the other, and the whole sequence runs
//! ROUNDS times. Each row shows its median seeds/s over the rounds, with
//! the slowest and fastest rounds beside it; each ratio is the median of
//! the ratios within a round. The rows of one round run within seconds of
//! each other, so they share the state of the machine (another process,
//! the virtual CPU's speed, which on the development machine swings by
//! half from one minute to the next); rows timed all at once, or ratios of
//! medians from different minutes, would each take a different state.

#[global_allocator]
static GLOBAL: counting::Counting = counting::Counting;

#[path = "common/bare.rs"]
mod bare;
#[path = "common/cost.rs"]
mod cost;
#[path = "common/counting.rs"]
mod counting;

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use fencesim::design::catalog::Registry;
use fencesim::explore::shard::Shard;
use fencesim::explore::sweep::{sweep_streaming, FaultMode, Runs, SweepEvent, SweepOptions};
use fencesim::scenario;

/// One row of the table.
struct Row {
    name: String,
    seeds_per_s: f64,
    /// Journal events per second (fencesim only: the bare story keeps none).
    events_per_s: Option<f64>,
    /// Simulated seconds per wall second.
    sim_per_wall: f64,
    /// Allocations per seed (fencesim only), the sweep's own set-up
    /// included.
    allocations_per_seed: Option<f64>,
}

fn bare_own_runner(seeds: u64) -> Row {
    bare::SIM_NS.store(0, Ordering::Relaxed);
    let builder = madsim::runtime::Builder {
        seed: 0,
        count: seeds,
        jobs: 1,
        config: madsim::Config::default(),
        time_limit: None,
        check: false,
        allow_system_thread: false,
    };
    let started = Instant::now();
    builder.run(bare::story);
    bare_row(
        "bare madsim, madsim's runner (thread per seed)",
        seeds,
        started,
    )
}

fn bare_loop(seeds: u64) -> Row {
    bare::SIM_NS.store(0, Ordering::Relaxed);
    let started = Instant::now();
    for seed in 0..seeds {
        let rt = madsim::runtime::Runtime::with_seed_and_config(seed, madsim::Config::default());
        rt.block_on(bare::story());
    }
    bare_row("bare madsim, a loop on one thread", seeds, started)
}

fn bare_row(name: &str, seeds: u64, started: Instant) -> Row {
    let wall = started.elapsed().as_secs_f64();
    Row {
        name: name.to_owned(),
        seeds_per_s: seeds as f64 / wall,
        events_per_s: None,
        sim_per_wall: bare::SIM_NS.load(Ordering::Relaxed) as f64 / 1e9 / wall,
        allocations_per_seed: None,
    }
}

fn fencesim_sweep(s: &scenario::Scenario, seeds: u64, jobs: usize, what: &str) -> Row {
    let options = SweepOptions {
        seeds: 0..seeds,
        jobs,
        shard: Shard::WHOLE,
        faults: FaultMode::Scenario,
    };
    let runs = Runs {
        budget: Some(Duration::from_secs(60)),
        ..Runs::default()
    };
    let mut events = 0u64;
    let before = counting::Allocated::now();
    let summary = sweep_streaming(s, &options, &runs, &[], &|| false, &mut |e| {
        if let SweepEvent::Seed(r) = e {
            events += r.events;
        }
    });
    let allocated = counting::Allocated::since(before);
    assert_eq!((summary.seeds, summary.violations), (seeds, 0));
    assert_eq!(summary.failing_seeds, 0, "figure 9-6 holds for every seed");
    let wall = summary.wall.as_secs_f64();
    Row {
        name: format!("{what}fencesim explore --faults scenario --jobs {jobs}"),
        seeds_per_s: seeds as f64 / wall,
        events_per_s: Some(events as f64 / wall),
        sim_per_wall: summary.sim_time.as_secs_f64() / wall,
        allocations_per_seed: Some(allocated.allocations as f64 / seeds as f64),
    }
}

/// The median of `values` (the upper one of an even count).
fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() {
    if std::env::args().any(|a| a == "--cost") {
        // The deterministic figures alone, in the form .ci/cost.sh reads.
        for (case, figures) in cost::measure_all() {
            println!(
                "{} allocations={} bytes={}",
                case.name, figures.allocations, figures.bytes
            );
        }
        return;
    }
    let mut numbers = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse::<u64>().ok());
    let seeds = numbers.next().unwrap_or(10_000);
    let rounds = numbers.next().unwrap_or(5).max(1) as usize;
    let load = |file: &str| {
        let path = format!("{}/scenarios/{file}", env!("CARGO_MANIFEST_DIR"));
        scenario::load_file(&Registry::builtin(), path.as_ref()).expect("figure 9-6 loads")
    };
    let s = load("figure-9-6.toml");
    let processes = load("figure-9-6-async.toml");
    let by_round: Vec<[Row; ROWS]> = (0..rounds)
        .map(|_| {
            [
                bare_own_runner(seeds),
                bare_loop(seeds),
                fencesim_sweep(&s, seeds, 1, ""),
                fencesim_sweep(&s, seeds, 2, ""),
                fencesim_sweep(&processes, seeds, 1, "async clients: "),
            ]
        })
        .collect();
    // Of row `r`: the median over rounds of `f(round)`.
    let over_rounds = |f: &dyn Fn(&[Row; ROWS]) -> f64| median(by_round.iter().map(f).collect());
    println!("figure 9-6, {seeds} seeds a row, {rounds} rounds: medians over the rounds");
    println!(
        "{:<66} {:>9} {:>15} {:>9} {:>9} {:>11} {:>12} {:>12}",
        "",
        "seeds/s",
        "slowest–fastest",
        "÷runner",
        "÷loop",
        "events/s",
        "sim s/wall s",
        "allocs/seed"
    );
    for r in 0..ROWS {
        let speeds: Vec<f64> = by_round.iter().map(|round| round[r].seeds_per_s).collect();
        let (slowest, fastest) = (
            speeds.iter().copied().fold(f64::INFINITY, f64::min),
            speeds.iter().copied().fold(0.0, f64::max),
        );
        let events = by_round[0][r]
            .events_per_s
            .map(|_| over_rounds(&|round| round[r].events_per_s.unwrap_or(0.0)));
        println!(
            "{:<66} {:>9.0} {:>15} {:>8.2}× {:>8.2}× {:>11} {:>12.0} {:>12}",
            by_round[0][r].name,
            median(speeds),
            format!("{slowest:.0}–{fastest:.0}"),
            over_rounds(&|round| round[r].seeds_per_s / round[0].seeds_per_s),
            over_rounds(&|round| round[r].seeds_per_s / round[1].seeds_per_s),
            events.map_or("—".to_owned(), |e| format!("{e:.0}")),
            over_rounds(&|round| round[r].sim_per_wall),
            by_round[0][r]
                .allocations_per_seed
                .map_or("—".to_owned(), |a| format!("{a:.0}")),
        );
    }
    println!(
        "--jobs 2 ÷ --jobs 1: {:.2}×",
        over_rounds(&|round| round[3].seeds_per_s / round[2].seeds_per_s)
    );
    println!(
        "async clients ÷ the bundled client (--jobs 1): {:.2}×",
        over_rounds(&|round| round[4].seeds_per_s / round[2].seeds_per_s)
    );
    println!();
    println!("deterministic cost per seed (benches/cost.toml; .ci/cost.sh checks it):");
    println!(
        "{:<40} {:>9} {:>12} {:>12} {:>14}",
        "", "faults", "allocations", "bytes", "instructions"
    );
    for (case, figures) in cost::measure_all() {
        println!(
            "{:<40} {:>9} {:>12} {:>12} {:>14}",
            case.name,
            case.faults,
            figures.allocations,
            figures.bytes,
            case.instructions
                .map_or("—".to_owned(), |i| format!("{i} (recorded)")),
        );
    }
}

/// The rows of a round: madsim's runner, madsim in a loop, fencesim with
/// one and two jobs, and fencesim with figure 9-6's clients as async
/// processes (`scenarios/figure-9-6-async.toml`).
const ROWS: usize = 5;
