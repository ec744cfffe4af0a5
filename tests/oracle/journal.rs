//! A small builder for hand-made journals. Times are in milliseconds of true
//! time; each node's local clock reads true time.

use sim::journal::{Event, Journal};

/// A journal under construction.
#[derive(Default)]
pub struct J(Vec<Event>);

pub fn ev(t_ms: u64, node: &str, kind: &str) -> Event {
    let t_ns = t_ms * 1_000_000;
    Event::new(0, t_ns, node, t_ns as i64, kind)
}

fn maybe_token(e: Event, token: Option<u64>) -> Event {
    match token {
        Some(t) => e.with("token", t),
        None => e,
    }
}

impl J {
    pub fn new() -> Self {
        J::default()
    }

    pub fn build(self) -> Journal {
        Journal::from_events(self.0)
    }

    pub fn push(mut self, e: Event) -> Self {
        self.0.push(e);
        self
    }

    /// `client` believes it holds lease `lease`.
    pub fn acquired(self, t: u64, client: &str, lease: u64, token: Option<u64>) -> Self {
        let e = ev(t, client, "acquired")
            .with("lease", lease)
            .with("ttl_ms", 10_000u64);
        self.push(maybe_token(e, token))
    }

    /// The lock node `lock` hands `client` lease `lease` with `token`.
    pub fn granted(self, t: u64, lock: &str, client: &str, lease: u64, token: u64) -> Self {
        self.push(
            ev(t, lock, "granted")
                .with("client", client)
                .with("lease", lease)
                .with("token", token),
        )
    }

    /// The lock node `lock` hands `client` lease `lease` without a token.
    pub fn granted_untokened(self, t: u64, lock: &str, client: &str, lease: u64) -> Self {
        self.push(
            ev(t, lock, "granted")
                .with("client", client)
                .with("lease", lease),
        )
    }

    /// `client` believes it holds lease `lease`, won on several lock nodes:
    /// `ends` lock-node ends take it away (a majority's `acquired`).
    pub fn acquired_majority(
        self,
        t: u64,
        client: &str,
        lease: u64,
        token: Option<u64>,
        ends: u64,
    ) -> Self {
        let e = ev(t, client, "acquired")
            .with("lease", lease)
            .with("ttl_ms", 10_000u64)
            .with("ends", ends);
        self.push(maybe_token(e, token))
    }

    /// The lock node `lock` ends `client`'s lease `lease` by expiry.
    pub fn expired_at(self, t: u64, lock: &str, client: &str, lease: u64) -> Self {
        self.push(
            ev(t, lock, "expired")
                .with("client", client)
                .with("lease", lease),
        )
    }

    pub fn released_by_client(self, t: u64, client: &str, lease: u64) -> Self {
        self.push(ev(t, client, "released").with("lease", lease))
    }

    pub fn expired(self, t: u64, client: &str, lease: u64) -> Self {
        self.push(
            ev(t, "lock", "expired")
                .with("client", client)
                .with("lease", lease),
        )
    }

    pub fn released_at_lock(self, t: u64, client: &str, lease: u64) -> Self {
        self.push(
            ev(t, "lock", "released")
                .with("client", client)
                .with("lease", lease),
        )
    }

    /// `client` believes the lock extended lease `lease` by 10 s, asked
    /// for when the answer came.
    pub fn renewed_by_client(self, t: u64, client: &str, lease: u64) -> Self {
        self.push(
            ev(t, client, "renewed")
                .with("lease", lease)
                .with("ttl_ms", 10_000u64),
        )
    }

    /// The lock node `lock` extends `client`'s lease `lease` by 10 s.
    pub fn renewed_at_lock(self, t: u64, lock: &str, client: &str, lease: u64) -> Self {
        self.push(
            ev(t, lock, "renewed")
                .with("client", client)
                .with("lease", lease)
                .with("ttl_ms", 10_000u64),
        )
    }

    /// A blind write of `value`.
    pub fn wrote(self, t: u64, client: &str, write: &str, token: Option<u64>) -> Self {
        let e = ev(t, client, "wrote")
            .with("write", write)
            .with("value", 1i64)
            .with("op", "put");
        self.push(maybe_token(e, token))
    }

    /// A read-modify-write increment that writes `value`.
    pub fn incremented(self, t: u64, client: &str, write: &str, value: i64) -> Self {
        self.push(
            ev(t, client, "wrote")
                .with("write", write)
                .with("value", value)
                .with("op", "increment"),
        )
    }

    pub fn accepted(self, t: u64, write: &str, token: Option<u64>) -> Self {
        self.accepted_value(t, write, token, "", 1)
    }

    pub fn accepted_value(
        self,
        t: u64,
        write: &str,
        token: Option<u64>,
        key: &str,
        value: i64,
    ) -> Self {
        let client = write.split('/').next().unwrap();
        let e = ev(t, "storage", "accepted")
            .with("write", write)
            .with("client", client);
        let e = maybe_token(e, token).with("value", value).with("key", key);
        self.push(e)
    }

    /// An acceptance the storage made because `write`'s precondition (a
    /// version compare-and-set) held on its current state.
    pub fn accepted_if(self, t: u64, write: &str, key: &str, value: i64, version: u64) -> Self {
        let client = write.split('/').next().unwrap();
        self.push(
            ev(t, "storage", "accepted")
                .with("write", write)
                .with("client", client)
                .with("value", value)
                .with("key", key)
                .with("precondition", format!("version {version}")),
        )
    }

    pub fn rejected(self, t: u64, write: &str, token: Option<u64>) -> Self {
        let client = write.split('/').next().unwrap();
        let e = ev(t, "storage", "rejected")
            .with("write", write)
            .with("client", client);
        let e = maybe_token(e, token)
            .with("reason", "stale token")
            .with("key", "");
        self.push(e)
    }

    pub fn acked(self, t: u64, write: &str, ok: bool, op: &str) -> Self {
        let client = write.split('/').next().unwrap();
        self.push(
            ev(t, client, "acked")
                .with("write", write)
                .with("ok", ok)
                .with("op", op),
        )
    }
}

/// DDIA figure 9-6: client1 acquires with token 33 and pauses; its lease
/// expires; client2 acquires with token 34 and writes; then client1 wakes
/// and its write reaches the storage at 16.012s. With `fenced`, the storage
/// rejects it; without, it accepts it.
pub fn fig_9_6(fenced: bool) -> J {
    let j = J::new()
        .acquired(4, "client1", 1, Some(33))
        .expired(10_004, "client1", 1)
        .acquired(10_006, "client2", 2, Some(34))
        .wrote(10_008, "client2", "client2/1", Some(34))
        .accepted(10_010, "client2/1", Some(34))
        .acked(10_012, "client2/1", true, "put")
        .released_by_client(10_014, "client2", 2)
        .released_at_lock(10_016, "client2", 2)
        .wrote(16_000, "client1", "client1/1", Some(33));
    if fenced {
        j.rejected(16_012, "client1/1", Some(33))
            .acked(16_020, "client1/1", false, "put")
    } else {
        j.accepted(16_012, "client1/1", Some(33))
            .acked(16_020, "client1/1", true, "put")
    }
}
