//! SIGINT and SIGTERM during a sweep: the first stops it cleanly, a second
//! ends the process.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

/// The signal that stopped a sweep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Signal {
    Interrupt,
    Terminate,
}

impl Signal {
    pub(super) fn name(self) -> &'static str {
        match self {
            Signal::Interrupt => "SIGINT",
            Signal::Terminate => "SIGTERM",
        }
    }
}

/// SIGINT and SIGTERM, caught for the length of a sweep: the first asks it
/// to stop; a second one exits at once (130 or 143), for a sweep whose
/// running seeds take too long to finish.
pub(super) struct Stop {
    requested: Arc<AtomicBool>,
    signal: Arc<AtomicUsize>,
}

impl Stop {
    pub(super) fn install() -> Stop {
        use signal_hook::consts::{SIGINT, SIGTERM};
        let requested = Arc::new(AtomicBool::new(false));
        let signal = Arc::new(AtomicUsize::new(0));
        for sig in [SIGINT, SIGTERM] {
            // Order matters: the shutdown checks the flag before the first
            // signal sets it.
            let registered =
                signal_hook::flag::register_conditional_shutdown(sig, 128 + sig, requested.clone())
                    .and_then(|_| {
                        signal_hook::flag::register_usize(sig, signal.clone(), sig as usize)
                    })
                    .and_then(|_| signal_hook::flag::register(sig, requested.clone()));
            if let Err(e) = registered {
                // Without the handlers a signal ends the sweep as before.
                eprintln!("warning: cannot catch signal {sig}: {e}");
            }
        }
        Stop { requested, signal }
    }

    pub(super) fn requested(&self) -> bool {
        self.requested.load(Ordering::SeqCst)
    }

    pub(super) fn signal(&self) -> Option<Signal> {
        use signal_hook::consts::{SIGINT, SIGTERM};
        match self.signal.load(Ordering::SeqCst) as i32 {
            s if s == SIGINT => Some(Signal::Interrupt),
            s if s == SIGTERM => Some(Signal::Terminate),
            _ => None,
        }
    }
}
