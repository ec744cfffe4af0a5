//! Seeds per second of figure 9-6 on one core, with the full journal and the
//! oracle: `cargo bench --bench throughput [-- SEEDS]`.

// Every seed runs on a fresh thread: mimalloc sets threads up far cheaper
// than glibc's malloc, which otherwise dominates a sweep.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::time::Instant;

use fencesim::design::catalog::Registry;
use fencesim::{runner, scenario};

fn main() {
    let seeds: u64 = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(2_000);
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios/figure-9-6.toml");
    let s = scenario::load_file(&Registry::builtin(), path.as_ref()).expect("figure 9-6 loads");
    let started = Instant::now();
    let mut events = 0;
    for seed in 0..seeds {
        let run = runner::run(&s, seed);
        assert!(run.expectations_met, "seed {seed} failed figure 9-6");
        events += run.result.journal.len();
    }
    let secs = started.elapsed().as_secs_f64();
    println!(
        "figure-9-6: {seeds} seeds in {secs:.2} s = {:.0} seeds/s on one core ({} events per run)",
        seeds as f64 / secs,
        events / seeds as usize
    );
}
