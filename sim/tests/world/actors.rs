//! Small purpose-built actors: each does one thing the tests can watch in the
//! journal. None of them knows about locks.

use std::time::Duration;

use sim::{Actor, Context, Message, NodeId, TimerId};

/// The one message type of the test worlds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Msg {
    /// A request carrying a number; an answering actor replies with `Pong`.
    Ping(u64),
    /// The answer to `Ping(n)`.
    Pong(u64),
}

impl Message for Msg {
    fn summary(&self) -> String {
        match self {
            Msg::Ping(n) => format!("ping {n}"),
            Msg::Pong(n) => format!("pong {n}"),
        }
    }
}

type Ctx<'a> = Context<'a, Msg>;

/// Sends `Ping(i)` to `peer` when its monotonic clock reads `send_at[i]`,
/// answers every ping it gets with a pong, and counts the pongs it gets.
/// Done once it has sent everything (and, with `want_replies`, has a pong for
/// every ping).
pub struct Pinger {
    peer: String,
    send_at: Vec<Duration>,
    sent: usize,
    want_replies: bool,
    replies: usize,
}

impl Pinger {
    /// Pings `peer` at each of `send_at` (local monotonic times).
    pub fn new(peer: &str, send_at: &[Duration]) -> Self {
        Pinger {
            peer: peer.to_owned(),
            send_at: send_at.to_vec(),
            sent: 0,
            want_replies: false,
            replies: 0,
        }
    }

    /// Also waits for a pong to every ping before it is done.
    pub fn wanting_replies(mut self) -> Self {
        self.want_replies = true;
        self
    }
}

impl Actor<Msg> for Pinger {
    fn on_start(&mut self, ctx: &mut Ctx<'_>) {
        let now = ctx.now();
        for (i, at) in self.send_at.iter().enumerate() {
            ctx.set_timer(at.saturating_sub(now), i as u64);
        }
    }

    fn on_message(&mut self, ctx: &mut Ctx<'_>, from: NodeId, msg: Msg) {
        match msg {
            Msg::Ping(n) => ctx.send(from, Msg::Pong(n)),
            Msg::Pong(n) => {
                sim::emit!("pong_got", n = n);
                self.replies += 1;
            }
        }
    }

    fn on_timer(&mut self, ctx: &mut Ctx<'_>, _id: TimerId, tag: u64) {
        let peer = ctx.node(&self.peer).expect("peer exists");
        ctx.send(peer, Msg::Ping(tag));
        self.sent += 1;
    }

    fn is_done(&self) -> bool {
        self.sent == self.send_at.len() && (!self.want_replies || self.replies >= self.sent)
    }
}

/// Sends `count` pings to `peer` from `on_start`, all in one step.
pub struct Burst {
    pub peer: String,
    pub count: u64,
}

impl Actor<Msg> for Burst {
    fn on_start(&mut self, ctx: &mut Ctx<'_>) {
        let peer = ctx.node(&self.peer).expect("peer exists");
        for n in 0..self.count {
            ctx.send(peer, Msg::Ping(n));
        }
    }
    fn on_message(&mut self, _: &mut Ctx<'_>, _: NodeId, _: Msg) {}
    fn on_timer(&mut self, _: &mut Ctx<'_>, _: TimerId, _: u64) {}
}

/// Answers every ping with a pong and emits `echo`.
pub struct Echo;

impl Actor<Msg> for Echo {
    fn on_start(&mut self, _: &mut Ctx<'_>) {}
    fn on_message(&mut self, ctx: &mut Ctx<'_>, from: NodeId, msg: Msg) {
        if let Msg::Ping(n) = msg {
            sim::emit!("echo", n = n);
            ctx.send(from, Msg::Pong(n));
        }
    }
    fn on_timer(&mut self, _: &mut Ctx<'_>, _: TimerId, _: u64) {}
}

/// Emits `got` for every message and never answers.
pub struct Sink;

impl Actor<Msg> for Sink {
    fn on_start(&mut self, _: &mut Ctx<'_>) {}
    fn on_message(&mut self, _: &mut Ctx<'_>, _: NodeId, msg: Msg) {
        let n = match msg {
            Msg::Ping(n) | Msg::Pong(n) => n,
        };
        sim::emit!("got", n = n);
    }
    fn on_timer(&mut self, _: &mut Ctx<'_>, _: TimerId, _: u64) {}
}

/// Sets one timer per entry of `after` on start (tag = index) and emits
/// `fired` with the tag and both clock readings when each fires.
pub struct Timers {
    after: Vec<Duration>,
    fired: usize,
}

impl Timers {
    pub fn new(after: &[Duration]) -> Self {
        Timers {
            after: after.to_vec(),
            fired: 0,
        }
    }
}

impl Actor<Msg> for Timers {
    fn on_start(&mut self, ctx: &mut Ctx<'_>) {
        sim::emit!("started", mono_ns = ctx.mono_ns());
        for (i, d) in self.after.iter().enumerate() {
            ctx.set_timer(*d, i as u64);
        }
    }
    fn on_message(&mut self, _: &mut Ctx<'_>, _: NodeId, _: Msg) {}
    fn on_timer(&mut self, ctx: &mut Ctx<'_>, _: TimerId, tag: u64) {
        sim::emit!(
            "fired",
            tag = tag,
            mono_ns = ctx.mono_ns(),
            wall_ns = ctx.wall_ns()
        );
        self.fired += 1;
    }
    fn is_done(&self) -> bool {
        self.fired == self.after.len()
    }
}

/// Ticks every `every` forever and is never done.
pub struct Ticker {
    pub every: Duration,
}

impl Actor<Msg> for Ticker {
    fn on_start(&mut self, ctx: &mut Ctx<'_>) {
        ctx.set_timer(self.every, 0);
    }
    fn on_message(&mut self, _: &mut Ctx<'_>, _: NodeId, _: Msg) {}
    fn on_timer(&mut self, ctx: &mut Ctx<'_>, _: TimerId, _: u64) {
        sim::emit!("tick");
        ctx.set_timer(self.every, 0);
    }
    fn is_done(&self) -> bool {
        false
    }
}

/// Keeps a durable and a volatile counter, both bumped on every start; emits
/// `started` with both before bumping. Sets a timer for `timer_after` on every
/// start (emits `fired`) and emits `got` for each message.
pub struct Counters {
    pub durable: u64,
    pub volatile: u64,
    pub timer_after: Duration,
}

impl Actor<Msg> for Counters {
    fn on_start(&mut self, ctx: &mut Ctx<'_>) {
        sim::emit!("started", durable = self.durable, volatile = self.volatile);
        self.durable += 1;
        self.volatile += 1;
        ctx.set_timer(self.timer_after, 0);
    }
    fn on_message(&mut self, _: &mut Ctx<'_>, _: NodeId, msg: Msg) {
        sim::emit!("got", msg = msg.summary());
    }
    fn on_timer(&mut self, _: &mut Ctx<'_>, _: TimerId, _: u64) {
        sim::emit!("fired");
    }
    fn on_crash(&mut self) {
        self.volatile = 0;
    }
}

/// Emits `ok` for each ping, and panics on `Ping(fatal)`.
pub struct Panicker {
    pub fatal: u64,
}

impl Actor<Msg> for Panicker {
    fn on_start(&mut self, _: &mut Ctx<'_>) {}
    fn on_message(&mut self, _: &mut Ctx<'_>, _: NodeId, msg: Msg) {
        if let Msg::Ping(n) = msg {
            assert!(n != self.fatal, "panicker hit fatal ping {n}");
            sim::emit!("ok", n = n);
        }
    }
    fn on_timer(&mut self, _: &mut Ctx<'_>, _: TimerId, _: u64) {}
}

/// Emits, 10 ms after start, one event with a field of every type the
/// journal keeps; done once it has.
pub struct Typed {
    pub done: bool,
}

impl Actor<Msg> for Typed {
    fn on_start(&mut self, ctx: &mut Ctx<'_>) {
        ctx.set_timer(Duration::from_millis(10), 0);
    }
    fn on_message(&mut self, _: &mut Ctx<'_>, _: NodeId, _: Msg) {}
    fn on_timer(&mut self, _: &mut Ctx<'_>, _: TimerId, _: u64) {
        sim::emit!(
            "typed",
            count = 7u64,
            skew = -3i64,
            ok = true,
            who = "client9"
        );
        self.done = true;
    }
    fn is_done(&self) -> bool {
        self.done
    }
}

/// Emits `ok` for each ping, and on `Ping(spin_on)` spins in its handler
/// until `release` is set: a design stuck in a loop, which no simulated
/// limit can end. Tests set `release` when done so the abandoned thread
/// ends too.
pub struct Spinner {
    pub spin_on: u64,
    pub release: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Actor<Msg> for Spinner {
    fn on_start(&mut self, _: &mut Ctx<'_>) {}
    fn on_message(&mut self, _: &mut Ctx<'_>, _: NodeId, msg: Msg) {
        if let Msg::Ping(n) = msg {
            while n == self.spin_on && !self.release.load(std::sync::atomic::Ordering::Relaxed) {
                std::hint::spin_loop();
                std::thread::yield_now();
            }
            sim::emit!("ok", n = n);
        }
    }
    fn on_timer(&mut self, _: &mut Ctx<'_>, _: TimerId, _: u64) {}
}
