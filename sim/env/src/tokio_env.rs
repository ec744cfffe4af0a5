//! The environment of a program on a tokio runtime.

use std::collections::hash_map::RandomState;
use std::future::Future;
use std::hash::BuildHasher;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::{Elapsed, Env};

/// [`Env`] on tokio: its clock and timers, tasks spawned on the current
/// `LocalSet`, randomness from the operating system's seed of std's hasher.
#[derive(Clone, Debug)]
pub struct TokioEnv {
    start: tokio::time::Instant,
    random: RandomState,
}

impl TokioEnv {
    /// An environment whose monotonic clock starts now. Spawning needs a
    /// `tokio::task::LocalSet` around the caller.
    pub fn new() -> Self {
        TokioEnv {
            start: tokio::time::Instant::now(),
            random: RandomState::new(),
        }
    }
}

impl Default for TokioEnv {
    fn default() -> Self {
        TokioEnv::new()
    }
}

impl Env for TokioEnv {
    fn now(&self) -> Duration {
        self.start.elapsed()
    }

    fn wall_ns(&self) -> i64 {
        match SystemTime::now().duration_since(UNIX_EPOCH) {
            Ok(d) => i64::try_from(d.as_nanos()).unwrap_or(i64::MAX),
            Err(e) => -i64::try_from(e.duration().as_nanos()).unwrap_or(i64::MAX),
        }
    }

    fn sleep(&self, duration: Duration) -> impl Future<Output = ()> {
        tokio::time::sleep(duration)
    }

    fn timeout<F: Future>(
        &self,
        duration: Duration,
        future: F,
    ) -> impl Future<Output = Result<F::Output, Elapsed>> {
        let timeout = tokio::time::timeout(duration, future);
        async move { timeout.await.map_err(|_| Elapsed) }
    }

    fn spawn<F: Future<Output = ()> + 'static>(&self, future: F) {
        tokio::task::spawn_local(future);
    }

    fn random_u64(&self) -> u64 {
        // Each call hashes a fresh counter value with the process's random
        // keys: enough for jitter, which is all a lock client draws.
        use std::sync::atomic::{AtomicU64, Ordering};
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        self.random
            .hash_one(COUNTER.fetch_add(1, Ordering::Relaxed))
    }
}
