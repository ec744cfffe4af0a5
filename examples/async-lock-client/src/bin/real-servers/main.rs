//! Figure 9-6 against a real etcd, Redis or PostgreSQL: the leaders of
//! `lead_etcd`, `lead_redis` and `lead_sql`, on tokio and the production
//! adapters of `fencesim-env`, each in a process of its own.
//!
//! ```text
//! real-servers etcd     http://127.0.0.1:2379                    fenced|unfenced
//! real-servers redis    redis://127.0.0.1:6379/                  fenced|unfenced
//! real-servers postgres "host=127.0.0.1 port=5432 user=postgres"  fenced|unfenced
//! ```
//!
//! Leader 1 takes the lock (a 2 s lease), writes 11, checks its lease
//! again and starts the 1 s of work before its second write: it is
//! stopped there (SIGSTOP) while leader 2 takes the lock once the lease has
//! run out on the server, and writes 21 and 22. Leader 1 is then resumed
//! (SIGCONT) and writes 12 with its older token. Fenced (the writes carry
//! the token, and the storage checks it: a Lua compare, an etcd
//! transaction, `AND lock_token <= :token`), the real server refuses it
//! and x stays 22; unfenced, it is applied and x ends 12, the stale write.
//! The exit status is 0 when the outcome is the one expected, 1 when it is
//! not, 2 when the run could not be made.
//!
//! `real-servers <service> <address> errors [PID]` checks the adapters'
//! error cases on the real server instead (see `errors.rs`).

mod errors;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, ExitCode, Stdio};
use std::rc::Rc;
use std::time::{Duration, Instant};

use async_lock_client::{lead_etcd, lead_redis, lead_sql, Fence, Leadership, Led};
use fencesim_env::etcd::{EtcdClient, EtcdStorage};
use fencesim_env::postgres::{PgLock, PgSql};
use fencesim_env::redis::{RedisLock, RedisStorage};
use fencesim_env::{
    Elapsed, Env, Etcd, EtcdError, Lease, LockError, LockService, Probe, Sql, SqlError, SqlUpdate,
    Storage, StorageError, TokioEnv,
};

/// The lease's TTL, and the work between a check and a write.
const TTL: Duration = Duration::from_secs(2);
const WORK: Duration = Duration::from_secs(1);
/// How long each request waits for its answer.
const TIMEOUT: Duration = Duration::from_secs(1);
/// The key written, and the lock's name.
const KEY: &str = "x";
const LOCK: &str = "lock";
/// The PostgreSQL statements: with the fence, and without.
const FENCED_UPDATE: &str =
    "UPDATE kv SET value = :value, lock_token = :token WHERE key = :key AND lock_token <= :token";
const UNFENCED_UPDATE: &str = "UPDATE kv SET value = :value WHERE key = :key";

#[derive(Clone, Copy, PartialEq, Eq)]
enum Service {
    Etcd,
    Redis,
    Postgres,
}

impl Service {
    fn parse(word: &str) -> Option<Service> {
        match word {
            "etcd" => Some(Service::Etcd),
            "redis" => Some(Service::Redis),
            "postgres" => Some(Service::Postgres),
            _ => None,
        }
    }

    fn fence(self, fence: Fence) -> &'static str {
        match (self, fence) {
            (_, Fence::None) => "no token on the writes, nothing checked",
            (Service::Etcd, Fence::Token) => {
                "the lock key's revision on each write, checked by an etcd transaction"
            }
            (Service::Redis, Fence::Token) => {
                "the lock's INCR token on each write, checked by a Lua compare"
            }
            (Service::Postgres, Fence::Token) => {
                "the lease's token bound in the UPDATE, checked by `AND lock_token <= :token`"
            }
        }
    }
}

fn parse_fence(word: &str) -> Option<Fence> {
    match word {
        "fenced" => Some(Fence::Token),
        "unfenced" => Some(Fence::None),
        _ => None,
    }
}

const USAGE: &str =
    "usage: real-servers <etcd|redis|postgres> <address> <fenced|unfenced>\n       \
                     real-servers <etcd|redis|postgres> <address> errors [SERVER_PID]\n       \
                     real-servers <etcd|redis|postgres> <address> operations";

/// `real-servers <service> <address> operations`: the seam's wider
/// operations (`async_lock_client::operations`) on the real server, the
/// same functions `tests/operations.rs` runs in fencesim.
async fn operations(service: Service, address: &str) -> Result<Vec<String>, String> {
    use async_lock_client::operations::{etcd_operations, redis_operations, sql_operations};
    reset(service, address).await?;
    let seen = match service {
        Service::Redis => {
            let mut conn = redis_connection(address).await?;
            redis::cmd("DEL")
                .arg(&["ops:counter", "ops:none", "ops:x", "ops:x:token"])
                .query_async::<()>(&mut conn)
                .await
                .map_err(|e| format!("redis DEL: {e}"))?;
            let redis = RedisLock::new(conn, TTL, TIMEOUT);
            redis_operations(&redis, "ops").await?
        }
        Service::Etcd => {
            let client = etcd_client::Client::connect([address], None)
                .await
                .map_err(|e| format!("etcd at {address}: {e}"))?;
            let mut cleaner = client.clone();
            let all = etcd_client::DeleteOptions::new().with_prefix();
            cleaner
                .delete("ops", Some(all))
                .await
                .map_err(|e| format!("etcd delete: {e}"))?;
            etcd_operations(&EtcdClient::new(client, TIMEOUT), "ops").await?
        }
        Service::Postgres => {
            let a = PgSql::new(postgres(address).await?, FENCED_UPDATE, TIMEOUT);
            let b = PgSql::new(postgres(address).await?, FENCED_UPDATE, TIMEOUT);
            sql_operations(&a, &b, KEY, 7).await?
        }
    };
    Ok(seen.lines)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let words: Vec<&str> = args.iter().map(String::as_str).collect();
    match words.as_slice() {
        ["leader", service, address, fence, first] => {
            let (Some(service), Some(fence), Ok(first)) =
                (Service::parse(service), parse_fence(fence), first.parse())
            else {
                eprintln!("real-servers leader: bad arguments {words:?}");
                return ExitCode::from(2);
            };
            block_on(leader(service, address, fence, first))
        }
        [service, address, "errors", pid @ ..] if pid.len() <= 1 => {
            let (Some(service), Ok(pid)) = (
                Service::parse(service),
                pid.first().map(|p| p.parse::<i32>()).transpose(),
            ) else {
                eprintln!("{USAGE}");
                return ExitCode::from(2);
            };
            let address = address.to_string();
            block_on(async move {
                match errors::errors(service, &address, pid).await {
                    Ok(0) => ExitCode::SUCCESS,
                    Ok(failed) => {
                        println!("{failed} of the checks failed");
                        ExitCode::from(1)
                    }
                    Err(e) => {
                        eprintln!("real-servers: {e}");
                        ExitCode::from(2)
                    }
                }
            })
        }
        [service, address, "operations"] => {
            let Some(service) = Service::parse(service) else {
                eprintln!("{USAGE}");
                return ExitCode::from(2);
            };
            let address = address.to_string();
            block_on(async move {
                match operations(service, &address).await {
                    Ok(lines) => {
                        for line in lines {
                            println!("{line}");
                        }
                        ExitCode::SUCCESS
                    }
                    Err(e) => {
                        println!("{e}");
                        ExitCode::from(1)
                    }
                }
            })
        }
        [service, address, fence] => {
            let (Some(service), Some(fence)) = (Service::parse(service), parse_fence(fence)) else {
                eprintln!("{USAGE}");
                return ExitCode::from(2);
            };
            story(service, address, fence)
        }
        _ => {
            eprintln!("{USAGE}");
            ExitCode::from(2)
        }
    }
}

fn block_on(future: impl std::future::Future<Output = ExitCode>) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("real-servers: no tokio runtime: {e}");
            return ExitCode::from(2);
        }
    };
    tokio::task::LocalSet::new().block_on(&runtime, future)
}

/// [`TokioEnv`], printing the lease checks `lead_and_write` reports (the
/// story stops leader 1 on its second).
#[derive(Clone)]
struct Printing(TokioEnv);

impl Env for Printing {
    fn now(&self) -> Duration {
        self.0.now()
    }
    fn wall_ns(&self) -> i64 {
        self.0.wall_ns()
    }
    fn sleep(&self, duration: Duration) -> impl std::future::Future<Output = ()> {
        self.0.sleep(duration)
    }
    fn timeout<F: std::future::Future>(
        &self,
        duration: Duration,
        future: F,
    ) -> impl std::future::Future<Output = Result<F::Output, Elapsed>> {
        self.0.timeout(duration, future)
    }
    fn spawn<F: std::future::Future<Output = ()> + 'static>(&self, future: F) {
        self.0.spawn(future)
    }
    fn random_u64(&self) -> u64 {
        self.0.random_u64()
    }
    fn probe(&self, probe: Probe) {
        match probe {
            Probe::Checked { remaining, .. } => {
                println!(
                    "checked: the lease has {remaining:.1?} left; working {WORK:?}, then writing"
                )
            }
            Probe::Lapsed { overdue, .. } => {
                println!("lapsed: the lease ran out {overdue:.1?} ago")
            }
            Probe::Lost => println!("lost: the lock said the lease is gone"),
            _ => {}
        }
    }
}

/// A lock service that says what it was granted and refused.
struct Announced<L>(L);

impl<L: LockService> LockService for Announced<L> {
    async fn acquire(&self) -> Result<Lease, LockError> {
        let granted = self.0.acquire().await;
        if let Ok(lease) = &granted {
            match lease.token {
                Some(token) => println!("acquired: token {token}, {:?} lease", lease.ttl),
                None => println!("acquired: no token, {:?} lease", lease.ttl),
            }
        }
        granted
    }

    async fn keep_alive(&self, lease: &Lease) -> Result<Duration, LockError> {
        let kept = self.0.keep_alive(lease).await;
        if let Err(e) = &kept {
            println!("keep-alive refused: {e}");
        }
        kept
    }

    async fn release(&self, lease: &Lease) -> Result<(), LockError> {
        self.0.release(lease).await
    }
}

/// One leader: connects, leads, says what each write came to.
async fn leader(service: Service, address: &str, fence: Fence, first: i64) -> ExitCode {
    let env = Printing(TokioEnv::new());
    let config = Leadership {
        key: KEY.to_owned(),
        writes: 2,
        first_value: first,
        work: WORK,
        retry: Duration::from_millis(200),
        fence,
    };
    let led = match service {
        Service::Redis => {
            let conn = match redis_connection(address).await {
                Ok(conn) => conn,
                Err(e) => return cannot(&e),
            };
            let lock = RedisLock::new(conn.clone(), TTL, TIMEOUT);
            let storage = RedisStorage::new(conn, TIMEOUT);
            lead_redis(&env, Announcing(lock), LOCK, &Printed(storage), &config).await
        }
        Service::Etcd => {
            let client = match etcd_client::Client::connect([address], None).await {
                Ok(client) => client,
                Err(e) => return cannot(&format!("etcd at {address}: {e}")),
            };
            let etcd = EtcdClient::new(client.clone(), TIMEOUT);
            let storage = EtcdStorage::new(client, TIMEOUT);
            let wait = Duration::from_secs(30);
            let storage = Printed(storage);
            lead_etcd(
                &env,
                AnnouncingEtcd(etcd),
                LOCK,
                TTL,
                wait,
                &storage,
                &config,
            )
            .await
        }
        Service::Postgres => {
            let (lock, db) = match (postgres(address).await, postgres(address).await) {
                (Ok(lock), Ok(db)) => (lock, db),
                (Err(e), _) | (_, Err(e)) => return cannot(&e),
            };
            let lock = Rc::new(Announced(PgLock::new(lock, LOCK, TTL, TIMEOUT)));
            let statement = match fence {
                Fence::Token => FENCED_UPDATE,
                Fence::None => UNFENCED_UPDATE,
            };
            let db = PrintedSql(PgSql::new(db, statement, TIMEOUT));
            lead_sql(&env, &lock, db, &config).await
        }
    };
    report(&led);
    ExitCode::SUCCESS
}

/// The Redis lock, saying what `SET NX PX` gave (the Redis trait's calls
/// go through [`Announced`] once `lead_redis` wraps them).
struct Announcing(RedisLock);

impl fencesim_env::Redis for Announcing {
    fn random_value(&self) -> u64 {
        self.0.random_value()
    }
    async fn set_nx_px(
        &self,
        key: &str,
        value: u64,
    ) -> Result<Option<fencesim_env::RedisSet>, fencesim_env::RedisError> {
        let set = self.0.set_nx_px(key, value).await;
        if let Ok(Some(set)) = &set {
            match set.token {
                Some(token) => println!("acquired: token {token}, {:?} lease", set.ttl),
                None => println!("acquired: no token, {:?} lease", set.ttl),
            }
        }
        set
    }
    async fn pexpire_if_eq(&self, key: &str, value: u64) -> Result<bool, fencesim_env::RedisError> {
        let kept = self.0.pexpire_if_eq(key, value).await;
        if let Ok(false) = kept {
            println!("keep-alive refused: the key no longer holds this leader's value");
        }
        kept
    }
    async fn del_if_eq(&self, key: &str, value: u64) -> Result<(), fencesim_env::RedisError> {
        self.0.del_if_eq(key, value).await
    }

    async fn incr_by(&self, key: &str, delta: i64) -> Result<i64, fencesim_env::RedisError> {
        self.0.incr_by(key, delta).await
    }

    async fn get_i64(&self, key: &str) -> Result<Option<i64>, fencesim_env::RedisError> {
        self.0.get_i64(key).await
    }

    async fn set_if_token(
        &self,
        key: &str,
        value: i64,
        token: u64,
    ) -> Result<bool, fencesim_env::RedisError> {
        self.0.set_if_token(key, value, token).await
    }
}

/// The etcd client, saying which lock key it was granted.
struct AnnouncingEtcd(EtcdClient);

impl Etcd for AnnouncingEtcd {
    async fn lease_grant(&self, ttl: Duration) -> Result<fencesim_env::EtcdLease, EtcdError> {
        self.0.lease_grant(ttl).await
    }
    async fn lease_keep_alive(&self, lease: i64) -> Result<Duration, EtcdError> {
        let kept = self.0.lease_keep_alive(lease).await;
        if let Err(e) = &kept {
            println!("keep-alive refused: {e}");
        }
        kept
    }
    async fn lock(&self, name: &str, lease: i64) -> Result<fencesim_env::EtcdLock, EtcdError> {
        let lock = self.0.lock(name, lease).await;
        if let Ok(lock) = &lock {
            println!(
                "acquired: lock key {} on lease {lease:x}, revision {} (the token)",
                String::from_utf8_lossy(&lock.key),
                lock.revision
            );
        }
        lock
    }
    async fn unlock(&self, lock: &fencesim_env::EtcdLock) -> Result<(), EtcdError> {
        self.0.unlock(lock).await
    }
    async fn lease_revoke(&self, lease: i64) -> Result<(), EtcdError> {
        self.0.lease_revoke(lease).await
    }

    async fn txn(
        &self,
        txn: &fencesim_env::EtcdTxn,
    ) -> Result<fencesim_env::EtcdTxnResponse, EtcdError> {
        self.0.txn(txn).await
    }
}

fn with_token(token: Option<u64>) -> String {
    token.map_or("no token".to_owned(), |t| format!("token {t}"))
}

/// A storage that says what each write came to, as it comes.
struct Printed<S>(S);

impl<S: Storage> Storage for Printed<S> {
    async fn put(&self, key: &str, value: i64, token: Option<u64>) -> Result<(), StorageError> {
        let answer = self.0.put(key, value, token).await;
        let token = with_token(token);
        match &answer {
            Ok(()) => println!("write {value} with {token}: applied"),
            Err(StorageError::Rejected(why)) => {
                println!("write {value} with {token}: refused ({why})")
            }
            Err(StorageError::Unavailable) => println!("write {value} with {token}: unanswered"),
        }
        answer
    }

    async fn get(&self, key: &str) -> Result<(i64, u64), StorageError> {
        self.0.get(key).await
    }
}

/// A SQL database that says what each update came to, as it comes.
struct PrintedSql<D>(D);

impl<D: Sql> Sql for PrintedSql<D> {
    type Transaction<'a>
        = D::Transaction<'a>
    where
        Self: 'a;

    async fn execute(&self, update: &SqlUpdate) -> Result<u64, SqlError> {
        let answer = self.0.execute(update).await;
        let (value, token) = (update.value, with_token(update.token));
        match &answer {
            Ok(0) => println!("write {value} with {token}: refused (the UPDATE changed no row)"),
            Ok(_) => println!("write {value} with {token}: applied"),
            Err(SqlError::Timeout) => println!("write {value} with {token}: unanswered"),
            Err(e) => println!("write {value} with {token}: refused ({e})"),
        }
        answer
    }

    async fn fetch_value(&self, key: &str) -> Result<(i64, u64), SqlError> {
        self.0.fetch_value(key).await
    }

    async fn begin(&self) -> Result<D::Transaction<'_>, SqlError> {
        self.0.begin().await
    }

    async fn advisory_lock(&self, key: i64) -> Result<(), SqlError> {
        self.0.advisory_lock(key).await
    }

    async fn try_advisory_lock(&self, key: i64) -> Result<bool, SqlError> {
        self.0.try_advisory_lock(key).await
    }

    async fn advisory_unlock(&self, key: i64) -> Result<bool, SqlError> {
        self.0.advisory_unlock(key).await
    }
}

fn report(led: &Led) {
    if led.gave_up {
        println!("gave up before its last write");
    }
}

fn cannot(why: &str) -> ExitCode {
    eprintln!("real-servers: cannot connect: {why}");
    ExitCode::from(2)
}

async fn redis_connection(address: &str) -> Result<redis::aio::MultiplexedConnection, String> {
    let client = redis::Client::open(address).map_err(|e| format!("redis at {address}: {e}"))?;
    client
        .get_multiplexed_tokio_connection()
        .await
        .map_err(|e| format!("redis at {address}: {e}"))
}

async fn postgres(address: &str) -> Result<tokio_postgres::Client, String> {
    let (client, connection) = tokio_postgres::connect(address, tokio_postgres::NoTls)
        .await
        .map_err(|e| format!("postgres at {address:?}: {e}"))?;
    tokio::task::spawn_local(async move {
        if let Err(e) = connection.await {
            eprintln!("real-servers: the PostgreSQL connection ended: {e}");
        }
    });
    Ok(client)
}

/// Empties what a previous run left (the lock, its counter, the key) and
/// creates PostgreSQL's tables.
async fn reset(service: Service, address: &str) -> Result<(), String> {
    match service {
        Service::Redis => {
            let mut conn = redis_connection(address).await?;
            redis::cmd("DEL")
                .arg(&[LOCK, "lock:token", KEY, "x:token", "x:version"])
                .query_async::<()>(&mut conn)
                .await
                .map_err(|e| format!("redis DEL: {e}"))
        }
        Service::Etcd => {
            let mut client = etcd_client::Client::connect([address], None)
                .await
                .map_err(|e| format!("etcd at {address}: {e}"))?;
            for prefix in [LOCK, KEY] {
                let all = etcd_client::DeleteOptions::new().with_prefix();
                client
                    .delete(prefix, Some(all))
                    .await
                    .map_err(|e| format!("etcd delete: {e}"))?;
            }
            Ok(())
        }
        Service::Postgres => {
            let (lock, db) = (postgres(address).await?, postgres(address).await?);
            db.batch_execute("DROP TABLE IF EXISTS kv, locks")
                .await
                .map_err(|e| format!("postgres: {e}"))?;
            let lock = PgLock::new(lock, LOCK, TTL, TIMEOUT);
            let db = PgSql::new(db, FENCED_UPDATE, TIMEOUT);
            lock.create_table().await.map_err(|e| e.to_string())?;
            db.create_table().await.map_err(|e| e.to_string())
        }
    }
}

/// The key's value and version, read through the service's storage.
async fn read(service: Service, address: &str) -> Result<(i64, u64), String> {
    match service {
        Service::Redis => RedisStorage::new(redis_connection(address).await?, TIMEOUT)
            .get(KEY)
            .await
            .map_err(|e| e.to_string()),
        Service::Etcd => {
            let client = etcd_client::Client::connect([address], None)
                .await
                .map_err(|e| format!("etcd at {address}: {e}"))?;
            EtcdStorage::new(client, TIMEOUT)
                .get(KEY)
                .await
                .map_err(|e| e.to_string())
        }
        Service::Postgres => PgSql::new(postgres(address).await?, FENCED_UPDATE, TIMEOUT)
            .fetch_value(KEY)
            .await
            .map_err(|e| e.to_string()),
    }
}

/// A leader process: `real-servers leader <service> <address> <fence> <first value>`.
fn spawn_leader(
    service: &str,
    address: &str,
    fence: &str,
    first: i64,
) -> Result<(Child, BufReader<std::process::ChildStdout>), String> {
    let exe = std::env::current_exe().map_err(|e| format!("this program's path: {e}"))?;
    let mut child = Command::new(exe)
        .args(["leader", service, address, fence, &first.to_string()])
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("a leader process: {e}"))?;
    let out = child.stdout.take().ok_or("the leader's output")?;
    Ok((child, BufReader::new(out)))
}

fn signal(child: &Child, signal: libc::c_int) -> Result<(), String> {
    let pid = libc::pid_t::try_from(child.id()).map_err(|_| "a pid out of range")?;
    // SAFETY: kill(2) on our own child's pid, which has not been waited for.
    if unsafe { libc::kill(pid, signal) } == 0 {
        Ok(())
    } else {
        Err(format!("kill: {}", std::io::Error::last_os_error()))
    }
}

/// What a leader printed, echoed as `leader N: …`.
fn echo(n: u32, line: &str, lines: &mut Vec<String>) {
    println!("leader {n}: {line}");
    lines.push(line.to_owned());
}

fn story(service: Service, address: &str, fence: Fence) -> ExitCode {
    match run_story(service, address, fence) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("real-servers: {e}");
            ExitCode::from(2)
        }
    }
}

fn run_story(service: Service, address: &str, fence: Fence) -> Result<bool, String> {
    let (name, fence_word) = (
        match service {
            Service::Etcd => "etcd",
            Service::Redis => "redis",
            Service::Postgres => "postgres",
        },
        match fence {
            Fence::Token => "fenced",
            Fence::None => "unfenced",
        },
    );
    println!("{name}, {fence_word}: {}", service.fence(fence));
    let setup = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("no tokio runtime: {e}"))?;
    let local = tokio::task::LocalSet::new();
    local.block_on(&setup, reset(service, address))?;

    let (mut first, mut first_out) = spawn_leader(name, address, fence_word, 11)?;
    let mut lines1 = Vec::new();
    let mut checks = 0;
    let mut line = String::new();
    while checks < 2 {
        line.clear();
        if first_out.read_line(&mut line).map_err(|e| e.to_string())? == 0 {
            let _ = first.wait();
            return Err("leader 1 ended before its second check".into());
        }
        echo(1, line.trim_end(), &mut lines1);
        if line.starts_with("checked") {
            checks += 1;
        }
    }
    signal(&first, libc::SIGSTOP)?;
    let stopped = Instant::now();
    println!("leader 1 stopped (SIGSTOP) in the work before its second write");

    let (mut second, second_out) = spawn_leader(name, address, fence_word, 21)?;
    let mut lines2 = Vec::new();
    for line in second_out.lines() {
        echo(2, &line.map_err(|e| e.to_string())?, &mut lines2);
    }
    let status = second.wait().map_err(|e| e.to_string())?;
    if !status.success() {
        let _ = signal(&first, libc::SIGCONT);
        let _ = first.kill();
        return Err(format!("leader 2 exited with {status}"));
    }
    println!(
        "leader 1 resumed (SIGCONT) after {:.1?} stopped, past its {TTL:?} lease",
        stopped.elapsed()
    );
    signal(&first, libc::SIGCONT)?;
    for line in first_out.lines() {
        echo(1, &line.map_err(|e| e.to_string())?, &mut lines1);
    }
    let status = first.wait().map_err(|e| e.to_string())?;
    if !status.success() {
        return Err(format!("leader 1 exited with {status}"));
    }

    let (value, version) = local.block_on(&setup, read(service, address))?;
    println!("{name}: x = {value} after {version} writes applied");
    let took_over = lines2
        .iter()
        .any(|l| l.starts_with("write 21") && l.ends_with("applied"))
        && lines2
            .iter()
            .any(|l| l.starts_with("write 22") && l.ends_with("applied"));
    let zombie = lines1.iter().find(|l| l.starts_with("write 12 "));
    let expected = match fence {
        Fence::Token => took_over && zombie.is_some_and(|l| l.contains(": refused")) && value == 22,
        Fence::None => took_over && zombie.is_some_and(|l| l.ends_with(": applied")) && value == 12,
    };
    match (expected, fence) {
        (true, Fence::Token) => {
            println!("{name}, fenced: leader 1's stale write was refused by the fence; x = 22, leader 2's")
        }
        (true, Fence::None) => println!(
            "{name}, unfenced: leader 1's stale write was accepted after leader 2's; x = 12, a stale write"
        ),
        (false, _) => println!(
            "{name}, {fence_word}: NOT the expected outcome (leader 2 wrote 21 and 22: {took_over}; \
             leader 1's late write: {}; x = {value})",
            zombie.map_or("not made", String::as_str)
        ),
    }
    Ok(expected)
}
