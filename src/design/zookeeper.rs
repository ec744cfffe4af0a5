//! `zookeeper`: the lock recipe of Apache ZooKeeper (and Curator's
//! `InterProcessMutex`): ephemeral sequential znodes under the lock path,
//! owned by a session kept alive by heartbeats.
//!
//! A client opens a session and creates an ephemeral sequential znode; the
//! lowest sequence number holds the lock, and each waiter watches its
//! predecessor. Here the server plays the watch: when a znode disappears
//! (deleted on release, or with its session on expiry) the new lowest znode's
//! owner is told it holds the lock ([`Msg::Granted`]); the znode's sequence
//! number is the lease id. A session expires when no heartbeat reached the
//! server for `ttl` on the **server's** clock; the client hears of it only
//! when its next request is answered with [`SessionMsg::SessionExpired`].
//!
//! The fencing token is the **zxid** of the lock node (its `czxid`): the
//! server's transaction counter, incremented on every write to the tree
//! (session create, znode create, znode delete, session close). Znodes are
//! created in sequence order, so the holder's zxid grows with each grant.
//!
//! Known failure: **session expiry during a pause** (Kleppmann, "How to do
//! distributed locking", 2016; the HBase GC-pause incidents; Curator's
//! documentation on `ConnectionState.SUSPENDED`/`LOST`). client1 holds the
//! lock and is paused past the session timeout; its session expires, its
//! znode goes, client2's znode becomes the lowest and client2 writes. client1
//! wakes, still believing it holds the lock, and writes: with `fenced`
//! storage its older zxid is rejected; with `unchecked` storage it is a stale
//! write.
//!
//! The server keeps sessions and znodes in memory (a crash forgets them);
//! the zxid and the sequence counter are durable, as in ZooKeeper's log.

use std::collections::BTreeMap;
use std::time::Duration;

use sim::{Context, NodeId};

use crate::design::config::key;
use crate::design::grants::Grants;
use crate::design::session::SessionMsg;
use crate::design::session_client::{LossNotice, SessionLockClient};
use crate::design::session_server::{Call, SessionLock, SessionServer};
use crate::protocol::Msg;

crate::lock_design! {
    pub struct ZooKeeper as ZOOKEEPER = "zookeeper",
        "ZooKeeper lock recipe: sessions kept by heartbeats, ephemeral sequential znodes, zxid as token";
    #[derive(Eq)]
    pub struct ZooKeeperConfig {
        ttl: Duration = key::ttl(), "session timeout on the server's clock";
        tokens: bool = key::tokens(true), "grants carry the lock node's zxid as a fencing token";
        heartbeat: Duration = key::heartbeat("ttl / 3"), "client heartbeat interval; 0s means ttl / 3";
    }
    server(config, _index) => Box::new(ZooKeeperLock::new(config.clone()));
    client(c, lock_nodes) =>
        SessionLockClient::for_design(lock_nodes, c.heartbeat, c.ttl, 3, LossNotice::OnSessionExpiry);
}

/// An ephemeral sequential znode under the lock path.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Znode {
    session: u64,
    owner: NodeId,
    /// The create request, answered when the znode becomes the lowest.
    req: u64,
    /// The zxid of the transaction that created it.
    czxid: u64,
    /// Whether its owner was told it holds the lock.
    granted: bool,
}

/// The `zookeeper` server: sessions and the lock path's children.
pub type ZooKeeperLock = SessionServer<LockPath>;

impl ZooKeeperLock {
    /// A server with these settings.
    pub fn new(config: ZooKeeperConfig) -> Self {
        SessionServer::with_lock(
            config.ttl,
            LockPath {
                config,
                zxid: 0,
                next_seq: 0,
                znodes: BTreeMap::new(),
            },
        )
    }
}

/// The lock path: its children, the zxid and the sequence counter.
#[derive(Debug)]
pub struct LockPath {
    config: ZooKeeperConfig,
    /// The last transaction id.
    zxid: u64,
    /// The next sequence number under the lock path.
    next_seq: u64,
    /// The lock path's children by sequence number: the first holds the lock.
    znodes: BTreeMap<u64, Znode>,
}

impl LockPath {
    fn write_txn(&mut self) -> u64 {
        self.zxid += 1;
        self.zxid
    }

    /// The watch firing: the lowest znode's owner learns it holds the lock.
    fn notify_lowest(&mut self, grants: &mut Grants, ctx: &mut Context<'_, Msg>) {
        let Some((&seq, z)) = self.znodes.iter_mut().next() else {
            return;
        };
        if z.granted {
            return;
        }
        z.granted = true;
        let token = self.config.tokens.then_some(z.czxid);
        grants.grant(ctx, z.owner, z.req, seq, token, self.config.ttl);
    }
}

impl SessionLock for LockPath {
    /// Creates an ephemeral sequential znode for `session`.
    fn acquire(&mut self, call: Call<'_, '_>, req: u64) {
        let (from, session, grants, ctx) = call.parts();
        let retried = self
            .znodes
            .iter()
            .find(|(_, z)| z.session == session && z.req == req)
            .map(|(&seq, z)| (seq, z.granted));
        if let Some((seq, granted)) = retried {
            // A retried create (protected mode): answer it again.
            if granted {
                grants.repeat(ctx, from, req, seq, self.config.ttl);
            } else {
                ctx.send(from, Msg::design(SessionMsg::Queued { req, lease: seq }));
            }
            return;
        }
        let czxid = self.write_txn();
        let seq = self.next_seq;
        self.next_seq += 1;
        self.znodes.insert(
            seq,
            Znode {
                session,
                owner: from,
                req,
                czxid,
                granted: false,
            },
        );
        if self.znodes.keys().next() != Some(&seq) {
            // Behind a predecessor: the client watches it.
            ctx.send(from, Msg::design(SessionMsg::Queued { req, lease: seq }));
        }
        self.notify_lowest(grants, ctx);
    }

    /// Deletes the session's znode `seq`; deleting a znode that is gone
    /// already is a no-op (NoNode), answered all the same.
    fn release(&mut self, call: Call<'_, '_>, seq: u64) {
        let (from, session, grants, ctx) = call.parts();
        let owned = self.znodes.get(&seq).is_some_and(|z| z.session == session);
        if !owned {
            // Gone already (NoNode), or another session's: nothing changes.
            grants.acknowledge(from, seq).send(ctx);
            return;
        }
        self.znodes.remove(&seq);
        self.write_txn();
        let ack = grants.release(ctx, from, seq);
        self.notify_lowest(grants, ctx);
        ack.send(ctx);
    }

    fn session_of(&self, from: NodeId, lease: u64) -> Option<u64> {
        self.znodes
            .get(&lease)
            .filter(|z| z.owner == from && z.granted)
            .map(|z| z.session)
    }

    /// closeSession: one transaction deletes the session's ephemeral znodes.
    fn session_expired(&mut self, call: Call<'_, '_>) {
        let (_, session, grants, ctx) = call.parts();
        self.write_txn();
        let gone: Vec<u64> = self
            .znodes
            .iter()
            .filter(|(_, z)| z.session == session)
            .map(|(&seq, _)| seq)
            .collect();
        for seq in gone {
            let z = self.znodes.remove(&seq).expect("listed just now");
            grants.expire(ctx, z.owner, seq);
        }
        self.notify_lowest(grants, ctx);
    }

    fn on_open(&mut self) {
        self.write_txn();
    }

    fn on_crash(&mut self) {
        self.znodes.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::design::lock_client::{Grant, LockEvent};
    use crate::design::session::{SessionTimer, SESSION_TAG};
    use crate::design::session_client::testing::{granted_msg, Host};
    use sim::journal::Value;
    use sim::testing::Harness;
    use sim::TimerId;

    const CLIENT1: NodeId = 1;
    const CLIENT2: NodeId = 2;
    const TTL: Duration = Duration::from_secs(10);

    fn server() -> (Harness, ZooKeeperLock) {
        (
            Harness::new(&["lock", "client1", "client2"], 0),
            ZooKeeperLock::new(ZooKeeperConfig::default()),
        )
    }

    fn field(fields: &[(sim::Name, Value)], name: &str) -> Value {
        fields.iter().find(|(k, _)| k == name).unwrap().1.clone()
    }

    /// Opens sessions 1 (client1) and 2 (client2); zxids 1 and 2.
    fn two_sessions(h: &mut Harness, zk: &mut ZooKeeperLock) -> TimerId {
        let s = h.message(zk, CLIENT1, Msg::design(SessionMsg::OpenSession { req: 1 }));
        h.message(zk, CLIENT2, Msg::design(SessionMsg::OpenSession { req: 1 }));
        s.timers[0].0
    }

    #[test]
    fn a_delete_on_another_session_of_the_owner_leaves_its_znode_holding() {
        // client1 restarted: its first session still owns the lock's znode,
        // and it gives the grant back on its second one.
        let (mut h, mut zk) = server();
        h.message(
            &mut zk,
            CLIENT1,
            Msg::design(SessionMsg::OpenSession { req: 1 }),
        );
        h.message(
            &mut zk,
            CLIENT1,
            Msg::design(SessionMsg::OpenSession { req: 2 }),
        );
        h.message(
            &mut zk,
            CLIENT1,
            Msg::design(SessionMsg::SessionAcquire { session: 1, req: 1 }),
        );
        let delete = Msg::design(SessionMsg::SessionRelease {
            session: 2,
            lease: 0,
        });
        let s = h.message(&mut zk, CLIENT1, delete);
        assert!(s.events.is_empty(), "{:?}", s.events);
        assert_eq!(s.sends, [(CLIENT1, Msg::ReleaseAck { lease: 0 })]);
        // The grant ends with its session.
        h.message(
            &mut zk,
            CLIENT1,
            Msg::design(SessionMsg::Heartbeat { session: 2 }),
        );
        h.advance(TTL);
        let s = h.timer(&mut zk, TimerId(0), SESSION_TAG + 1);
        assert!(s.event("expired").is_some(), "{:?}", s.events);
    }

    #[test]
    fn the_lowest_znode_holds_and_its_zxid_is_the_token() {
        let (mut h, mut zk) = server();
        two_sessions(&mut h, &mut zk);
        let s = h.message(
            &mut zk,
            CLIENT1,
            Msg::design(SessionMsg::SessionAcquire { session: 1, req: 1 }),
        );
        let granted = granted_msg(1, 0, Some(3), TTL);
        assert_eq!(s.sends, [(CLIENT1, granted)]);
        assert_eq!(
            field(s.event("granted").unwrap(), "lease"),
            Value::from(0u64)
        );
        let s = h.message(
            &mut zk,
            CLIENT2,
            Msg::design(SessionMsg::SessionAcquire { session: 2, req: 1 }),
        );
        assert_eq!(
            s.sends,
            [(
                CLIENT2,
                Msg::design(SessionMsg::Queued { req: 1, lease: 1 })
            )]
        );
        // client1 deletes its znode (zxid 5): the watch fires for client2,
        // whose znode was created by zxid 4.
        let s = h.message(
            &mut zk,
            CLIENT1,
            Msg::design(SessionMsg::SessionRelease {
                session: 1,
                lease: 0,
            }),
        );
        assert!(s.event("released").is_some());
        let granted = granted_msg(1, 1, Some(4), TTL);
        assert_eq!(
            s.sends,
            [(CLIENT2, granted), (CLIENT1, Msg::ReleaseAck { lease: 0 })]
        );
    }

    #[test]
    fn session_expiry_deletes_the_holders_znode_and_grants_the_next() {
        let (mut h, mut zk) = server();
        let timer1 = two_sessions(&mut h, &mut zk);
        h.message(
            &mut zk,
            CLIENT1,
            Msg::design(SessionMsg::SessionAcquire { session: 1, req: 1 }),
        );
        h.message(
            &mut zk,
            CLIENT2,
            Msg::design(SessionMsg::SessionAcquire { session: 2, req: 1 }),
        );
        h.advance(Duration::from_secs(5));
        h.message(
            &mut zk,
            CLIENT2,
            Msg::design(SessionMsg::Heartbeat { session: 2 }),
        );
        h.advance(Duration::from_secs(5));
        let s = h.timer(&mut zk, timer1, SESSION_TAG + 1);
        let expired = s.event("expired").unwrap();
        assert_eq!(field(expired, "client"), Value::from("client1"));
        assert_eq!(field(expired, "lease"), Value::from(0u64));
        assert!(matches!(
            s.sends[0],
            (CLIENT2, Msg::Granted { lease: 1, .. })
        ));
        // The paused holder wakes: its session is gone.
        let s = h.message(
            &mut zk,
            CLIENT1,
            Msg::design(SessionMsg::Heartbeat { session: 1 }),
        );
        assert_eq!(
            s.sends,
            [(
                CLIENT1,
                Msg::design(SessionMsg::SessionExpired { session: 1 })
            )]
        );
    }

    #[test]
    fn a_waiter_whose_session_expires_leaves_the_queue_silently() {
        let (mut h, mut zk) = server();
        two_sessions(&mut h, &mut zk);
        h.message(
            &mut zk,
            CLIENT1,
            Msg::design(SessionMsg::SessionAcquire { session: 1, req: 1 }),
        );
        let s = h.message(
            &mut zk,
            CLIENT2,
            Msg::design(SessionMsg::SessionAcquire { session: 2, req: 1 }),
        );
        assert!(s
            .sends
            .iter()
            .all(|(_, m)| matches!(m.as_design(), Some(SessionMsg::Queued { .. }))));
        h.advance(TTL);
        let s = h.timer(&mut zk, TimerId(99), SESSION_TAG + 2);
        assert!(s.events.is_empty() && s.sends.is_empty());
    }

    #[test]
    fn the_client_queues_then_holds_and_reports_lost_when_its_session_expires() {
        const LOCK: NodeId = 1;
        let mut h = Harness::new(&["client1", "lock"], 0);
        let protocol = SessionLockClient::new("lock", TTL / 3, LossNotice::OnSessionExpiry);
        let mut c = Host::new(protocol);
        assert_eq!(
            c.acquire(&mut h),
            [(LOCK, Msg::design(SessionMsg::OpenSession { req: 1 }))]
        );
        let opened = Msg::design(SessionMsg::SessionOpened {
            req: 1,
            session: 7,
            ttl: TTL,
        });
        let (event, sends) = c.message(&mut h, LOCK, opened);
        assert_eq!(event, LockEvent::Nothing);
        assert_eq!(
            sends,
            [(
                LOCK,
                Msg::design(SessionMsg::SessionAcquire { session: 7, req: 1 })
            )]
        );
        let (event, _) = c.message(
            &mut h,
            LOCK,
            Msg::design(SessionMsg::Queued { req: 1, lease: 3 }),
        );
        assert_eq!(event, LockEvent::Nothing);
        let granted = granted_msg(1, 3, Some(9), TTL);
        let grant = Grant::new(3, Some(9), TTL);
        assert_eq!(
            c.message(&mut h, LOCK, granted).0,
            LockEvent::Acquired(grant)
        );
        assert!(c.renew(&mut h));
        let (_, step) = c.timer(&mut h, SessionTimer::Heartbeat(7));
        assert_eq!(
            step.sends,
            [(LOCK, Msg::design(SessionMsg::Heartbeat { session: 7 }))]
        );
        let expired = Msg::design(SessionMsg::SessionExpired { session: 7 });
        assert_eq!(c.message(&mut h, LOCK, expired).0, LockEvent::Lost);
        assert!(!c.renew(&mut h));
        // Nothing left to release.
        assert!(c.release(&mut h).is_empty());
    }

    #[test]
    fn a_client_that_gives_up_waiting_deletes_its_znode() {
        const LOCK: NodeId = 1;
        let protocol = SessionLockClient::new("lock", TTL / 3, LossNotice::OnSessionExpiry);
        let (mut h, mut c) = Host::opened(protocol, 1, TTL);
        c.message(
            &mut h,
            LOCK,
            Msg::design(SessionMsg::Queued { req: 1, lease: 4 }),
        );
        let delete = Msg::design(SessionMsg::SessionRelease {
            session: 1,
            lease: 4,
        });
        assert_eq!(c.release(&mut h), [(LOCK, delete.clone())]);
        // A grant for the abandoned request comes back anyway: handed back.
        let granted = granted_msg(1, 4, Some(2), TTL);
        let (event, sends) = c.message(&mut h, LOCK, granted);
        assert_eq!(event, LockEvent::Nothing);
        assert_eq!(sends, [(LOCK, delete)]);
    }

    #[test]
    fn a_renewal_heartbeats_the_holders_session_and_is_refused_to_others() {
        let (mut h, mut zk) = server();
        two_sessions(&mut h, &mut zk);
        h.message(
            &mut zk,
            CLIENT1,
            Msg::design(SessionMsg::SessionAcquire { session: 1, req: 1 }),
        );
        h.message(
            &mut zk,
            CLIENT2,
            Msg::design(SessionMsg::SessionAcquire { session: 2, req: 1 }),
        );
        let s = h.message(&mut zk, CLIENT1, Msg::Renew { lease: 0, req: 4 });
        assert!(s.event("renewed").is_some());
        let ok = Msg::RenewReply {
            lease: 0,
            req: 4,
            ok: true,
            ttl: TTL,
        };
        assert_eq!(s.sends, [(CLIENT1, ok)]);
        // client2's znode is queued, not holding: nothing to renew.
        let s = h.message(&mut zk, CLIENT2, Msg::Renew { lease: 1, req: 1 });
        assert!(s.event("renewed").is_none());
        assert!(matches!(s.sends[0].1, Msg::RenewReply { ok: false, .. }));
    }

    #[test]
    fn the_client_renews_the_lease_it_holds_and_acts_on_one_answer_once() {
        const LOCK: NodeId = 1;
        let protocol = SessionLockClient::new("lock", TTL / 3, LossNotice::OnSessionExpiry);
        let (mut h, mut c) = Host::opened(protocol, 2, TTL);
        let granted = granted_msg(1, 5, Some(3), TTL);
        c.message(&mut h, LOCK, granted.clone());
        // A second copy of the grant held: kept, not handed back.
        assert_eq!(
            c.message(&mut h, LOCK, granted),
            (LockEvent::Nothing, vec![])
        );
        assert!(c.renew(&mut h));
        let ok = Msg::RenewReply {
            lease: 5,
            req: 1,
            ok: true,
            ttl: TTL,
        };
        assert_eq!(
            c.message(&mut h, LOCK, ok.clone()).0,
            LockEvent::Renewed(TTL)
        );
        assert_eq!(c.message(&mut h, LOCK, ok).0, LockEvent::Nothing);
        assert!(c.renew(&mut h));
        let refused = Msg::RenewReply {
            lease: 5,
            req: 2,
            ok: false,
            ttl: Duration::ZERO,
        };
        assert_eq!(c.message(&mut h, LOCK, refused).0, LockEvent::Lost);
        assert!(!c.renew(&mut h));
    }

    #[test]
    fn a_grant_sent_before_the_session_expired_is_not_believed_after() {
        const LOCK: NodeId = 1;
        let mut h = Harness::new(&["client1", "lock"], 0);
        let protocol = SessionLockClient::new("lock", TTL / 3, LossNotice::OnSessionExpiry);
        let mut c = Host::new(protocol);
        c.acquire(&mut h);
        let opened = |req, session| {
            Msg::design(SessionMsg::SessionOpened {
                req,
                session,
                ttl: TTL,
            })
        };
        c.message(&mut h, LOCK, opened(1, 1));
        c.message(
            &mut h,
            LOCK,
            Msg::design(SessionMsg::Queued { req: 1, lease: 4 }),
        );
        // The expiry overtakes the grant the server sent just before it.
        let (_, sends) = c.message(
            &mut h,
            LOCK,
            Msg::design(SessionMsg::SessionExpired { session: 1 }),
        );
        assert_eq!(
            sends,
            [(LOCK, Msg::design(SessionMsg::OpenSession { req: 2 }))]
        );
        let (_, sends) = c.message(&mut h, LOCK, opened(2, 2));
        assert_eq!(
            sends,
            [(
                LOCK,
                Msg::design(SessionMsg::SessionAcquire { session: 2, req: 2 })
            )]
        );
        let late = granted_msg(1, 4, Some(5), TTL);
        let (event, sends) = c.message(&mut h, LOCK, late);
        assert_eq!(event, LockEvent::Nothing);
        let give_back = Msg::design(SessionMsg::SessionRelease {
            session: 2,
            lease: 4,
        });
        assert_eq!(sends, [(LOCK, give_back)]);
    }
}
