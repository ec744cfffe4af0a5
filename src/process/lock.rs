//! A simulated client of a single-server lock design (`lease`, `redis`, and
//! any design whose server answers `Acquire` with `Granted` or `Denied`),
//! as a [`LockService`] a process awaits.

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context as TaskContext, Poll, Waker};
use std::time::Duration;

use fencesim_env::{Env, Lease, LockError, LockService, Probe};
use sim::process::Handle;
use sim::NodeId;

use crate::protocol::Msg;

/// The request counters survive a crash on the node's disk, as request ids
/// must stay unique in a run: a late answer to an earlier incarnation's
/// request must not be taken for this one's.
const REQUESTS: &str = "lock/requests";
const RENEWALS: &str = "lock/renewals";

/// What the lock answered the request waited for.
enum Answer {
    Granted(Lease),
    Denied,
    Renewed(Duration),
    Refused,
}

#[derive(Default)]
struct State {
    /// The acquire waited for.
    waiting: Option<u64>,
    /// The renewal waited for.
    renewing: Option<u64>,
    /// The lease held.
    lease: Option<u64>,
    /// The acquire's answer, and its waiter.
    acquired: Slot,
    /// The renewal's answer, and its waiter: apart from the acquire's, as a
    /// renewal task may still wait while the process acquires again.
    renewed: Slot,
}

/// One request's answer and who waits for it.
#[derive(Default)]
struct Slot {
    answer: Option<Answer>,
    waker: Option<Waker>,
}

impl Slot {
    fn fill(&mut self, answer: Answer) {
        self.answer = Some(answer);
        if let Some(w) = self.waker.take() {
            w.wake();
        }
    }
}

/// A client of the single lock server `lock`: it asks once per
/// [`LockService::acquire`] and waits at most `timeout` for the answer, and
/// journals what it comes to believe (`acquired`, `denied`, `released`,
/// `renewed`) as fencesim's bundled client does.
///
/// Like that client it is idempotent against a network that duplicates,
/// delays and reorders: it acts once on the answer it waits for, and hands
/// back at once (a `Release`) a grant it did not wait for — the answer to a
/// request it gave up on, or a second grant for a duplicated request —
/// whatever the process is doing when it arrives.
pub struct SimLock {
    handle: Handle<Msg>,
    lock: NodeId,
    timeout: Duration,
    state: Rc<RefCell<State>>,
}

impl SimLock {
    /// The bundled lock designs it speaks to: one server that answers an
    /// acquire with a grant (at once or once queued) or a denial, and a
    /// renewal with its answer. For [`Registry::process_speaks_to`].
    ///
    /// [`Registry::process_speaks_to`]: crate::design::catalog::Registry::process_speaks_to
    pub const DESIGNS: &'static [&'static str] = &["lease", "redis", "etcd"];

    /// A client of the lock server named `lock`, waiting at most `timeout`
    /// for each answer. It starts a task of the process that takes every
    /// message the lock sends.
    ///
    /// # Panics
    /// If there is no node called `lock`.
    pub fn new(handle: &Handle<Msg>, lock: &str, timeout: Duration) -> SimLock {
        let node = handle
            .node(lock)
            .unwrap_or_else(|| panic!("no lock node called {lock:?}"));
        let state = Rc::new(RefCell::new(State::default()));
        drop(handle.spawn(receive(handle.clone(), node, state.clone())));
        SimLock {
            handle: handle.clone(),
            lock: node,
            timeout,
            state,
        }
    }

    /// The answer to the acquire (`renewal` false) or the renewal waited
    /// for, as a future.
    fn answer(&self, renewal: bool) -> WaitAnswer {
        WaitAnswer(self.state.clone(), renewal)
    }
}

/// Takes every message from the lock: the answer waited for is handed to
/// the waiter, a grant nobody waits for is handed back.
async fn receive(handle: Handle<Msg>, lock: NodeId, state: Rc<RefCell<State>>) {
    loop {
        let (_, msg) = handle.recv_from(lock, |_| true).await;
        let mut s = state.borrow_mut();
        match msg {
            Msg::Granted {
                req,
                lease,
                token,
                ttl,
            } => {
                if s.waiting == Some(req) {
                    s.waiting = None;
                    s.lease = Some(lease);
                    s.acquired.fill(Answer::Granted(Lease {
                        id: lease,
                        token,
                        ttl,
                    }));
                } else {
                    if s.lease != Some(lease) {
                        handle.send(lock, Msg::Release { lease });
                    }
                }
            }
            Msg::Denied { req } if s.waiting == Some(req) => {
                s.waiting = None;
                s.acquired.fill(Answer::Denied);
            }
            Msg::RenewReply {
                lease,
                req,
                ok,
                ttl,
            } if s.lease == Some(lease) && s.renewing == Some(req) => {
                s.renewing = None;
                if ok {
                    s.renewed.fill(Answer::Renewed(ttl));
                } else {
                    s.lease = None;
                    s.renewed.fill(Answer::Refused);
                }
            }
            _ => {}
        }
    }
}

struct WaitAnswer(Rc<RefCell<State>>, bool);

impl Future for WaitAnswer {
    type Output = Answer;

    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Answer> {
        let mut s = self.0.borrow_mut();
        let slot = if self.1 {
            &mut s.renewed
        } else {
            &mut s.acquired
        };
        match slot.answer.take() {
            Some(a) => Poll::Ready(a),
            None => {
                slot.waker = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
}

impl LockService for SimLock {
    async fn acquire(&self) -> Result<Lease, LockError> {
        loop {
            let req = self.handle.disk().next_u64(REQUESTS);
            {
                let mut s = self.state.borrow_mut();
                s.waiting = Some(req);
                s.acquired.answer = None;
            }
            self.handle.send(self.lock, Msg::Acquire { req });
            // The timeout's timer is cancelled when the answer comes, before
            // the client says what it believes.
            let answer = self.handle.timeout(self.timeout, self.answer(false)).await;
            match answer {
                Ok(Answer::Granted(lease)) => {
                    self.handle.probe(Probe::Acquired {
                        lease: lease.id,
                        token: lease.token,
                        ttl: lease.ttl,
                    });
                    return Ok(lease);
                }
                Ok(Answer::Denied) => {
                    self.handle.probe(Probe::Denied);
                    return Err(LockError::Held);
                }
                // Unanswered: give the attempt up and ask again.
                Err(_) => self.state.borrow_mut().waiting = None,
                Ok(Answer::Renewed(_) | Answer::Refused) => {}
            }
        }
    }

    async fn keep_alive(&self, lease: &Lease) -> Result<Duration, LockError> {
        if self.state.borrow().lease != Some(lease.id) {
            return Err(LockError::Lost);
        }
        let req = self.handle.disk().next_u64(RENEWALS);
        {
            let mut s = self.state.borrow_mut();
            s.renewing = Some(req);
            s.renewed.answer = None;
        }
        let asked = self.handle.now();
        self.handle.send(
            self.lock,
            Msg::Renew {
                lease: lease.id,
                req,
            },
        );
        let answer = self.handle.timeout(self.timeout, self.answer(true)).await;
        match answer {
            Ok(Answer::Renewed(ttl)) => {
                self.handle.probe(Probe::Renewed {
                    lease: lease.id,
                    ttl,
                    asked_ago: self.handle.now().saturating_sub(asked),
                });
                Ok(ttl)
            }
            Ok(Answer::Refused) => Err(LockError::Lost),
            _ => Err(LockError::Unavailable),
        }
    }

    async fn release(&self, lease: &Lease) -> Result<(), LockError> {
        let held = {
            let mut s = self.state.borrow_mut();
            s.waiting = None;
            s.renewing = None;
            s.lease.take()
        };
        if let Some(id) = held {
            self.handle.send(self.lock, Msg::Release { lease: id });
        }
        self.handle.probe(Probe::Released { lease: lease.id });
        Ok(())
    }
}
