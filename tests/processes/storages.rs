//! The storage clients processes use, shaped like the real crates: the
//! object-store client (`get_object`, `put_object` with `if_match`) and the
//! SQL client (`execute` → rows affected), each run on a node beside a
//! storage node, as a caller sees them.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use fencesim::design::object_store::{ObjectApi, ObjectStore};
use fencesim::design::sql::Sql;
use fencesim::design::storage::StorageNode;
use fencesim::process::object_store::{self, Client};
use fencesim::process::sql::{self, update, Pool};
use fencesim::process::Process;
use fencesim::protocol::Msg;
use sim::{Actor, Context, Limits, NodeId, WorldBuilder};

const TIMEOUT: Duration = Duration::from_secs(1);

/// Runs `client` as node `client1` beside `storage` (node `storage`) and
/// returns what it recorded, and the run's journal.
fn run_beside<A, F, Fut>(storage: impl FnOnce() -> A + Send + 'static, client: F) -> Outcome
where
    A: Actor<Msg>,
    F: Fn(fencesim::process::Handle<Msg>, Arc<Mutex<Vec<String>>>) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()> + 'static,
{
    let said = Arc::new(Mutex::new(Vec::new()));
    let out = said.clone();
    let result = sim::run(1, move || {
        let mut world = WorldBuilder::new(Limits::default());
        world.node("storage", storage());
        world.node("client1", Process::new(move |h| client(h, out.clone())));
        world
    });
    assert_eq!(result.outcome, sim::Outcome::Completed);
    let said = said.lock().unwrap().clone();
    Outcome {
        said,
        journal: result.journal,
    }
}

struct Outcome {
    said: Vec<String>,
    journal: sim::Journal,
}

impl Outcome {
    /// The journal's events of `kind` at `node`.
    fn events(&self, node: &str, kind: &str) -> Vec<&sim::Event> {
        self.journal
            .events()
            .iter()
            .filter(|e| e.is(node, kind))
            .collect()
    }
}

fn s3() -> StorageNode<ObjectStore> {
    StorageNode::new(ObjectStore::new(ObjectApi::S3))
}

#[test]
fn a_failed_precondition_is_an_error_the_caller_sees() {
    let out = run_beside(s3, |h, said| async move {
        let s3 = Client::connect(&h, "storage", ObjectApi::S3, TIMEOUT);
        let say = |what: String| said.lock().unwrap().push(what);
        say(format!("{:?}", s3.get_object("x").await));
        say(format!(
            "{:?}",
            s3.put_object("x", 1).if_none_match().send().await
        ));
        let first = s3.get_object("x").await.unwrap();
        say(format!("{} {}", first.body(), first.e_tag()));
        // A writer that read the same ETag gets there first.
        say(format!(
            "{:?}",
            s3.put_object("x", 2).if_match(first.e_tag()).send().await
        ));
        say(format!(
            "{:?}",
            s3.put_object("x", 2).if_match(first.e_tag()).send().await
        ));
        say(format!(
            "{:?}",
            s3.put_object("x", 9).if_none_match().send().await
        ));
        // A plain PUT carrying an old token: applied, metadata is not compared.
        say(format!(
            "{:?}",
            s3.put_object("x", 7).fencing_token(Some(1)).send().await
        ));
        let last = s3.get_object("x").await.unwrap();
        say(format!("{} {}", last.body(), last.e_tag().version()));
    });
    assert_eq!(
        out.said,
        [
            "Err(NoSuchKey)",
            "Ok(())",
            "1 \"9dcad46f\"",
            "Ok(())",
            "Err(PreconditionFailed)",
            "Err(PreconditionFailed)",
            "Ok(())",
            "7 3",
        ],
        "{}",
        out.journal.to_jsonl()
    );
    assert_eq!(
        object_store::Error::PreconditionFailed.to_string(),
        "412 PreconditionFailed: At least one of the pre-conditions you specified did not hold"
    );
    // The storage journaled the preconditions it checked.
    let checked: Vec<Option<&str>> = out
        .events("storage", "accepted")
        .iter()
        .map(|e| e.str("precondition"))
        .collect();
    assert_eq!(
        checked,
        [
            Some("If-None-Match: *"),
            Some("If-Match: \"9dcad46f\""),
            None
        ]
    );
}

#[test]
fn writes_are_journaled_as_the_storage_client_journals_them() {
    let out = run_beside(s3, |h, _| async move {
        let s3 = Client::connect(&h, "storage", ObjectApi::S3, TIMEOUT);
        let _ = s3
            .put_object("x", 1)
            .if_none_match()
            .fencing_token(Some(33))
            .journal_as_increment()
            .send()
            .await;
        let _ = s3.put_object("x", 5).if_none_match().send().await;
    });
    let client: Vec<String> = out
        .journal
        .events()
        .iter()
        .filter(|e| e.node == "client1" && e.kind != "send" && e.kind != "deliver")
        .map(|e| format!("{} {}", e.kind, e.fields_text()))
        .collect();
    assert_eq!(
        client,
        [
            "wrote write=client1/1 token=33 value=1 op=increment",
            "acked write=client1/1 ok=true op=increment",
            "wrote write=client1/2 value=5 op=put",
            "acked write=client1/2 ok=false op=put",
        ],
        "{}",
        out.journal.to_jsonl()
    );
}

/// A storage that answers a node's first write and first read only when
/// its second one arrives, just before answering that: a late answer that
/// arrives while the client waits for another.
#[derive(Default)]
struct Laggard {
    held: Vec<Msg>,
    writes: u32,
    reads: u32,
}

impl Actor<Msg> for Laggard {
    fn on_message(&mut self, ctx: &mut Context<'_, Msg>, from: NodeId, msg: Msg) {
        let (answer, first) = match msg {
            Msg::Write { write, .. } => {
                self.writes += 1;
                // The held answer says the first write was applied; the
                // second is refused.
                let ok = self.writes == 1;
                (Msg::WriteReply { write, ok }, ok)
            }
            Msg::Read { req, .. } => {
                self.reads += 1;
                let first = self.reads == 1;
                let (value, version) = if first { (111, 9) } else { (5, 2) };
                let reply = Msg::ReadReply {
                    req,
                    value,
                    version,
                };
                (reply, first)
            }
            _ => return,
        };
        if first {
            self.held.push(answer);
        } else {
            for late in self.held.drain(..) {
                ctx.send(from, late);
            }
            ctx.send(from, answer);
        }
    }
}

#[test]
fn a_late_answer_is_not_taken_for_another_request() {
    let out = run_beside(Laggard::default, |h, said| async move {
        let s3 = Client::connect(&h, "storage", ObjectApi::S3, TIMEOUT);
        let say = |what: String| said.lock().unwrap().push(what);
        say(format!("{:?}", s3.get_object("x").await.map(|o| o.body())));
        say(format!("{:?}", s3.get_object("x").await.map(|o| o.body())));
        say(format!(
            "{:?}",
            s3.put_object("x", 1).if_none_match().send().await
        ));
        say(format!(
            "{:?}",
            s3.put_object("x", 2).if_none_match().send().await
        ));
    });
    assert_eq!(
        out.said,
        [
            "Err(Timeout)",
            "Ok(5)",
            "Err(Timeout)",
            "Err(PreconditionFailed)"
        ],
        "{}",
        out.journal.to_jsonl()
    );
    let out = run_beside(Laggard::default, |h, said| async move {
        let db = Pool::connect(&h, "storage", TIMEOUT);
        let say = |what: String| said.lock().unwrap().push(what);
        say(format!("{:?}", db.fetch_value("x").await));
        say(format!("{:?}", db.fetch_value("x").await));
        let first = update("x").bind_value(1).bind_token(Some(3));
        say(format!("{:?}", db.execute(first).await));
        let second = update("x").bind_value(2).bind_token(Some(3));
        say(format!(
            "{:?}",
            db.execute(second).await.map(|r| r.rows_affected())
        ));
    });
    assert_eq!(
        out.said,
        [
            "Err(Timeout)",
            "Ok(Row { value: 5, version: 2 })",
            "Err(Timeout)",
            "Ok(0)"
        ],
        "{}",
        out.journal.to_jsonl()
    );
    // Only the answers waited for are journaled.
    assert_eq!(out.events("client1", "read").len(), 1);
    let acked = out.events("client1", "acked");
    assert_eq!(acked.len(), 1);
    assert_eq!(
        (acked[0].str("write"), acked[0].bool("ok")),
        (Some("client1/2"), Some(false))
    );
}

const FENCING: &str =
    "UPDATE kv SET value = :value, lock_token = :token WHERE key = :key AND lock_token <= :token";

fn sql_storage(update: &'static str) -> impl FnOnce() -> StorageNode<Sql> + Send {
    move || StorageNode::new(Sql::new(update).expect("the statement is admitted"))
}

/// `(value, token)` updates of `x` through the SQL client, then a read:
/// the rows each affected, and the row read.
fn updates(statement: &'static str, writes: &'static [(i64, u64)]) -> Vec<String> {
    run_beside(sql_storage(statement), move |h, said| async move {
        let db = Pool::connect(&h, "storage", TIMEOUT);
        for &(value, token) in writes {
            let done = db
                .execute(update("x").bind_value(value).bind_token(Some(token)))
                .await;
            said.lock()
                .unwrap()
                .push(format!("{:?}", done.map(|d| d.rows_affected())));
        }
        let row = db.fetch_value("x").await.unwrap();
        said.lock()
            .unwrap()
            .push(format!("{} {}", row.value(), row.version()));
    })
    .said
}

#[test]
fn the_fence_refusing_an_update_is_zero_rows_affected() {
    let writes = &[(1, 34), (2, 34), (3, 33)];
    assert_eq!(updates(FENCING, writes), ["Ok(1)", "Ok(1)", "Ok(0)", "2 2"]);
    // Without the token in its WHERE, the old holder's update lands.
    let plain = "UPDATE kv SET value = :value WHERE key = :key";
    assert_eq!(updates(plain, writes), ["Ok(1)", "Ok(1)", "Ok(1)", "3 3"]);
    // A statement the database fails on at run time changes no row either.
    let failing = "UPDATE kv SET value = CASE WHEN :token = 33 THEN 'text' ELSE :value END, \
                   lock_token = :token WHERE key = :key";
    assert_eq!(
        updates(failing, &[(1, 34), (3, 33)]),
        ["Ok(1)", "Ok(0)", "1 1"]
    );
    assert_eq!(sql::Error::Timeout.to_string(), "the statement timed out");
}

#[test]
fn cas_writer_is_refused_a_blind_workload_at_load() {
    use fencesim::design::catalog::Registry;
    let text = std::fs::read_to_string("scenarios/cas-writer-async-if-match.toml")
        .unwrap()
        .replace("workload = \"increment\"", "workload = \"write\"");
    let err = fencesim::scenario::load_str(&Registry::builtin(), "t.toml", &text)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("process `cas-writer` does not do workload = \"write\""),
        "{err}"
    );
}

#[test]
fn the_seams_object_store_gives_the_same_answers_through_its_own_etags() {
    use fencesim_env::{ObjectStore as Seam, PutCondition};
    let out = run_beside(s3, |h, said| async move {
        let s3 = Client::connect(&h, "storage", ObjectApi::S3, TIMEOUT);
        let say = |what: String| said.lock().unwrap().push(what);
        say(format!("{:?}", Seam::get_object(&s3, "x").await));
        let create = PutCondition::IfNoneMatch;
        say(format!(
            "{:?}",
            Seam::put_object(&s3, "x", 1, &create, Some(7)).await
        ));
        say(format!(
            "{:?}",
            Seam::put_object(&s3, "x", 2, &create, None).await
        ));
        let read = Seam::get_object(&s3, "x").await.unwrap();
        let stale = PutCondition::IfMatch(read.e_tag.clone());
        // Another write between the GET and the conditional PUT.
        let always = PutCondition::Always;
        say(format!(
            "{:?}",
            Seam::put_object(&s3, "x", 5, &always, None).await
        ));
        say(format!(
            "{:?}",
            Seam::put_object(&s3, "x", read.body + 1, &stale, None).await
        ));
        let never = PutCondition::IfMatch("\"not-an-etag-it-read\"".into());
        say(format!(
            "{:?}",
            Seam::put_object(&s3, "x", 9, &never, None).await
        ));
        let fresh = Seam::get_object(&s3, "x").await.unwrap();
        assert_ne!(read.e_tag, fresh.e_tag);
        let current = PutCondition::IfMatch(fresh.e_tag);
        say(format!(
            "{:?}",
            Seam::put_object(&s3, "x", fresh.body + 1, &current, None).await
        ));
        say(format!(
            "{:?}",
            Seam::get_object(&s3, "x").await.map(|o| o.body)
        ));
    });
    assert_eq!(
        out.said,
        [
            "Err(NotFound)",
            "Ok(())",
            "Err(PreconditionFailed)",
            "Ok(())",
            "Err(PreconditionFailed)",
            "Err(PreconditionFailed)",
            "Ok(())",
            "Ok(6)",
        ]
    );
    // The ETag it never read failed without a request: five of its six
    // PUTs reached the store.
    assert_eq!(out.events("client1", "wrote").len(), 5);
}
