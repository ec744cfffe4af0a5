//! A process's handle is a [`fencesim_env::Env`]: code written against the
//! seam runs on the node's clock, timers, tasks and seeded randomness.

use std::future::Future;
use std::time::Duration;

use fencesim_env::Probe;
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
        Handle::timeout(self, duration, future)
    }

    fn spawn<F: Future<Output = ()> + 'static>(&self, future: F) {
        // Detached: the task runs until it ends or the node crashes.
        drop(Handle::spawn(self, future));
    }

    fn random_u64(&self) -> u64 {
        self.rng().next_u64()
    }

    /// Journals the probe as the node's event, with the fields fencesim's
    /// own clients give it.
    fn probe(&self, probe: Probe) {
        let ms = |d: Duration| d.as_millis() as u64;
        let kind = probe.kind();
        match probe {
            Probe::Acquired { lease, token, ttl } => {
                crate::emit!(kind, lease = lease, token = token, ttl_ms = ms(ttl))
            }
            Probe::Denied | Probe::Lost => crate::emit!(kind),
            Probe::Checked { lease, remaining } => {
                crate::emit!(kind, lease = lease, remaining_ms = ms(remaining))
            }
            Probe::Lapsed { lease, overdue } => {
                crate::emit!(kind, lease = lease, overdue_ms = ms(overdue))
            }
            Probe::Renewed {
                lease,
                ttl,
                asked_ago,
            } => crate::emit!(
                kind,
                lease = lease,
                ttl_ms = ms(ttl),
                asked_ago_ns = asked_ago.as_nanos() as u64
            ),
            Probe::Read { value, version } => crate::emit!(kind, value = value, version = version),
            Probe::Wrote {
                write,
                token,
                value,
                op,
            } => crate::emit!(
                kind,
                write = write.as_str(),
                token = token,
                value = value,
                op = op.as_str()
            ),
            Probe::Fenced { write, token } => {
                crate::emit!(kind, write = write.as_str(), token = token)
            }
            Probe::Acked { write, ok, op } => {
                crate::emit!(kind, write = write.as_str(), ok = ok, op = op.as_str())
            }
            Probe::Released { lease } => crate::emit!(kind, lease = lease),
        }
    }
}
