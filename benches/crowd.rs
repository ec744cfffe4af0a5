//! Cost per event from 2 to 1 000 clients, on a design whose waiters queue
//! at the lock (`zookeeper`) and on one whose waiters poll it (`redis`):
//! `cargo bench --bench crowd [-- MIN_EVENTS]`.
//!
//! Each case is n clients starting together, each holding the lock 10 ms
//! once, on fenced storage, with the full journal and the oracle. A case
//! runs seeds 1, 2, … until it has simulated at least MIN_EVENTS events
//! (default 200 000), so small cases are timed over many runs. The
//! scenario files are written to `target/crowd/` for peak-memory
//! measurements (`/usr/bin/time -f %M fencesim run FILE --json`).

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Instant;

use fencesim::design::catalog::Registry;
use fencesim::oracle::Verdict;
use fencesim::{runner, scenario};

const CLIENTS: [usize; 4] = [2, 10, 100, 1000];

/// n clients on `design`, all starting at once, each working 10 ms once.
fn crowd(design: &str, n: usize) -> String {
    let mut text = format!(
        "name = \"crowd-{design}-{n}\"\n\
         description = \"{n} clients on {design}, each holding the lock 10 ms once.\"\n\
         duration = \"1h\"\nmax_events = 1000000\n\
         [lock]\ndesign = \"{design}\"\n[storage]\ndesign = \"fenced\"\n"
    );
    for i in 1..=n {
        writeln!(text, "[[clients]]\nname = \"client{i}\"\nwork = \"10ms\"").unwrap();
    }
    text
}

fn main() {
    let min_events: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(200_000);
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/crowd");
    std::fs::create_dir_all(&dir).expect("target/crowd can be created");
    println!(
        "{:<10} {:>7} {:>9} {:>11} {:>7} {:>12} {:>9} {:>10}",
        "design", "clients", "events", "per client", "runs", "ms per run", "ns/event", "vs 10"
    );
    for design in ["zookeeper", "redis"] {
        let mut ten = None;
        for n in CLIENTS {
            let text = crowd(design, n);
            let path = dir.join(format!("crowd-{design}-{n}.toml"));
            std::fs::write(&path, &text).expect("the scenario can be written");
            let s = scenario::load_str(&Registry::builtin(), &path.display().to_string(), &text)
                .expect("the crowd scenario loads");
            let (mut runs, mut events) = (0usize, 0usize);
            let mut first_events = 0;
            let started = Instant::now();
            while events < min_events || runs == 0 {
                let run = runner::run(&s, runs as u64 + 1);
                assert_eq!(run.report.verdict, Verdict::Safe, "{design} {n}");
                assert_eq!(run.report.accepted_writes, n as u64, "{design} {n}");
                assert_eq!(run.result.outcome, sim::Outcome::Completed, "{design} {n}");
                if runs == 0 {
                    first_events = run.result.journal.len();
                }
                events += run.result.journal.len();
                runs += 1;
            }
            let secs = started.elapsed().as_secs_f64();
            let ns_per_event = secs * 1e9 / events as f64;
            if n == 10 {
                ten = Some(ns_per_event);
            }
            let ratio = ten.map_or("".to_owned(), |t| format!("{:.2}×", ns_per_event / t));
            println!(
                "{design:<10} {n:>7} {first_events:>9} {:>11.1} {runs:>7} {:>12.2} {:>9.0} {ratio:>10}",
                first_events as f64 / n as f64,
                secs * 1e3 / runs as f64,
                ns_per_event,
            );
        }
    }
}
