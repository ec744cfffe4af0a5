//! Two small tools for code that keeps to the seam and so cannot name its
//! runtime's own (`tokio::select!`, `tokio::sync::Notify`): racing two
//! futures, and a signal one task raises and others wait for. Both are
//! single-threaded, as the environment is.

use std::cell::RefCell;
use std::future::{poll_fn, Future};
use std::pin::pin;
use std::rc::Rc;
use std::task::{Poll, Waker};

/// Which of two futures finished first, with its output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Either<A, B> {
    /// The first.
    Left(A),
    /// The second.
    Right(B),
}

/// Runs `a` and `b` together and finishes with the first to finish; the
/// other is dropped unfinished. When both are ready at once, `a` wins: the
/// order is fixed, so a simulated run does not depend on it.
pub async fn select<A: Future, B: Future>(a: A, b: B) -> Either<A::Output, B::Output> {
    let mut a = pin!(a);
    let mut b = pin!(b);
    poll_fn(|cx| {
        if let Poll::Ready(out) = a.as_mut().poll(cx) {
            return Poll::Ready(Either::Left(out));
        }
        if let Poll::Ready(out) = b.as_mut().poll(cx) {
            return Poll::Ready(Either::Right(out));
        }
        Poll::Pending
    })
    .await
}

#[derive(Default)]
struct SignalState {
    raised: bool,
    waiters: Vec<Waker>,
}

/// A one-shot signal: raised once, it stays raised, and every wait on it
/// ends (a session's `Done()`, a leader's "stop leading"). Clones share it.
#[derive(Clone, Default)]
pub struct Signal(Rc<RefCell<SignalState>>);

impl Signal {
    /// A signal not raised yet.
    pub fn new() -> Self {
        Signal::default()
    }

    /// Raises it, waking every waiter.
    pub fn raise(&self) {
        let waiters = {
            let mut s = self.0.borrow_mut();
            s.raised = true;
            std::mem::take(&mut s.waiters)
        };
        for w in waiters {
            w.wake();
        }
    }

    /// Whether it was raised.
    pub fn is_raised(&self) -> bool {
        self.0.borrow().raised
    }

    /// Waits until it is raised (at once if it was).
    pub async fn raised(&self) {
        poll_fn(|cx| {
            let mut s = self.0.borrow_mut();
            if s.raised {
                Poll::Ready(())
            } else {
                if !s.waiters.iter().any(|w| w.will_wake(cx.waker())) {
                    s.waiters.push(cx.waker().clone());
                }
                Poll::Pending
            }
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test(start_paused = true)]
    async fn select_ends_with_the_first_and_a_signal_wakes_its_waiters() {
        let slow = tokio::time::sleep(Duration::from_secs(5));
        let fast = async {
            tokio::time::sleep(Duration::from_secs(1)).await;
            7
        };
        assert_eq!(select(slow, fast).await, Either::Right(7));

        let signal = Signal::new();
        let local = tokio::task::LocalSet::new();
        let waiter = {
            let signal = signal.clone();
            local.spawn_local(async move {
                signal.raised().await;
                signal.is_raised()
            })
        };
        let raiser = {
            let signal = signal.clone();
            local.spawn_local(async move {
                tokio::time::sleep(Duration::from_secs(2)).await;
                signal.raise();
            })
        };
        local.await;
        raiser.await.unwrap();
        assert!(waiter.await.unwrap());
        // Raised stays raised: a later wait ends at once.
        assert_eq!(
            select(signal.raised(), std::future::pending::<()>()).await,
            Either::Left(())
        );
    }
}
