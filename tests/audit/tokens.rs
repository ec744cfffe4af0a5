//! What a lock can fence: a kind whose API hands out no token is unfenced
//! whatever its writes check, and whether a write follows or not; a kind
//! that hands out a token is judged by its writes.

use std::collections::BTreeSet;

use fencesim::audit::{audit_source, Kind, Language};

use crate::{fencesim_in, TempDir};

/// The guarded write every case below makes after its lock.
const CHECKED: &str = "UPDATE t SET v = 1 WHERE id = 1 AND fence_token < 5";

/// A file taking a lock of `kind`, the line it takes it on, and with
/// `write` a write after it whose SQL is `write`.
fn case(kind: Kind, write: Option<&str>) -> (Language, String, usize) {
    let java = |field: &str, lock: &str| {
        let write = write.map_or(String::new(), |w| {
            format!("        jdbc.update(\"{w}\");\n")
        });
        format!(
            "import {field};\n\nclass Job {{\n    void run() {{\n        {lock}\n{write}    }}\n}}\n"
        )
    };
    let python = |import: &str, lock: &str| {
        let write = write.map_or(String::new(), |w| format!("    db.execute(\"{w}\")\n"));
        format!("import {import}\n\ndef run(db):\n    {lock}\n{write}")
    };
    match kind {
        Kind::RedisSetNx => (
            Language::Python,
            python("redis", "r.set('lock:k', 'me', nx=True, px=30000)"),
            4,
        ),
        Kind::Redlock => (
            Language::Python,
            python(
                "redlock",
                "dlm = Redlock([{'host': 'a'}]); dlm.lock('k', 1000)",
            ),
            4,
        ),
        Kind::RedissonLock => (
            Language::Java,
            java("org.redisson.api.RLock", "redisson.getLock(\"k\").lock();"),
            5,
        ),
        Kind::RedissonFencedLock => (
            Language::Java,
            java(
                "org.redisson.api.RFencedLock",
                "redisson.getFencedLock(\"k\").lockAndGetToken();",
            ),
            5,
        ),
        Kind::ZookeeperLock => (
            Language::Java,
            java(
                "org.apache.curator.framework.recipes.locks.InterProcessMutex",
                "new InterProcessMutex(client, \"/locks/k\").acquire();",
            ),
            5,
        ),
        Kind::HazelcastLock => (
            Language::Java,
            java(
                "com.hazelcast.core.HazelcastInstance",
                "hz.getLock(\"k\").lock();",
            ),
            5,
        ),
        Kind::HazelcastFencedLock => (
            Language::Java,
            java(
                "com.hazelcast.core.HazelcastInstance",
                "hz.getCPSubsystem().getLock(\"k\").lockAndGetFence();",
            ),
            5,
        ),
        Kind::EtcdLock => (
            Language::Python,
            python("etcd3", "etcd.lock('k').acquire()"),
            4,
        ),
        Kind::PgAdvisoryLock => {
            let write = write.map_or(String::new(), |w| format!("{w};\n"));
            (
                Language::Sql,
                format!("BEGIN;\nSELECT pg_advisory_lock(42);\n{write}COMMIT;\n"),
                2,
            )
        }
        Kind::Shedlock => {
            let write = write.map_or(String::new(), |w| {
                format!("        jdbc.update(\"{w}\");\n")
            });
            (
                Language::Java,
                format!(
                    "import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;\n\nclass Job {{\n    @SchedulerLock(name = \"job\")\n    void run() {{\n{write}    }}\n}}\n"
                ),
                4,
            )
        }
        Kind::SpringLockRegistry => (
            Language::Java,
            java(
                "org.springframework.integration.support.locks.LockRegistry",
                "registry.obtain(\"k\").lock();",
            ),
            5,
        ),
        Kind::QuartzNonconcurrentJob => {
            let write = write.map_or(String::new(), |w| {
                format!("        jdbc.update(\"{w}\");\n")
            });
            (
                Language::Java,
                format!(
                    "import org.quartz.DisallowConcurrentExecution;\n\n@DisallowConcurrentExecution\nclass Job implements org.quartz.Job {{\n    public void execute(JobExecutionContext ctx) {{\n{write}    }}\n}}\n"
                ),
                3,
            )
        }
        Kind::SherlockLock => (
            Language::Python,
            python("sherlock", "sherlock.Lock('k').acquire()"),
            4,
        ),
        Kind::ToozLock => (
            Language::Python,
            python("tooz.coordination", "coordinator.get_lock(b'k').acquire()"),
            4,
        ),
        Kind::MysqlGetLock => {
            let write = write.map_or(String::new(), |w| format!("{w};\n"));
            (
                Language::Sql,
                format!("SELECT GET_LOCK('k', 10);\n{write}SELECT RELEASE_LOCK('k');\n"),
                1,
            )
        }
        Kind::SqlserverApplock => {
            let write = write.map_or(String::new(), |w| format!("{w};\n"));
            (
                Language::Sql,
                format!("EXEC sp_getapplock @Resource = 'k', @LockMode = 'Exclusive', @LockOwner = 'Session';\n{write}EXEC sp_releaseapplock @Resource = 'k';\n"),
                1,
            )
        }
        // Not in a transaction it is seen to hold: judged as a lock.
        Kind::SelectForUpdate => (
            Language::Python,
            python(
                "psycopg",
                "db.execute(\"SELECT id FROM jobs WHERE id = 1 for update\")",
            ),
            4,
        ),
        other => panic!("no case for {}", other.name()),
    }
}

/// Kinds whose API hands out no token, and some that do (every case above).
const TOKENLESS: [Kind; 14] = [
    Kind::RedisSetNx,
    Kind::Redlock,
    Kind::RedissonLock,
    Kind::ZookeeperLock,
    Kind::HazelcastLock,
    Kind::PgAdvisoryLock,
    Kind::Shedlock,
    Kind::SpringLockRegistry,
    Kind::QuartzNonconcurrentJob,
    Kind::SherlockLock,
    Kind::ToozLock,
    Kind::MysqlGetLock,
    Kind::SqlserverApplock,
    Kind::SelectForUpdate,
];
const WITH_TOKEN: [Kind; 3] = [
    Kind::RedissonFencedLock,
    Kind::HazelcastFencedLock,
    Kind::EtcdLock,
];

fn the_finding(kind: Kind, write: Option<&str>) -> fencesim::audit::Finding {
    let (language, code, line) = case(kind, write);
    let findings = audit_source("case", language, &code);
    assert_eq!(findings.len(), 1, "{}:\n{code}\n{findings:#?}", kind.name());
    let f = findings.into_iter().next().expect("one");
    assert_eq!((f.kind, f.line), (kind, line), "{code}");
    let write_line = code
        .lines()
        .position(|l| l.contains("UPDATE"))
        .map(|i| i + 1);
    if f.fenced.is_some() {
        assert_eq!(f.write_line, write_line, "{}: {}", kind.name(), f.reason);
    }
    f
}

#[test]
fn the_tokenless_kinds_are_the_tested_ones_and_each_says_why() {
    let tokenless: BTreeSet<Kind> = Kind::ALL
        .into_iter()
        .filter(|k| k.token().is_none())
        .collect();
    assert_eq!(tokenless, TOKENLESS.into_iter().collect());
    for kind in Kind::ALL {
        assert_eq!(
            kind.token().is_none(),
            kind.no_token().is_some(),
            "{}: a kind either hands out a token or says why not",
            kind.name()
        );
    }
}

#[test]
fn a_tokenless_lock_is_unfenced_even_when_its_write_checks_a_token() {
    for kind in TOKENLESS {
        let f = the_finding(kind, Some(CHECKED));
        let why = kind.no_token().expect("token-less");
        assert_eq!(f.fenced, Some(false), "{}: {}", kind.name(), f.reason);
        assert!(
            f.reason.starts_with(why) && f.reason.contains("cannot be fenced"),
            "{}: {}",
            kind.name(),
            f.reason
        );
        assert!(
            f.text().contains(&format!(": fenced no: {why}")),
            "{}",
            f.text()
        );
        assert_eq!(f.json()["token"], serde_json::Value::Null);
    }
}

#[test]
fn a_tokenless_lock_is_unfenced_when_no_write_follows() {
    for kind in TOKENLESS {
        let f = the_finding(kind, None);
        assert_eq!(f.fenced, Some(false), "{}: {}", kind.name(), f.reason);
        assert_eq!(Some(f.reason.as_str()), kind.no_token(), "{}", kind.name());
        assert_eq!(f.write_line, None);
    }
}

#[test]
fn a_lock_that_hands_out_a_token_is_judged_by_its_writes() {
    for kind in WITH_TOKEN {
        let checked = the_finding(kind, Some(CHECKED));
        assert_eq!(
            checked.fenced,
            Some(true),
            "{}: {}",
            kind.name(),
            checked.reason
        );
        assert_eq!(checked.json()["token"], kind.token().expect("a token"));
        let blind = the_finding(kind, Some("UPDATE t SET v = 1 WHERE id = 1"));
        assert_eq!(
            blind.fenced,
            Some(false),
            "{}: {}",
            kind.name(),
            blind.reason
        );
        assert!(blind.reason.contains("checks no token"), "{}", blind.reason);
        let none = the_finding(kind, None);
        assert_eq!(none.fenced, None, "{}: {}", kind.name(), none.reason);
    }
}

#[test]
fn a_tokenless_lock_with_no_write_is_exit_1_not_4() {
    let dir = TempDir::new("tokenless");
    dir.write(
        "job.py",
        b"def run(r, work):\n    if r.set('lock:job', 'me', nx=True, px=30000):\n        work()\n",
    );
    let out = fencesim_in(dir.path(), &["audit", "job.py"]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(
        out.stdout.contains(
            ": fenced no: a SET NX lock hands out no token that a write could carry; see "
        ),
        "{}",
        out.stdout
    );
}
