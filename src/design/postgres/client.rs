//! The `postgres` client: one connection, `pg_try_advisory_lock` and
//! `pg_advisory_unlock` on it, `SELECT 1` as a renewal, and a kernel that
//! answers keepalive probes.

use std::time::Duration;

use sim::{Context, NodeId, TimerId};

use super::PgWire;
use crate::design::lock_client::{Grant, LockClient, LockContext, LockEvent};
use crate::design::node_named;
use crate::design::session::SessionMsg;
use crate::protocol::Msg;

/// The client half: one connection (reopened when the server closed it),
/// `pg_try_advisory_lock` on it, `pg_advisory_unlock`, `SELECT 1` as a
/// renewal, and a kernel that answers keepalive probes.
///
/// An acquire given up unanswered is sent again with the same request id
/// on the same connection, so the server does not lock twice; an unlock is
/// sent again every [`RETRANSMIT`] until answered, and a connection request
/// given up is made anew: the simulated network loses what TCP would
/// retransmit, and a lost unlock must not strand the lock. The client
/// learns that the server closed its connection only on its next call (as
/// libpq does): a held lock is reported lost when a renewal is refused, not
/// when the `FATAL` arrives.
#[derive(Debug)]
pub struct PgClient {
    server: String,
    req: u64,
    opens: u64,
    /// The open connection.
    conn: Option<u64>,
    /// The `OpenSession` request in flight.
    connecting: Option<u64>,
    /// The lock request in flight.
    waiting: Option<u64>,
    /// A lock request given up before any answer.
    unanswered: Option<u64>,
    /// (connection, lease) held.
    held: Option<(u64, u64)>,
    /// The unlock awaiting its answer: (connection, lease).
    unlocking: Option<(u64, u64)>,
    retransmit: Option<TimerId>,
    renewals: u64,
    renewing: Option<u64>,
}

/// How often a client sends an unanswered unlock again.
pub const RETRANSMIT: Duration = Duration::from_secs(1);

/// The client's one timer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PgTimer {
    /// The unanswered unlock goes again.
    Retransmit,
}

crate::design::lock_client::timer_tags!(PgTimer { Retransmit });

impl PgClient {
    /// Talks to the server node called `server`.
    pub fn new(server: impl Into<String>) -> Self {
        PgClient {
            server: server.into(),
            req: 0,
            opens: 0,
            conn: None,
            connecting: None,
            waiting: None,
            unanswered: None,
            held: None,
            unlocking: None,
            retransmit: None,
            renewals: 0,
            renewing: None,
        }
    }

    fn send_unlock(&mut self, ctx: &mut LockContext<'_, '_, PgTimer>, session: u64, lease: u64) {
        self.unlocking = Some((session, lease));
        let server = node_named(ctx, &self.server);
        ctx.send(
            server,
            Msg::design(SessionMsg::SessionRelease { session, lease }),
        );
        if let Some(t) = self.retransmit.take() {
            ctx.cancel_timer(t);
        }
        self.retransmit = Some(ctx.set_timer(RETRANSMIT, PgTimer::Retransmit));
    }

    fn unlock_answered(&mut self, ctx: &mut Context<'_, Msg>, session: u64, lease: Option<u64>) {
        let answered = self
            .unlocking
            .is_some_and(|(s, l)| s == session && lease.map_or(true, |lease| lease == l));
        if answered {
            self.unlocking = None;
            if let Some(t) = self.retransmit.take() {
                ctx.cancel_timer(t);
            }
        }
    }

    fn send_lock(&mut self, ctx: &mut Context<'_, Msg>) {
        let server = node_named(ctx, &self.server);
        match (self.conn, self.waiting) {
            (Some(session), Some(req)) => ctx.send(
                server,
                Msg::design(SessionMsg::SessionAcquire { session, req }),
            ),
            (None, Some(_)) if self.connecting.is_none() => {
                self.opens += 1;
                self.connecting = Some(self.opens);
                ctx.send(
                    server,
                    Msg::design(SessionMsg::OpenSession { req: self.opens }),
                );
            }
            _ => {}
        }
    }
}

impl LockClient for PgClient {
    type Timer = PgTimer;

    fn acquire(&mut self, ctx: &mut LockContext<'_, '_, PgTimer>) {
        let req = self.unanswered.take().unwrap_or_else(|| {
            self.req += 1;
            self.req
        });
        self.waiting = Some(req);
        // A connection request given up (or lost) is made anew.
        self.connecting = None;
        self.send_lock(ctx);
    }

    fn release(&mut self, ctx: &mut LockContext<'_, '_, PgTimer>) {
        self.renewing = None;
        if let Some(req) = self.waiting.take() {
            self.unanswered = Some(req);
        }
        if let Some((session, lease)) = self.held.take() {
            self.send_unlock(ctx, session, lease);
        }
    }

    fn on_message(
        &mut self,
        ctx: &mut LockContext<'_, '_, PgTimer>,
        from: NodeId,
        msg: &Msg,
    ) -> LockEvent {
        match (msg, msg.as_design::<SessionMsg>()) {
            (_, Some(&SessionMsg::SessionOpened { req, session, .. }))
                if self.connecting == Some(req) =>
            {
                self.connecting = None;
                self.conn = Some(session);
                self.send_lock(ctx);
            }
            (
                &Msg::Granted {
                    req,
                    lease,
                    token,
                    ttl,
                },
                _,
            ) => match self.conn {
                Some(conn) if self.waiting == Some(req) => {
                    self.waiting = None;
                    self.held = Some((conn, lease));
                    return LockEvent::Acquired(Grant::new(lease, token, ttl));
                }
                // A lock for a request given up: unlock it.
                Some(session) if self.held.map(|(_, l)| l) != Some(lease) => {
                    ctx.send(
                        from,
                        Msg::design(SessionMsg::SessionRelease { session, lease }),
                    );
                }
                _ => {}
            },
            (&Msg::Denied { req }, _) if self.waiting == Some(req) => {
                self.waiting = None;
                return LockEvent::Denied;
            }
            (&Msg::ReleaseAck { lease }, _) => {
                if let Some((session, _)) = self.unlocking {
                    self.unlock_answered(ctx, session, Some(lease));
                }
            }
            (_, Some(&SessionMsg::SessionExpired { session })) => {
                self.unlock_answered(ctx, session, None);
                self.closed(ctx, session);
            }
            (
                &Msg::RenewReply {
                    lease,
                    req,
                    ok,
                    ttl,
                },
                _,
            ) if self.held.is_some_and(|(_, l)| l == lease) && self.renewing == Some(req) => {
                self.renewing = None;
                if ok {
                    return LockEvent::Renewed(ttl);
                }
                self.held = None;
                return LockEvent::Lost;
            }
            _ => match msg.as_design::<PgWire>() {
                // The kernel answers for any socket still open.
                Some(&PgWire::Probe { conn }) if self.conn == Some(conn) => {
                    ctx.send(from, Msg::design(PgWire::ProbeAck { conn }));
                }
                Some(&PgWire::Terminated { conn, .. }) => self.closed(ctx, conn),
                _ => {}
            },
        }
        LockEvent::Nothing
    }

    fn on_timer(&mut self, ctx: &mut LockContext<'_, '_, PgTimer>, timer: PgTimer) -> LockEvent {
        let PgTimer::Retransmit = timer;
        self.retransmit = None;
        if let Some((session, lease)) = self.unlocking {
            self.send_unlock(ctx, session, lease);
        }
        LockEvent::Nothing
    }

    fn renew(&mut self, ctx: &mut LockContext<'_, '_, PgTimer>) -> bool {
        // Asked even when the connection is known to be closed: the
        // server's refusal is how the client hears the lock is gone.
        let Some((_, lease)) = self.held else {
            return false;
        };
        self.renewals += 1;
        let req = self.renewals;
        self.renewing = Some(req);
        let server = node_named(ctx, &self.server);
        ctx.send(server, Msg::Renew { lease, req });
        true
    }

    fn on_crash(&mut self) {
        self.conn = None;
        self.connecting = None;
        self.waiting = None;
        self.unanswered = None;
        self.held = None;
        self.unlocking = None;
        self.retransmit = None;
        self.renewing = None;
    }
}

impl PgClient {
    /// The server closed connection `conn` (or never had it): a lock
    /// request in progress goes again on a new connection, under a new id.
    fn closed(&mut self, ctx: &mut Context<'_, Msg>, conn: u64) {
        if self.conn != Some(conn) {
            return;
        }
        self.conn = None;
        self.unanswered = None;
        if self.waiting.is_some() {
            self.req += 1;
            self.waiting = Some(self.req);
            self.send_lock(ctx);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::design::postgres::EndReason;
    use crate::design::session_client::testing::Host;
    use sim::testing::Harness;

    const SECOND: Duration = Duration::from_secs(1);

    #[test]
    fn the_client_answers_probes_and_hears_of_a_lost_lock_on_its_next_call() {
        const LOCK: NodeId = 1;
        let mut h = Harness::new(&["client1", "lock"], 0);
        let mut c = Host::new(PgClient::new("lock"));
        assert_eq!(
            c.acquire(&mut h),
            [(LOCK, Msg::design(SessionMsg::OpenSession { req: 1 }))]
        );
        let opened = Msg::design(SessionMsg::SessionOpened {
            req: 1,
            session: 4,
            ttl: 10 * SECOND,
        });
        let (_, sends) = c.message(&mut h, LOCK, opened);
        assert_eq!(
            sends,
            [(
                LOCK,
                Msg::design(SessionMsg::SessionAcquire { session: 4, req: 1 })
            )]
        );
        let grant = Msg::Granted {
            req: 1,
            lease: 7,
            token: None,
            ttl: 10 * SECOND,
        };
        assert!(matches!(
            c.message(&mut h, LOCK, grant).0,
            LockEvent::Acquired(_)
        ));
        let probe = Msg::design(PgWire::Probe { conn: 4 });
        let ack = Msg::design(PgWire::ProbeAck { conn: 4 });
        assert_eq!(c.message(&mut h, LOCK, probe).1, [(LOCK, ack)]);
        // The FATAL arrives: nothing to tell the workload yet.
        let fatal = PgWire::Terminated {
            conn: 4,
            reason: EndReason::IdleSession,
        };
        assert_eq!(
            c.message(&mut h, LOCK, Msg::design(fatal)).0,
            LockEvent::Nothing
        );
        // A closed socket answers no probe.
        let probe = Msg::design(PgWire::Probe { conn: 4 });
        assert!(c.message(&mut h, LOCK, probe).1.is_empty());
        // Its next call, a renewal, is refused: now it knows.
        assert!(c.renew(&mut h));
        let refused = Msg::RenewReply {
            lease: 7,
            req: 1,
            ok: false,
            ttl: Duration::ZERO,
        };
        assert_eq!(c.message(&mut h, LOCK, refused).0, LockEvent::Lost);
        // The next acquire opens a new connection.
        assert_eq!(
            c.acquire(&mut h),
            [(LOCK, Msg::design(SessionMsg::OpenSession { req: 2 }))]
        );
    }
}
