//! A design with a wire protocol of its own: `ticket` asks for the lock
//! with its own message type, carried in `Msg::Design`, and hears "busy"
//! in it too; grants and releases go through the journaling ledger as for
//! any lock. fencesim neither knows nor edits the type, yet sends, journals,
//! judges and renders it. Its client journals a decision of its own in its
//! own words, which the oracle reads past and the reports show.

use std::time::Duration;

use fencesim::cli::Status;
use fencesim::design::catalog::{DesignInfo, Registry};
use fencesim::design::grants::Grants;
use fencesim::design::lock_client::{
    AnyLockClient, Grant, LockClient, LockContext, LockEvent, NoTimer,
};
use fencesim::design::{node_named, LockDesign};
use fencesim::oracle::Verdict;
use fencesim::protocol::{Msg, Payload};
use fencesim::testkit::ScenarioBuilder;
use sim::{Actor, Context, NodeId, TimerId};

use crate::TempDir;

/// The ticket protocol's own messages. The summary has characters that
/// mean something to HTML and Markdown, to show that they are escaped.
#[derive(Clone, Debug, PartialEq)]
enum Ticket {
    Ask { req: u64 },
    Busy { req: u64 },
}

impl Payload for Ticket {
    fn summary(&self) -> String {
        match self {
            Ticket::Ask { req } => format!("ask <ticket> req={req}"),
            Ticket::Busy { req } => format!("busy <ticket> req={req}"),
        }
    }
}

const TTL: Duration = Duration::from_secs(10);

struct TicketDesign;

impl LockDesign for TicketDesign {
    type Config = ();

    fn info(&self) -> DesignInfo {
        DesignInfo::lock("ticket", "a lock asked for with its own message type", &[])
    }

    fn server(&self, _: &(), _index: usize) -> Box<dyn Actor<Msg>> {
        Box::new(TicketServer {
            holder: None,
            grants: Grants::new(),
            next: 1,
        })
    }

    fn client(&self, _: &(), lock_nodes: &[String]) -> Box<dyn AnyLockClient> {
        Box::new(TicketClient {
            lock: lock_nodes[0].clone(),
            req: 0,
            waiting: None,
            held: None,
        })
    }
}

/// Grants lease `n` with token `n` to the first `Ask`; `Busy` to the rest.
struct TicketServer {
    holder: Option<(NodeId, u64, TimerId)>,
    grants: Grants,
    next: u64,
}

impl Actor<Msg> for TicketServer {
    fn on_message(&mut self, ctx: &mut Context<'_, Msg>, from: NodeId, msg: Msg) {
        match msg {
            Msg::Design(m) => match m.downcast::<Ticket>() {
                Ok(Ticket::Ask { req }) if self.holder.is_none() => {
                    let lease = self.next;
                    self.next += 1;
                    let timer = ctx.set_timer(TTL, lease);
                    self.holder = Some((from, lease, timer));
                    self.grants.grant(ctx, from, req, lease, Some(lease), TTL);
                }
                Ok(Ticket::Ask { req }) => ctx.send(from, Msg::design(Ticket::Busy { req })),
                other => panic!("the ticket server got {other:?}"),
            },
            Msg::Release { lease } => {
                if let Some((_, _, timer)) = self.holder.take_if(|h| (h.0, h.1) == (from, lease)) {
                    ctx.cancel_timer(timer);
                }
                self.grants.release(ctx, from, lease).send(ctx);
            }
            _ => {}
        }
    }

    fn on_timer(&mut self, ctx: &mut Context<'_, Msg>, id: TimerId, lease: u64) {
        if let Some((client, _, _)) = self.holder.take_if(|h| h.2 == id) {
            self.grants.expire(ctx, client, lease);
        }
    }
}

struct TicketClient {
    lock: String,
    req: u64,
    waiting: Option<u64>,
    held: Option<u64>,
}

impl LockClient for TicketClient {
    type Timer = NoTimer;

    fn acquire(&mut self, ctx: &mut LockContext<'_, '_, NoTimer>) {
        self.req += 1;
        self.waiting = Some(self.req);
        let lock = node_named(ctx, &self.lock);
        ctx.send(lock, Msg::design(Ticket::Ask { req: self.req }));
    }

    fn release(&mut self, ctx: &mut LockContext<'_, '_, NoTimer>) {
        self.waiting = None;
        if let Some(lease) = self.held.take() {
            let lock = node_named(ctx, &self.lock);
            ctx.send(lock, Msg::Release { lease });
        }
    }

    fn on_message(
        &mut self,
        _: &mut LockContext<'_, '_, NoTimer>,
        _: NodeId,
        msg: &Msg,
    ) -> LockEvent {
        match (msg, msg.as_design::<Ticket>()) {
            (
                &Msg::Granted {
                    req,
                    lease,
                    token,
                    ttl,
                },
                _,
            ) if self.waiting == Some(req) => {
                self.waiting = None;
                self.held = Some(lease);
                LockEvent::Acquired(Grant::new(lease, token, ttl))
            }
            (_, Some(&Ticket::Busy { req })) if self.waiting == Some(req) => {
                self.waiting = None;
                // A decision of the protocol's own, journaled in its words.
                fencesim::sim::emit!("heard_busy", req = req, retry = "later");
                LockEvent::Denied
            }
            _ => LockEvent::Nothing,
        }
    }
}

fn registry() -> Registry {
    let mut registry = Registry::builtin();
    registry.add_lock(TicketDesign);
    registry
}

/// Two clients contend for the ticket lock; client2 hears "busy" first.
fn contended() -> ScenarioBuilder {
    ScenarioBuilder::new("ticket-contended")
        .lock("ticket", |t| t)
        .storage("fenced", |t| t)
        .client("client1", |t| t.set("work", "2s"))
        .client("client2", |t| t.set("start", "1s"))
        .expect(|t| t.set("verdict", "safe").set("accepted_writes", 2))
        .registry(registry())
}

#[test]
fn a_design_message_is_sent_journaled_and_judged_like_any_other() {
    let run = contended().assert_seed(1);
    assert_eq!(run.report.verdict, Verdict::Safe);
    let sent: Vec<(&str, &str)> = run
        .result
        .journal
        .events()
        .iter()
        .filter(|e| e.kind == "send")
        .filter_map(|e| Some((e.node.as_str(), e.str("msg")?)))
        .collect();
    assert!(
        sent.contains(&("client1", "ask <ticket> req=1")),
        "{sent:?}"
    );
    assert!(sent.contains(&("lock", "busy <ticket> req=1")), "{sent:?}");
    // The grants went through the ledger: the oracle matched both.
    let granted = run.result.journal.events().iter();
    assert_eq!(granted.filter(|e| e.kind == "granted").count(), 2);
    assert_eq!(contended().run(1).result.journal, run.result.journal);
}

#[test]
fn a_design_message_is_compared_cloned_and_read_back_by_its_type() {
    let ask = Msg::design(Ticket::Ask { req: 3 });
    assert_eq!(ask.clone(), ask);
    assert_ne!(ask, Msg::design(Ticket::Busy { req: 3 }));
    assert_ne!(ask, Msg::Acquire { req: 3 });
    assert_eq!(ask.as_design::<Ticket>(), Some(&Ticket::Ask { req: 3 }));
    // Another design's type is not this one.
    #[derive(Clone, Debug, PartialEq)]
    struct Other(u64);
    impl Payload for Other {}
    assert_eq!(ask.as_design::<Other>(), None);
    assert_ne!(ask, Msg::design(Other(3)));
    assert_eq!(sim::Message::summary(&Msg::design(Other(3))), "Other(3)");
    let Msg::Design(m) = ask else { unreachable!() };
    let m = m.downcast::<Other>().expect_err("not an Other");
    assert_eq!(m.downcast::<Ticket>(), Ok(Ticket::Ask { req: 3 }));
}

#[test]
fn reports_and_step_show_a_design_message_escaped() {
    let dir = TempDir::new("design-msg");
    let file = dir.path().join("ticket-contended.toml");
    std::fs::write(&file, contended().toml()).unwrap();
    let (file, out) = (file.display().to_string(), dir.arg("out"));
    let fencesim = |args: &[&str]| {
        let argv = std::iter::once("fencesim").chain(args.iter().copied());
        fencesim::cli::run_args(&registry(), argv)
    };
    assert_eq!(fencesim(&["step", &file]), Status::Ok);
    assert_eq!(fencesim(&["report", &file, "--out", &out]), Status::Ok);
    let read = |ext: &str| {
        let path = dir.path().join(format!("out/ticket-contended.{ext}"));
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    };
    let html = read("html");
    assert!(html.contains("ask &lt;ticket&gt; req=1"), "{html}");
    assert!(!html.contains("<ticket>"), "raw in the HTML page");
    // Markdown: escaped in the table and the Mermaid diagram; the lanes are
    // a code block, where text shows as it is.
    let md = read("md");
    assert!(
        md.contains("| → lock: ask &lt;ticket&gt; req=1 |"),
        "the step table:\n{md}"
    );
    assert!(
        md.contains("->>n2: ask #lt;ticket#gt; req=1"),
        "Mermaid:\n{md}"
    );
    let run = contended().run(1);
    let steps = fencesim::report::step::steps(&run.result.journal, &run.report);
    let phrases: Vec<&str> = steps.iter().map(|s| s.phrase.as_str()).collect();
    assert!(
        phrases.iter().any(|p| p.contains("ask <ticket> req=1")),
        "{phrases:?}"
    );
}

#[test]
fn a_client_protocol_journals_its_own_decisions_and_the_reports_show_them() {
    let run = contended().assert_seed(1);
    let journal = &run.result.journal;
    let heard: Vec<&sim::journal::Event> = journal
        .events()
        .iter()
        .filter(|e| e.kind == "heard_busy")
        .collect();
    // client2 polls while client1 works: busy at each of its asks.
    assert!(!heard.is_empty());
    assert!(heard.iter().all(|e| e.node == "client2"), "{heard:?}");
    assert_eq!(heard[0].u64("req"), Some(1));
    // The oracle reads past it: the same verdict and counts, nothing
    // untrusted; the workload still journals the denial itself.
    assert_eq!(run.report.verdict, Verdict::Safe);
    assert!(
        run.report.untrusted.is_empty(),
        "{:?}",
        run.report.untrusted
    );
    let at = heard[0].seq as usize;
    assert_eq!(journal.events()[at + 1].kind, "denied");
    // The lanes and the step sentences show it in its own words.
    assert_eq!(
        fencesim::report::describe(heard[0]),
        "heard_busy req=1 retry=later"
    );
    let steps = fencesim::report::step::steps(journal, &run.report);
    assert!(
        steps
            .iter()
            .any(|s| s.node == "client2" && s.phrase.contains("heard_busy req=1 retry=later")),
        "{:?}",
        steps.iter().map(|s| &s.phrase).collect::<Vec<_>>()
    );
}
