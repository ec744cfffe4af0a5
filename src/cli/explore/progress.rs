//! The progress bar on stderr, when it is a terminal.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A progress bar on stderr, drawn only when stderr is a terminal, at most
/// ten times a second.
pub(super) struct Progress {
    enabled: bool,
    total: u64,
    started: Instant,
    last: Mutex<Instant>,
}

impl Progress {
    pub(super) fn new(total: u64) -> Progress {
        let now = Instant::now();
        Progress {
            enabled: std::io::stderr().is_terminal(),
            total,
            started: now,
            last: Mutex::new(now),
        }
    }

    pub(super) fn update(&self, done: u64, total: u64) {
        if !self.enabled {
            return;
        }
        let total = if total > 0 { total } else { self.total };
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        if last.elapsed() < Duration::from_millis(100) && done < total {
            return;
        }
        *last = Instant::now();
        let width = 30;
        let filled = (done * width / total.max(1)) as usize;
        let rate = done as f64 / self.started.elapsed().as_secs_f64().max(1e-9);
        eprint!(
            "\r[{}{}] {done}/{total} {rate:.0}/s ",
            "#".repeat(filled),
            ".".repeat(width as usize - filled)
        );
    }

    pub(super) fn finish(&self) {
        if self.enabled {
            eprint!("\r{}\r", " ".repeat(70));
        }
    }
}
