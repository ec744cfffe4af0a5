//! Throughput of figure 9-6, in one run, side by side:
//! `cargo bench --bench throughput [-- SEEDS [ROUNDS]]` (default 10 000
//! seeds a row, 3 rounds).
//!
//! - bare madsim (`common/bare.rs`: the story written directly on madsim, no
//!   journal, no oracle) with madsim's own runner, `runtime::Builder::run`:
//!   a fresh thread and runtime per seed;
//! - the same bare story in a loop on one thread, a fresh runtime per seed;
//! - fencesim's sweep of `scenarios/figure-9-6.toml` with `--faults
//!   scenario`, as `fencesim explore --jobs 1` and `--jobs 2` run it (the
//!   full journal, the oracle and the expectations for every seed, each run
//!   watched against the command line's default 60 s budget).
//!
//! Each row prints seeds/s and its ratio to the first two rows; fencesim's
//! rows also print journal events per second and simulated seconds per
//! wall second. Every side uses the allocator of the `fencesim` binary.
//!
//! The four rows run one after the other, and the whole sequence runs
//! ROUNDS times; each row shows its median round, with the slowest and
//! fastest rounds beside it. Interleaving the rounds exposes every row to
//! the same drift of a shared machine (another process, the CPU's clock),
//! which a row timed all at once would take alone.

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[path = "common/bare.rs"]
mod bare;

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
    }
}

fn fencesim_sweep(s: &scenario::Scenario, seeds: u64, jobs: usize) -> Row {
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
    let summary = sweep_streaming(s, &options, &runs, &[], &|| false, &mut |e| {
        if let SweepEvent::Seed(r) = e {
            events += r.events;
        }
    });
    assert_eq!((summary.seeds, summary.violations), (seeds, 0));
    assert_eq!(summary.failing_seeds, 0, "figure 9-6 holds for every seed");
    let wall = summary.wall.as_secs_f64();
    Row {
        name: format!("fencesim explore --faults scenario --jobs {jobs}"),
        seeds_per_s: seeds as f64 / wall,
        events_per_s: Some(events as f64 / wall),
        sim_per_wall: summary.sim_time.as_secs_f64() / wall,
    }
}

/// The round of median speed of one row, with the slowest and fastest.
struct Median {
    row: Row,
    slowest: f64,
    fastest: f64,
}

fn median(mut rounds: Vec<Row>) -> Median {
    rounds.sort_by(|a, b| a.seeds_per_s.total_cmp(&b.seeds_per_s));
    let (slowest, fastest) = (rounds[0].seeds_per_s, rounds[rounds.len() - 1].seeds_per_s);
    let row = rounds.swap_remove(rounds.len() / 2);
    Median {
        row,
        slowest,
        fastest,
    }
}

fn main() {
    let mut numbers = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse::<u64>().ok());
    let seeds = numbers.next().unwrap_or(10_000);
    let rounds = numbers.next().unwrap_or(3).max(1);
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios/figure-9-6.toml");
    let s = scenario::load_file(&Registry::builtin(), path.as_ref()).expect("figure 9-6 loads");
    let mut by_row: [Vec<Row>; 4] = Default::default();
    for _ in 0..rounds {
        by_row[0].push(bare_own_runner(seeds));
        by_row[1].push(bare_loop(seeds));
        by_row[2].push(fencesim_sweep(&s, seeds, 1));
        by_row[3].push(fencesim_sweep(&s, seeds, 2));
    }
    let rows = by_row.map(median);
    let (runner, looped, jobs1) = (
        rows[0].row.seeds_per_s,
        rows[1].row.seeds_per_s,
        rows[2].row.seeds_per_s,
    );
    println!("figure 9-6, {seeds} seeds a row, median of {rounds} rounds");
    println!(
        "{:<50} {:>9} {:>15} {:>9} {:>9} {:>11} {:>12}",
        "", "seeds/s", "slowest–fastest", "÷runner", "÷loop", "events/s", "sim s/wall s"
    );
    for Median {
        row,
        slowest,
        fastest,
    } in &rows
    {
        println!(
            "{:<50} {:>9.0} {:>15} {:>8.2}× {:>8.2}× {:>11} {:>12.0}",
            row.name,
            row.seeds_per_s,
            format!("{slowest:.0}–{fastest:.0}"),
            row.seeds_per_s / runner,
            row.seeds_per_s / looped,
            row.events_per_s
                .map_or("—".to_owned(), |e| format!("{e:.0}")),
            row.sim_per_wall
        );
    }
    println!(
        "--jobs 2 ÷ --jobs 1: {:.2}×",
        rows[3].row.seeds_per_s / jobs1
    );
}
