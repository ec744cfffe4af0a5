//! The leak counter: worlds alive in this process.

use super::World;

/// Worlds alive in this process (see [`live_worlds`]).
pub(super) static LIVE_WORLDS: std::sync::atomic::AtomicUsize =
    std::sync::atomic::AtomicUsize::new(0);

/// How many worlds are alive in this process: 0 once every run has
/// returned. A world that outlives its run (a task of the run kept alive by
/// a reference cycle) is a leak that grows with every seed of a sweep.
pub fn live_worlds() -> usize {
    LIVE_WORLDS.load(std::sync::atomic::Ordering::SeqCst)
}

impl<M> Drop for World<M> {
    fn drop(&mut self) {
        LIVE_WORLDS.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}
