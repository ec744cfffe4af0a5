//! A process's handle is a [`fencesim_env::Env`]: code written against the
//! seam runs on the node's clock, timers, tasks and seeded randomness.

use std::future::Future;
use std::time::Duration;

use rand::RngCore;

use crate::actor::Message;

use super::Handle;

impl<M: Message> fencesim_env::Env for Handle<M> {
    fn now(&self) -> Duration {
        Handle::now(self)
    }

    fn wall_ns(&self) -> i64 {
        Handle::wall_ns(self)
    }

    fn sleep(&self, duration: Duration) -> impl Future<Output = ()> {
        Handle::sleep(self, duration)
    }

    fn timeout<F: Future>(
        &self,
        duration: Duration,
        future: F,
    ) -> impl Future<Output = Result<F::Output, fencesim_env::Elapsed>> {
        let timeout = Handle::timeout(self, duration, future);
        async move { timeout.await.map_err(|_| fencesim_env::Elapsed) }
    }

    fn spawn<F: Future<Output = ()> + 'static>(&self, future: F) {
        // Detached: the task runs until it ends or the node crashes.
        drop(Handle::spawn(self, future));
    }

    fn random_u64(&self) -> u64 {
        self.rng().next_u64()
    }
}
