//! The lock's whole scope within a file: a lock made in a constructor or a
//! field and taken in a method, the write in a helper of the same file,
//! the work in a function handed to the lock; and a lock taken on the name
//! it is held in is one finding, not two.

use fencesim::audit::{self, Finding, Language, Unfollowed};

use crate::crate_root;

/// The held-out tree, as a path relative to the crate root.
const HELDOUT: &str = "tests/fixtures/audit-heldout";

fn heldout(file: &str, language: Language) -> Vec<Finding> {
    let path = format!("{HELDOUT}/{file}");
    let text = std::fs::read_to_string(crate_root().join(&path)).expect("a held-out fixture");
    audit::audit_source(&path, language, &text)
}

/// The finding at `line`, with its kind and verdict.
fn at(findings: &[Finding], line: usize) -> &Finding {
    findings
        .iter()
        .find(|f| f.line == line)
        .unwrap_or_else(|| panic!("no finding at line {line}: {findings:#?}"))
}

/// The shapes of a polyglot tree the audit once got 3 of 7 right: each
/// comes out with its kind and `fenced` value, and says where the work is.
#[test]
fn the_seven_shapes_of_a_polyglot_tree_come_out_right() {
    // go-redis SetNX in a nightly job: no token, whatever the write.
    let go = heldout("go/nightly/rollup.go", Language::Go);
    let f = at(&go, 29);
    assert_eq!((f.kind.name(), f.fenced), ("redis_set_nx", Some(false)));
    assert!(
        f.reason
            .contains("the write is in `writeTotals`, called at line 38"),
        "{}",
        f.reason
    );
    assert_eq!(f.write_line, Some(43));

    // Curator's InterProcessMutex in a field, acquired in a method.
    let java = heldout("java/com/acme/stock/Compactor.java", Language::Java);
    let f = at(&java, 20);
    assert_eq!((f.kind.name(), f.fenced), ("zookeeper_lock", Some(false)));
    assert!(
        f.reason
            .contains("held in `mutex` and taken at line 25 by `mutex.acquire`")
            && f.reason.contains("`mergeSegments`"),
        "{}",
        f.reason
    );
    assert_eq!(java.len(), 1, "{java:#?}");

    // Hazelcast FencedLock through a CPSubsystem variable, in a field; the
    // fence reaches the UPDATE's check in the method that takes it.
    let java = heldout("java/com/acme/stock/Restocker.java", Language::Java);
    let f = at(&java, 20);
    assert_eq!(
        (f.kind.name(), f.fenced),
        ("hazelcast_fenced_lock", Some(true))
    );
    assert!(
        f.reason
            .contains("taken at line 25 by `lock.lockAndGetFence`"),
        "{}",
        f.reason
    );
    // A lock handed in, taken by `tryLockAndGetFence`: found there.
    let f = at(&java, 36);
    assert_eq!(
        (f.kind.name(), f.fenced),
        ("hazelcast_fenced_lock", Some(false))
    );
    assert_eq!(
        java.len(),
        2,
        "the lockAndGetFence on the field is no second lock"
    );

    // redis-py's r.lock(...) with a computed name, the write in a helper.
    let py = heldout("python/tasks/complete.py", Language::Python);
    let f = at(&py, 26);
    assert_eq!((f.kind.name(), f.fenced), ("redis_set_nx", Some(false)));
    assert!(f.reason.contains("`_record`"), "{}", f.reason);
    assert_eq!(at(&py, 36).kind.name(), "redis_set_nx");
    assert_eq!(py.len(), 2, "{py:#?}");

    // Rust (etcd-client, the put under a create-revision compare),
    // TypeScript (node-redlock's `using`, the work in its routine), SQL.
    let rust = heldout("rust/src/lib.rs", Language::Rust);
    let f = at(&rust, 12);
    assert_eq!((f.kind.name(), f.fenced), ("etcd_lock", Some(true)));
    let ts = heldout("typescript/jobs.ts", Language::TypeScript);
    let f = at(&ts, 13);
    assert_eq!((f.kind.name(), f.fenced), ("redlock", Some(false)));
    assert!(
        f.reason.contains("function handed to the lock"),
        "{}",
        f.reason
    );
    assert_eq!(f.write_line, Some(14));
    let sql = heldout("sql/nightly.sql", Language::Sql);
    assert_eq!(
        sql.iter().map(|f| (f.line, f.fenced)).collect::<Vec<_>>(),
        // The transaction's lock, then its INSERT in that transaction:
        // held by the storage itself.
        [(6, Some(false)), (15, Some(true))]
    );
    assert!(
        sql[1].reason.starts_with("held by the storage itself"),
        "{}",
        sql[1].reason
    );
}

#[test]
fn an_etcd_mutex_made_in_a_constructor_is_judged_where_it_is_locked() {
    let go = heldout("go/nightly/reconcile.go", Language::Go);
    let f = at(&go, 24);
    assert_eq!((f.kind.name(), f.fenced), ("etcd_lock", Some(true)));
    assert!(
        f.reason.contains("checks `IsOwner`")
            && f.reason.contains("taken at line 32 by `r.mu.Lock`"),
        "{}",
        f.reason
    );
}

#[test]
fn a_callback_that_calls_a_helper_of_the_file_is_followed_to_any_depth() {
    let go = heldout("go/nightly/leader.go", Language::Go);
    let f = at(&go, 16);
    assert_eq!((f.kind.name(), f.fenced), ("kubernetes_lease", Some(false)));
    assert!(
        f.reason
            .contains("handed to the lock; the write is in `schedule`, called at line 22"),
        "{}",
        f.reason
    );
    // A helper of the helper is followed too, and says through what.
    let code = "package x\n\nimport \"k8s.io/client-go/tools/leaderelection\"\n\nfunc Run(ctx context.Context, cfg leaderelection.LeaderElectionConfig) {\n\tleaderelection.RunOrDie(ctx, cfg)\n\tfirst(ctx)\n}\n\nfunc first(ctx context.Context) {\n\tsecond(ctx)\n}\n\nfunc second(ctx context.Context) {\n\tdb.ExecContext(ctx, \"UPDATE t SET v = 1\")\n}\n";
    let findings = audit::audit_source("run.go", Language::Go, code);
    assert_eq!(findings.len(), 1);
    assert_eq!(
        (findings[0].fenced, findings[0].write_line),
        (Some(false), Some(15)),
        "{}",
        findings[0].reason
    );
    assert!(
        findings[0]
            .reason
            .contains("the write is in `second`, called at line 11, through `first` at line 7"),
        "{}",
        findings[0].reason
    );
}

#[test]
fn a_fence_asked_of_a_local_lock_is_the_same_finding() {
    let code = r#"
import com.hazelcast.core.HazelcastInstance;

class Ledger {
    void post(HazelcastInstance hz, Jdbc jdbc, String account) {
        FencedLock lock = hz.getCPSubsystem().getLock("ledger:" + account);
        long fence = lock.lockAndGetFence();
        jdbc.update("UPDATE balances SET fence = ? WHERE account = ? AND fence < ?", fence, account, fence);
    }

    void handedIn(FencedLock other, Jdbc jdbc) {
        long fence = other.lockAndGetFence();
        jdbc.update("UPDATE balances SET v = 1 WHERE id = 1");
    }
}
"#;
    let findings = audit::audit_source("Ledger.java", Language::Java, code);
    let rows: Vec<(usize, &str, Option<bool>)> = findings
        .iter()
        .map(|f| (f.line, f.kind.name(), f.fenced))
        .collect();
    assert_eq!(
        rows,
        [
            (6, "hazelcast_fenced_lock", Some(true)),
            (12, "hazelcast_fenced_lock", Some(false))
        ]
    );
}

#[test]
fn a_field_never_taken_says_so_no_more_than_before() {
    // Made in a constructor and taken nowhere in the file: no write in
    // sight, and the reason is the usual one.
    let code = "import com.hazelcast.core.HazelcastInstance;\n\nclass A {\n    private final FencedLock lock;\n    A(HazelcastInstance hz) {\n        this.lock = hz.getCPSubsystem().getLock(\"a\");\n    }\n    FencedLock lock() { return lock; }\n}\n";
    let findings = audit::audit_source("A.java", Language::Java, code);
    assert_eq!(findings.len(), 1);
    assert_eq!(findings[0].fenced, None);
    assert_eq!(
        findings[0].reason,
        "no write follows in this function: the protected work happens elsewhere"
    );
}

#[test]
fn options_built_in_a_variable_ask_for_nx() {
    let rust = "use redis::{Commands, ExistenceCheck, SetOptions};\n\nfn f(con: &mut redis::Connection) {\n    let opts = SetOptions::default().conditional_set(ExistenceCheck::NX);\n    let _: bool = con.set_options(\"k\", 1, opts).unwrap();\n}\n";
    let findings = audit::audit_source("a.rs", Language::Rust, rust);
    assert_eq!(
        findings
            .iter()
            .map(|f| (f.line, f.kind.name(), f.fenced))
            .collect::<Vec<_>>(),
        [(5, "redis_set_nx", Some(false))]
    );
    let go = "package x\n\nimport \"github.com/redis/go-redis/v9\"\n\nfunc f(ctx context.Context, rdb *redis.Client, db *sql.DB) {\n\targs := redis.SetArgs{Mode: \"NX\", TTL: ttl}\n\tif rdb.SetArgs(ctx, \"k\", \"v\", args).Err() == nil {\n\t\tdb.ExecContext(ctx, \"UPDATE t SET v = 1\")\n\t}\n}\n";
    let findings = audit::audit_source("a.go", Language::Go, go);
    assert_eq!(
        findings
            .iter()
            .map(|f| (f.line, f.kind.name(), f.fenced))
            .collect::<Vec<_>>(),
        [(7, "redis_set_nx", Some(false))],
        "the options are the call's, not a second lock"
    );
    let js = "const redis = require(\"redis\");\nasync function f(client) {\n  const opts = { NX: true, PX: 1000 };\n  await client.set(\"k\", \"v\", opts);\n}\n";
    assert_eq!(
        audit::audit_source("a.js", Language::JavaScript, js).len(),
        1
    );
    // Options without NX are a plain SET.
    let plain = "const redis = require(\"redis\");\nasync function f(client) {\n  const opts = { PX: 1000 };\n  await client.set(\"k\", \"v\", opts);\n}\n";
    assert_eq!(audit::audit_source("a.js", Language::JavaScript, plain), []);
}

#[test]
fn a_message_naming_an_advisory_lock_is_no_query() {
    let js = "async function f(client) {\n  console.log(\"pg_advisory_lock(42) is not used here\");\n  await client.query(\"SELECT pg_try_advisory_lock($1)\", [7]);\n}\n";
    let findings = audit::audit_source("a.js", Language::JavaScript, js);
    assert_eq!(
        findings.iter().map(|f| f.line).collect::<Vec<_>>(),
        [3],
        "{findings:#?}"
    );
}

#[test]
fn shedlock_without_the_annotation_judges_the_task_handed_to_it() {
    let java = "import net.javacrumbs.shedlock.core.LockingTaskExecutor;\n\nclass A {\n    void f(LockingTaskExecutor executor, Jdbc jdbc) {\n        executor.executeWithLock((Runnable) () -> jdbc.update(\"DELETE FROM t\"), config);\n    }\n}\n";
    let findings = audit::audit_source("A.java", Language::Java, java);
    assert_eq!(findings.len(), 1);
    assert_eq!(
        (
            findings[0].kind.name(),
            findings[0].fenced,
            findings[0].write_line
        ),
        ("shedlock", Some(false), Some(5))
    );
    assert!(
        findings[0].reason.contains("handed to the lock"),
        "{}",
        findings[0].reason
    );
}

/// The fixture tree, as a path relative to the crate root.
fn fixture(file: &str, language: Language) -> Vec<Finding> {
    let path = format!("{}/{file}", crate::FIXTURES);
    let text = std::fs::read_to_string(crate_root().join(&path)).expect("a fixture");
    audit::audit_source(&path, language, &text)
}

/// `(line, call, why)` of a finding's `unfollowed`.
fn unfollowed(f: &Finding) -> Vec<(usize, &str, &str)> {
    f.unfollowed
        .iter()
        .map(|u| (u.line, u.call.as_str(), u.why))
        .collect()
}

/// A verdict that is not `false` says what it could not follow: a call of
/// another package; the helpers of the file are followed, however deep.
#[test]
fn a_fenced_verdict_names_the_calls_it_could_not_follow() {
    let go = fixture("go/publish.go", Language::Go);
    let f = at(&go, 23);
    assert_eq!((f.kind.name(), f.fenced), ("etcd_lock", Some(true)));
    assert_eq!(
        unfollowed(f),
        [(28, "p.feeds.Refresh", Unfollowed::THROUGH_FIELD)],
        "the deferred Unlock and the mutex's own Lock are the lock's: {f:#?}"
    );
    assert!(
        f.reason
            .contains("the write is in `commit`, called at line 29")
            && f.reason.contains(
                "could not follow `p.feeds.Refresh` at line 28 (through a field: its target \
                 is not in sight))"
            ),
        "{}",
        f.reason
    );
    // An unfenced verdict needs nothing more: nothing unseen can fence it.
    let f = at(&go, 47);
    assert_eq!((f.kind.name(), f.fenced), ("redis_set_nx", Some(false)));
    assert!(f.unfollowed.is_empty(), "{f:#?}");

    let py = fixture("python/decorated.py", Language::Python);
    // The decorated function is the decorator's lock's scope: the DELETE
    // in the next function is not under it.
    let f = at(&py, 28);
    assert_eq!((f.kind.name(), f.fenced), ("etcd_lock", None));
    assert_eq!(
        unfollowed(f),
        [(31, "publish_report", Unfollowed::ELSEWHERE)]
    );
    // A function of the file is followed even when the scope writes: the
    // one it calls here only prints, so nothing is left unseen.
    let f = at(&py, 39);
    assert_eq!((f.kind.name(), f.fenced), ("etcd_lock", Some(true)));
    assert_eq!(unfollowed(f), []);
    assert_eq!(py.len(), 2, "the docstring's SET NX is prose: {py:#?}");
}

/// Closures and lambdas are scopes of their own: a lock taken in one is
/// judged by the writes in it, not by those after it in the function.
#[test]
fn a_lock_in_a_lambda_or_an_anonymous_class_is_judged_in_it() {
    let java = fixture("java/com/acme/export/Exporter.java", Language::Java);
    let f = at(&java, 27);
    assert_eq!(
        (f.kind.name(), f.fenced, f.write_line),
        ("redisson_fenced_lock", Some(false), Some(30))
    );
    let f = at(&java, 44);
    assert_eq!(
        (f.kind.name(), f.fenced, f.write_line),
        ("redisson_fenced_lock", None, None),
        "the UPDATE after the lambda is not under its lock"
    );
    assert_eq!(
        unfollowed(f),
        [(46, "indexer.rebuild", Unfollowed::ELSEWHERE)]
    );

    let kt = fixture("kotlin/Invoicer.kt", Language::Kotlin);
    assert_eq!(
        kt.iter()
            .map(|f| (f.line, f.kind.name(), f.fenced, f.write_line))
            .collect::<Vec<_>>(),
        [
            (24, "redisson_lock", Some(false), Some(26)),
            (32, "redisson_fenced_lock", Some(true), Some(35)),
        ],
        "the coroutine Mutex and the multi-line string's lock are none"
    );

    let js = fixture("javascript/usage.js", Language::JavaScript);
    assert_eq!(
        js.iter().map(|f| (f.line, f.fenced)).collect::<Vec<_>>(),
        [(15, Some(false))],
        "the template literal's acquire is text"
    );
    assert!(js[0].reason.contains("the function handed to the lock"));
}

/// An async block spawned on its own is its lock's scope; a function
/// nested in the lock's is a helper of the file; a TSX file parses with
/// its JSX, and neither a raw string's nor a template's lock is code.
#[test]
fn async_blocks_nested_functions_and_tsx_are_syntax() {
    let rust = fixture("rust/src/compact.rs", Language::Rust);
    assert_eq!(
        rust.iter()
            .map(|f| (f.line, f.fenced, f.write_line))
            .collect::<Vec<_>>(),
        [(13, Some(true), Some(18)), (29, Some(true), Some(33))],
        "the runbook's raw string is text, and the put after the spawn is not under the task's lock"
    );
    assert_eq!(
        unfollowed(&rust[1]),
        [(34, "inner.txn", Unfollowed::ELSEWHERE)]
    );

    let ts = fixture("typescript/settle.ts", Language::TypeScript);
    assert_eq!(ts.len(), 1, "{ts:#?}");
    assert!(
        ts[0]
            .reason
            .contains("the write is in `write`, called at line 16"),
        "{}",
        ts[0].reason
    );

    let tsx = fixture("typescript/page.tsx", Language::TypeScript);
    assert_eq!(
        tsx.iter()
            .map(|f| (f.line, f.kind.name(), f.write_line))
            .collect::<Vec<_>>(),
        [(12, "redlock", Some(14))]
    );
}

/// A function handed over by name (`election.run(work)`) is followed like
/// a callback: its write is the one the verdict names.
#[test]
fn a_function_handed_over_by_name_is_followed() {
    let code = "from kazoo.client import KazooClient\n\n\ndef lead(zk: KazooClient, db):\n    def sweep():\n        db.execute(\"DELETE FROM leases WHERE expires_at < now()\")\n\n    election = zk.Election(\"/sweeper\", \"me\")\n    election.run(sweep)\n";
    let findings = audit::audit_source("lead.py", Language::Python, code);
    assert_eq!(findings.len(), 1, "{findings:#?}");
    let f = &findings[0];
    assert_eq!(
        (f.kind.name(), f.fenced, f.write_line),
        ("zookeeper_lock", Some(false), Some(6))
    );
}

/// Shapes that are not locks: a function of the file named like a lock
/// API, an etcd transaction's `If` after a line break, a process-local
/// lock made on a module a keyword stands before.
#[test]
fn a_function_of_the_file_a_wrapped_if_and_a_keyword_are_no_locks() {
    let go = "package x\n\nfunc lockKey(day string) int64 { return 1 }\n\nfunc Export(ctx context.Context, conn *sql.Conn, day string) {\n\tconn.ExecContext(ctx, \"SELECT pg_advisory_lock($1)\", lockKey(day))\n\tdefer conn.ExecContext(ctx, \"SELECT pg_advisory_unlock($1)\", lockKey(day))\n}\n";
    let findings = audit::audit_source("export.go", Language::Go, go);
    let kinds: Vec<(usize, &str)> = findings.iter().map(|f| (f.line, f.kind.name())).collect();
    assert_eq!(kinds, [(6, "pg_advisory_lock")]);

    let go = "package x\n\nimport clientv3 \"go.etcd.io/etcd/client/v3\"\n\nfunc Lead(ctx context.Context, cli *clientv3.Client, e *concurrency.Election, rev int64) {\n\tcli.Txn(ctx).\n\t\tIf(clientv3.Compare(clientv3.CreateRevision(e.Key()), \"=\", rev)).\n\t\tThen(clientv3.OpPut(\"/leader/state\", \"ok\")).\n\t\tCommit()\n}\n";
    let findings = audit::audit_source("lead.go", Language::Go, go);
    assert_eq!(findings, [], "an If method is no leader check");

    let py = "import asyncio\n\nfrom aioredlock import Aioredlock\n\n\nclass Worker:\n    def __init__(self):\n        self.local = asyncio.Lock()\n";
    let findings = audit::audit_source("worker.py", Language::Python, py);
    assert_eq!(findings, [], "asyncio's lock is local");
}
