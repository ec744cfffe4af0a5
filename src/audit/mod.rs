//! `fencesim audit`: before simulating, find where a code base takes
//! distributed locks and whether anything fences the writes they protect.
//!
//! A lint, not a proof. Source files (Rust, Go, Java, Kotlin, Python,
//! TypeScript, JavaScript) are parsed by their tree-sitter grammars, so
//! comments, strings, functions, closures and calls are nodes of the
//! syntax tree; SQL is lexed just enough to tell code from comments and
//! strings. Lock acquisitions are matched by the names client
//! libraries give them (Redis `SET … NX`, Redlock, Redisson, Curator and
//! ZooKeeper recipes, etcd, Hazelcast, PostgreSQL advisory locks,
//! Kubernetes leader election, the DynamoDB lock client, Consul, ShedLock,
//! Spring Integration, Quartz, MySQL, SQL Server, `FOR UPDATE`, …: the
//! catalogue is data, in [`rules`], `fencesim audit --list` prints it, and
//! a user's rule file adds to it), leader flags in an `if`, and, with low
//! confidence, lock calls on types of libraries the catalogue does not
//! know. A lock whose API hands out no token (SET
//! NX, Redlock, a Redisson `RLock`, a ZooKeeper recipe used as is, …)
//! cannot fence anything: `fenced` is false whatever its writes check.
//! Any other is judged by the writes after it in the same function:
//! `fenced` is true when every write checks a token, version or
//! precondition in its own statement, false when one checks nothing, and
//! unknown (`None`) when no write is in sight or a write carries a token to
//! a check that is elsewhere.
//!
//! When no write follows the lock in its function, the audit looks further
//! within the file, and says where in the finding's reason: in a function
//! handed to the lock (a callback, a closure); where a lock made in a
//! constructor or a field is taken (`mutex.acquire()`, `with self.lock:`
//! in another method); and in the functions of the same file that those
//! reach, however deep (helpers, methods of a nested class, functions
//! handed over by name, the closures callers hand a function that calls
//! its parameter). Logging and tracing calls are not writes; a lock that
//! hands out no token but guards only reads is unknown, and one whose own
//! metadata holds a token (a ZooKeeper lock node's `czxid`) is judged by
//! its writes. Anything else, a helper in another file or a function
//! passed in from there, is out of its sight: a verdict that is not
//! `Some(false)` names the calls it could not follow
//! ([`Finding::unfollowed`]).
//!
//! ```
//! use fencesim::audit::{audit_source, Kind, Language};
//!
//! let code = "def publish(r, db, report):\n\
//!             \x20   if r.set('lock:report', 'me', nx=True, px=30000):\n\
//!             \x20       db.execute('UPDATE reports SET body = %s WHERE id = 1', (report,))\n";
//! let findings = audit_source("jobs.py", Language::Python, code);
//! assert_eq!(findings.len(), 1);
//! assert_eq!((findings[0].line, findings[0].kind), (2, Kind::RedisSetNx));
//! assert_eq!(findings[0].fenced, Some(false));
//! assert!(findings[0].reason.starts_with("a SET NX lock hands out no token"));
//! ```

mod detect;
mod fence;
pub mod rules;
pub mod sarif;
mod source;
mod syntax;
pub mod walk;

use std::path::{Path, PathBuf};

use serde_json::json;

use fence::Guard;
pub use rules::Rules;
use source::{find_word, Literal, Source};

/// A language the audit reads, from a file's extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Language {
    /// `.rs`
    Rust,
    /// `.go`
    Go,
    /// `.java`
    Java,
    /// `.kt`, `.kts`
    Kotlin,
    /// `.py`
    Python,
    /// `.ts`, `.tsx`, `.mts`, `.cts`
    TypeScript,
    /// `.js`, `.jsx`, `.mjs`, `.cjs`
    JavaScript,
    /// `.sql`
    Sql,
}

impl Language {
    /// The language of `path`, by extension.
    pub fn of(path: &Path) -> Option<Language> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        Some(match ext.as_str() {
            "rs" => Language::Rust,
            "go" => Language::Go,
            "java" => Language::Java,
            "kt" | "kts" => Language::Kotlin,
            "py" => Language::Python,
            "ts" | "tsx" | "mts" | "cts" => Language::TypeScript,
            "js" | "jsx" | "mjs" | "cjs" => Language::JavaScript,
            "sql" => Language::Sql,
            _ => return None,
        })
    }

    /// Its name in the output (`rust`, `go`, …, `sql`).
    pub fn name(self) -> &'static str {
        match self {
            Language::Rust => "rust",
            Language::Go => "go",
            Language::Java => "java",
            Language::Kotlin => "kotlin",
            Language::Python => "python",
            Language::TypeScript => "typescript",
            Language::JavaScript => "javascript",
            Language::Sql => "sql",
        }
    }
}

/// What was found: a kind of distributed lock, or a leader guard.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// Redis `SET key value NX PX ttl`, `SETNX`, and client locks built on
    /// them (redis-py's `Lock`, bsm/redislock).
    RedisSetNx,
    /// Redlock on several Redis nodes: `Redlock(…)`, redsync, pottery,
    /// `RedissonRedLock`.
    Redlock,
    /// A Redisson `getLock` (one Redis).
    RedissonLock,
    /// A Redisson `getFencedLock`: an `RFencedLock`, whose `lockAndGetToken`
    /// hands out a token.
    RedissonFencedLock,
    /// A ZooKeeper recipe: Curator's `InterProcessMutex`, `LeaderLatch`,
    /// kazoo's `Lock`, go-zookeeper's `NewLock`.
    ZookeeperLock,
    /// etcd `concurrency.NewMutex`, `Lock` on the lock service, elections.
    EtcdLock,
    /// etcd `Grant` / `lease_grant`: a lease held as a lock.
    EtcdLease,
    /// Hazelcast CP `FencedLock` (`getCPSubsystem().getLock`,
    /// `lockAndGetFence`).
    HazelcastFencedLock,
    /// Hazelcast `getLock` outside the CP subsystem.
    HazelcastLock,
    /// PostgreSQL `pg_advisory_lock` and its try/xact variants.
    PgAdvisoryLock,
    /// Kubernetes `Lease` leader election (`leaderelection.RunOrDie`, …).
    KubernetesLease,
    /// The DynamoDB lock client's `acquireLock`.
    DynamodbLock,
    /// Consul sessions and `LockKey`/`LockOpts`.
    ConsulLock,
    /// ShedLock's `@SchedulerLock` on a scheduled job.
    Shedlock,
    /// A branch on a leader flag (`if is_leader`): check, then act.
    LeaderGuard,
    /// A Spring Integration `LockRegistry` lock (`obtain(key)`).
    SpringLockRegistry,
    /// A Quartz job that must not run concurrently
    /// (`@DisallowConcurrentExecution`).
    QuartzNonconcurrentJob,
    /// A sherlock lock (Python).
    SherlockLock,
    /// A tooz coordinator's lock (Python).
    ToozLock,
    /// MySQL `GET_LOCK`.
    MysqlGetLock,
    /// SQL Server `sp_getapplock`.
    SqlserverApplock,
    /// `SELECT … FOR UPDATE`: a row lock held by the database.
    SelectForUpdate,
    /// A call that looks like taking a lock, on an object whose type or
    /// import names a lock, mutex, lease, leader or election from a library
    /// the catalogue does not know: a possible lock site, low confidence.
    PossibleLock,
    /// A kind a rule file given with `--rules` declares.
    Custom(CustomKind),
}

/// A kind declared by a user's rule file: its definition lives as long as
/// the process (rule files are read once, at start).
#[derive(Clone, Copy, Debug)]
pub struct CustomKind(&'static rules::KindDef);

impl PartialEq for CustomKind {
    fn eq(&self, other: &Self) -> bool {
        self.0.id == other.0.id
    }
}

impl Eq for CustomKind {}

impl PartialOrd for CustomKind {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for CustomKind {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.id.cmp(&other.0.id)
    }
}

impl std::hash::Hash for CustomKind {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.id.hash(state);
    }
}

impl Kind {
    /// Its name in the output (`redis_set_nx`, …).
    pub fn name(self) -> &'static str {
        match self {
            Kind::RedisSetNx => "redis_set_nx",
            Kind::Redlock => "redlock",
            Kind::RedissonLock => "redisson_lock",
            Kind::RedissonFencedLock => "redisson_fenced_lock",
            Kind::ZookeeperLock => "zookeeper_lock",
            Kind::EtcdLock => "etcd_lock",
            Kind::EtcdLease => "etcd_lease",
            Kind::HazelcastFencedLock => "hazelcast_fenced_lock",
            Kind::HazelcastLock => "hazelcast_lock",
            Kind::PgAdvisoryLock => "pg_advisory_lock",
            Kind::KubernetesLease => "kubernetes_lease",
            Kind::DynamodbLock => "dynamodb_lock",
            Kind::ConsulLock => "consul_lock",
            Kind::Shedlock => "shedlock",
            Kind::LeaderGuard => "leader_guard",
            Kind::SpringLockRegistry => "spring_lock_registry",
            Kind::QuartzNonconcurrentJob => "quartz_nonconcurrent_job",
            Kind::SherlockLock => "sherlock_lock",
            Kind::ToozLock => "tooz_lock",
            Kind::MysqlGetLock => "mysql_get_lock",
            Kind::SqlserverApplock => "sqlserver_applock",
            Kind::SelectForUpdate => "select_for_update",
            Kind::PossibleLock => "possible_lock",
            Kind::Custom(c) => &c.0.id,
        }
    }

    /// Its definition: a bundled kind's from `rules/kinds.yaml`.
    fn def(self) -> &'static rules::KindDef {
        match self {
            Kind::Custom(c) => c.0,
            bundled => {
                let i = Kind::ALL
                    .iter()
                    .position(|&k| k == bundled)
                    .expect("every other kind is bundled");
                &rules::bundled_kinds()[i]
            }
        }
    }

    /// Every bundled kind, in the order above (a rule file's kinds are
    /// [`Rules::kinds`]).
    pub const ALL: [Kind; 23] = [
        Kind::RedisSetNx,
        Kind::Redlock,
        Kind::RedissonLock,
        Kind::RedissonFencedLock,
        Kind::ZookeeperLock,
        Kind::EtcdLock,
        Kind::EtcdLease,
        Kind::HazelcastFencedLock,
        Kind::HazelcastLock,
        Kind::PgAdvisoryLock,
        Kind::KubernetesLease,
        Kind::DynamodbLock,
        Kind::ConsulLock,
        Kind::Shedlock,
        Kind::LeaderGuard,
        Kind::SpringLockRegistry,
        Kind::QuartzNonconcurrentJob,
        Kind::SherlockLock,
        Kind::ToozLock,
        Kind::MysqlGetLock,
        Kind::SqlserverApplock,
        Kind::SelectForUpdate,
        Kind::PossibleLock,
    ];

    /// What it is, in words.
    pub fn label(self) -> &'static str {
        &self.def().label
    }

    /// What the audit matches, in a sentence.
    pub fn description(self) -> &'static str {
        &self.def().description
    }

    /// The token its API hands out with the lock, in words; `None` when it
    /// hands out none. A write can only be fenced by a token the lock
    /// service issued with the grant: a lock without one cannot fence
    /// anything, whatever its writes check (a counter read after taking
    /// it can be read by a holder that already lost the lock).
    pub fn token(self) -> Option<&'static str> {
        self.def().token.as_deref()
    }

    /// Names that read a token from a lock's own metadata (for a kind
    /// whose API hands out none): a ZooKeeper lock node's `czxid`.
    pub fn metadata_tokens(self) -> &'static [String] {
        &self.def().metadata_tokens
    }

    /// Why a lock of this kind cannot fence its writes: `None` for a kind
    /// whose API hands out a token.
    pub fn no_token(self) -> Option<&'static str> {
        self.def().no_token.as_deref()
    }

    /// The bundled scenario (under `scenarios/`) that shows what goes wrong
    /// with this kind of lock when nothing fences its writes: the first of
    /// its rule's `scenarios` that `scenarios` holds, else the last.
    /// PostgreSQL's is `postgres-advisory-idle-timeout.toml` when
    /// `scenarios` holds it, else the generic lease story.
    pub fn scenario(self, scenarios: &Path) -> &'static str {
        rules::scenario(self.def(), scenarios)
    }
}

/// One lock (or leader guard) found, and whether its writes are fenced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// The file, as the audit shows it.
    pub file: String,
    /// 1-based line and column of the acquisition.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
    /// The file's language.
    pub language: Language,
    /// What kind of lock.
    pub kind: Kind,
    /// The source line without its comment, trimmed (at most 80
    /// characters, then `…`).
    pub snippet: String,
    /// Whether the writes after it are fenced: `None` when the audit
    /// cannot tell.
    pub fenced: Option<bool>,
    /// Why, in words. For a kind whose API hands out no token
    /// ([`Kind::no_token`]), that.
    pub reason: String,
    /// The write the verdict rests on, if any (its line).
    pub write_line: Option<usize>,
    /// The calls in the lock's scope the audit could not follow into, when
    /// the verdict is not already `fenced: no` (a write it could not see
    /// could still be unfenced); in file order.
    pub unfollowed: Vec<Unfollowed>,
    /// The bundled scenario showing what can go wrong (`scenarios/…`).
    pub scenario: String,
    /// The id of the catalogue rule that found it (`audit --list`); none
    /// for a leader flag or a Redis command written as text.
    pub rule: Option<String>,
}

/// A call in a lock's scope whose body the audit did not read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unfollowed {
    /// Its 1-based line.
    pub line: usize,
    /// The callee as written, without spaces: `store.save`, `self.notify`.
    pub call: String,
    /// Why: [`Unfollowed::ELSEWHERE`], [`Unfollowed::THROUGH_FIELD`],
    /// [`Unfollowed::NOT_FOLLOWED`] or [`Unfollowed::DEEPER`].
    pub why: &'static str,
}

impl Unfollowed {
    /// No function of that name is defined in the file (another file, a
    /// library, a method of a parameter or variable).
    pub const ELSEWHERE: &'static str = "defined elsewhere";
    /// A method of what a field holds (`this.store.save`): its target is
    /// whatever was put there, an interface's implementation out of sight.
    pub const THROUGH_FIELD: &'static str = "through a field: its target is not in sight";
    /// A function of the file the audit did not read: the verdict came
    /// from the writes in sight before it.
    pub const NOT_FOLLOWED: &'static str = "not followed";
    /// A function of the file called by the helper the audit read: one
    /// level of helpers is followed, not their own.
    pub const DEEPER: &'static str = "a helper's own helper";

    /// Its JSON object.
    pub fn json(&self) -> serde_json::Value {
        json!({ "line": self.line, "call": self.call, "why": self.why })
    }
}

impl Finding {
    /// `what`: the kind in words and the source line.
    pub fn what(&self) -> String {
        format!("{}: `{}`", self.kind.label(), self.snippet)
    }

    /// The command that runs its scenario.
    pub fn command(&self) -> String {
        format!("fencesim run {}", self.scenario)
    }

    /// `yes`, `no` or `unknown`.
    pub fn fenced_word(&self) -> &'static str {
        match self.fenced {
            Some(true) => "yes",
            Some(false) => "no",
            None => "unknown",
        }
    }

    /// One line for the terminal (unescaped).
    pub fn text(&self) -> String {
        format!(
            "{}:{}:{}: {} `{}`: fenced {}: {}; see {}",
            self.file,
            self.line,
            self.column,
            self.kind.label(),
            self.snippet,
            self.fenced_word(),
            self.reason,
            self.command()
        )
    }

    /// One JSON object (`audit --json` prints one per line).
    pub fn json(&self) -> serde_json::Value {
        json!({
            "file": self.file,
            "line": self.line,
            "column": self.column,
            "language": self.language.name(),
            "kind": self.kind.name(),
            "what": self.what(),
            "fenced": self.fenced,
            "reason": self.reason,
            "token": self.kind.token(),
            "write_line": self.write_line,
            "unfollowed": self.unfollowed.iter().map(Unfollowed::json).collect::<Vec<_>>(),
            "scenario": self.scenario,
            "command": self.command(),
            "rule": self.rule,
        })
    }
}

/// An audit of a tree: the findings in file order, and what was skipped.
#[derive(Debug, Default)]
pub struct Audit {
    /// Every finding, ordered by file path, line and column.
    pub findings: Vec<Finding>,
    /// Source files read.
    pub files_read: usize,
    /// Notes on skipped files (`PATH: why, skipped`).
    pub notes: Vec<String>,
    /// Directories skipped by name (hidden, build output, vendored).
    pub skipped_dirs: usize,
    /// Every kind the rules could report (the bundled ones, then a rule
    /// file's), as the SARIF log lists them.
    pub kinds: Vec<Kind>,
}

/// Audits `paths` (files or directories); `scenarios` is the directory
/// whose scenario files the findings name (`scenarios` when run from a
/// checkout). An error names a path that cannot be read at all.
pub fn audit(paths: &[PathBuf], scenarios: &Path) -> Result<Audit, String> {
    audit_with_rules(paths, scenarios, Rules::bundled())
}

/// [`audit`] with `rules` (the bundled ones and a user's: [`Rules::load`]).
pub fn audit_with_rules(
    paths: &[PathBuf],
    scenarios: &Path,
    rules: &Rules,
) -> Result<Audit, String> {
    let walk = walk::walk(paths)?;
    let mut out = Audit {
        notes: walk.notes,
        skipped_dirs: walk.skipped_dirs,
        kinds: rules.kinds().to_vec(),
        ..Audit::default()
    };
    for file in &walk.files {
        match walk::read(file) {
            Ok(text) => {
                out.files_read += 1;
                out.findings.extend(audit_with(
                    &file.display,
                    file.language,
                    &text,
                    scenarios,
                    rules,
                ));
            }
            Err(note) => out.notes.push(note),
        }
    }
    Ok(out)
}

/// The findings in one file's text, as [`audit`] makes them, with the
/// scenarios named as under `scenarios/`.
pub fn audit_source(file: &str, language: Language, text: &str) -> Vec<Finding> {
    audit_with(
        file,
        language,
        text,
        Path::new("scenarios"),
        Rules::bundled(),
    )
}

fn audit_with(
    file: &str,
    language: Language,
    text: &str,
    scenarios: &Path,
    rules: &Rules,
) -> Vec<Finding> {
    let source = Source::new(language, text);
    let hits = detect::locks(&source, rules);
    detect::follow(&source, hits)
        .into_iter()
        .map(|(hit, taken)| {
            let end = hit.scope_end.unwrap_or_else(|| source.scope_end(hit.at));
            let from = char_boundary(text, (hit.end + 1).min(end));
            // Where the protected work is: after the lock in its function;
            // else in a function handed to it (`using(…, async () => {…})`,
            // a `RunOrDie` callback); else where a lock made here is taken.
            let mut scopes = vec![((from, end.max(from)), None)];
            if let Some(args) = source.call_at(hit.at).and_then(|c| c.functions) {
                let note = "the work is in the function handed to the lock".to_owned();
                scopes.push((args, Some(note)));
            }
            if let Some(t) = &taken {
                let from = char_boundary(text, (t.end + 1).min(text.len()));
                let note = format!(
                    "made here, held in `{}` and taken at line {} by `{}`",
                    t.held_in,
                    source.line(t.at),
                    t.what
                );
                scopes.push(((from, source.scope_end(t.at).max(from)), Some(note)));
            }
            // A function of the file named among the lock call's arguments
            // (`election.run(work)`, `executor.submit(this::work)`).
            if let Some(c) = source.call_at(hit.at) {
                for f in named_functions(&source, c.open, c.close.max(c.open), (usize::MAX, 0)) {
                    let note = "the work is in the function handed to the lock".to_owned();
                    scopes.push((f.body, Some(note)));
                }
            }
            // The first scope whose writes are in sight, in it or in the
            // functions of the same file it reaches (helpers calling
            // helpers, callbacks, any depth). Every scope looked at, and
            // every function read, are where calls went unfollowed.
            let mut examined: Vec<(usize, usize)> = Vec::new();
            let mut followed: Vec<Followed> = Vec::new();
            let mut found = None;
            for ((a, b), note) in &scopes {
                examined.push((*a, *b));
                let reached = reach(&source, (*a, *b));
                followed.extend(reached.followed.iter().cloned());
                if !reached.writes.is_empty() {
                    let mut notes: Vec<String> = note.iter().cloned().collect();
                    let first = reached.writes.first().map_or(0, |w| w.at);
                    notes.extend(reached.whereabouts(&source, first));
                    found = Some((reached.writes, notes));
                    break;
                }
            }
            let (writes, mut whereabouts) = found.unwrap_or_else(|| {
                let notes = taken
                    .as_ref()
                    .and(scopes.last())
                    .and_then(|(_, n)| n.clone());
                (Vec::new(), notes.into_iter().collect())
            });
            // A token read from the lock's own metadata (a ZooKeeper lock
            // node's `czxid`) makes a lock whose API hands out none one
            // that can fence its writes.
            let metadata = hit.kind.no_token().and_then(|_| {
                metadata_token(
                    &source,
                    hit.kind.metadata_tokens(),
                    examined.iter().chain(followed.iter().map(|f| &f.body)),
                )
            });
            if let Some((word, at)) = &metadata {
                whereabouts.insert(
                    0,
                    format!(
                        "its token is the lock node's own `{word}`, read at line {}",
                        source.line(*at)
                    ),
                );
            }
            let no_token = hit.kind.no_token().filter(|_| metadata.is_none());
            // A lock the database holds for a transaction does not outlive
            // the writes that transaction makes: those are not judged.
            let (held, writes): (Vec<fence::Write>, Vec<fence::Write>) =
                writes.into_iter().partition(|w| {
                    hit.in_transaction
                        && fence::is_statement(w)
                        && detect::same_transaction(&source, hit.at, w.at)
                });
            let seen = Seen {
                hit: &hit,
                taken: taken.as_ref(),
                examined: &examined,
                followed: &followed,
            };
            let mut unfollowed = unfollowed(&source, &seen);
            // Nothing written in sight, and nothing out of sight but reads:
            // the lock guards no write.
            let reads_only =
                writes.is_empty() && held.is_empty() && only_reads(&source, &seen);
            let (fenced, mut reason, write_line) = match (no_token, held.first()) {
                (_, Some(w)) if writes.is_empty() => {
                    let line = source.line(w.at);
                    let reason = format!(
                        "held by the storage itself: the `{}` at line {line} runs in the transaction that holds the lock, which ends with it",
                        w.name
                    );
                    (Some(true), reason, Some(line))
                }
                (Some(_), _) if reads_only => (
                    None,
                    "it guards no write: nothing after it writes, only reads are in sight"
                        .to_owned(),
                    None,
                ),
                (Some(why), _) => unfenceable(&source, why, &writes),
                (None, _) => judge(&source, &writes),
            };
            if fenced == Some(false) {
                unfollowed.clear();
            }
            if !unfollowed.is_empty() {
                whereabouts.push(could_not_follow(&unfollowed));
            }
            if !whereabouts.is_empty() {
                reason = format!("{reason} ({})", whereabouts.join("; "));
            }
            let unfollowed: Vec<Unfollowed> = unfollowed.into_iter().map(|u| u.unfollowed).collect();
            let line = source.line(hit.at);
            let mut snippet: String = source.snippet(line).chars().take(80).collect();
            if snippet.chars().count() == 80 {
                snippet.push('…');
            }
            Finding {
                file: file.to_owned(),
                line,
                column: source.column(hit.at),
                language,
                kind: hit.kind,
                snippet,
                fenced,
                reason,
                write_line,
                unfollowed,
                scenario: format!("scenarios/{}", hit.kind.scenario(scenarios)),
                rule: hit.rule.clone(),
            }
        })
        .collect()
}

/// `at`, or the next character boundary of `text` after it.
fn char_boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at += 1;
    }
    at
}

/// How deep the audit follows functions of the same file from a lock's
/// scope: a chain of helpers longer than this is cut (its next call is
/// named as not followed).
const MAX_DEPTH: usize = 12;

/// A function of the same file that a lock's scope reaches.
#[derive(Clone, Debug)]
struct Followed {
    /// Its name as called (`self.apply`, `resetRow`).
    name: String,
    /// Where it is called (or handed over).
    called_at: usize,
    /// The byte range of its body.
    body: (usize, usize),
    /// The function it was reached from, by index, if not the scope.
    from: Option<usize>,
}

/// What a scope reaches: its writes and those of the functions it reaches,
/// and those functions.
struct Reach {
    writes: Vec<fence::Write>,
    followed: Vec<Followed>,
}

impl Reach {
    /// Where the write at `at` is, when it is not in the scope itself: the
    /// function that holds it and the chain of calls to it.
    fn whereabouts(&self, source: &Source, at: usize) -> Option<String> {
        let mut i = self
            .followed
            .iter()
            .rposition(|f| f.body.0 <= at && at < f.body.1)?;
        let f = &self.followed[i];
        let mut out = format!(
            "the write is in `{}`, called at line {}",
            f.name,
            source.line(f.called_at)
        );
        let mut chain = Vec::new();
        while let Some(p) = self.followed[i].from {
            let g = &self.followed[p];
            chain.push(format!("`{}` at line {}", g.name, source.line(g.called_at)));
            i = p;
        }
        if !chain.is_empty() {
            chain.reverse();
            out.push_str(&format!(", through {}", chain.join(", then ")));
        }
        Some(out)
    }
}

/// The functions of the file named in `from..to` other than as callees
/// (`run(work)`, `this::work`, `s.work`), and not defined in `own`.
fn named_functions(
    source: &Source,
    from: usize,
    to: usize,
    own: (usize, usize),
) -> Vec<&syntax::Function> {
    let code = &source.code[from..to];
    let bytes = code.as_bytes();
    let mut out: Vec<&syntax::Function> = Vec::new();
    for (a, b) in source::words(code) {
        let called = code[b..].trim_start().starts_with('(');
        if called || bytes[a].is_ascii_digit() {
            continue;
        }
        let word = code[a..b].to_ascii_lowercase();
        for f in source.defined(&word) {
            // Not one defined in the arguments, nor the function around them.
            let inside = (from..to).contains(&f.start) || f.start == own.0;
            if !inside && !out.iter().any(|g| g.start == f.start) {
                out.push(f);
            }
        }
    }
    out
}

/// The writes of `scope` and of every function of the same file it
/// reaches: the ones it calls by name (however deep: helpers calling
/// helpers, methods of nested classes), the ones it hands over (`run(work)`),
/// and, when it calls a parameter of its own function (`fn(ctx, rev)`),
/// the functions that function's callers hand it.
fn reach(source: &Source, scope: (usize, usize)) -> Reach {
    let mut bodies: Vec<((usize, usize), Option<usize>, usize)> = vec![(scope, None, 0)];
    let mut followed: Vec<Followed> = Vec::new();
    let mut seen: std::collections::BTreeSet<usize> = Default::default();
    let enclosing = source.function_at(scope.0);
    if let Some(f) = enclosing {
        seen.insert(f.start);
    }
    let mut k = 0;
    while k < bodies.len() {
        let ((from, to), via, depth) = bodies[k];
        k += 1;
        if depth >= MAX_DEPTH {
            continue;
        }
        let own = source
            .function_at(from)
            .map_or((usize::MAX, 0), |f| (f.start, f.end));
        let mut next: Vec<(String, usize, (usize, usize), usize)> = Vec::new();
        for c in source.calls_in(from, to) {
            if source.is_quiet(c.at) {
                continue;
            }
            let callee = source.code[c.at..c.open].trim().to_owned();
            let defined: Vec<&syntax::Function> = source
                .defined(&c.name)
                .filter(|f| !(from..to).contains(&f.start) && !(f.start..f.end).contains(&from))
                .collect();
            for f in &defined {
                next.push((callee.clone(), c.at, f.body, f.start));
            }
            for f in named_functions(source, c.open, c.close.max(c.open), own) {
                let name = f.name.clone().unwrap_or_default();
                next.push((name, c.at, f.body, f.start));
            }
            // A parameter called: the work is in what the callers hand over.
            let parameter = c.receiver.is_none()
                && defined.is_empty()
                && source.defined(&c.name).next().is_none()
                && source.function_at(c.at).is_some_and(|f| {
                    f.name.is_some()
                        && find_word(
                            &source.code[f.start..f.body.0.max(f.start)].to_ascii_lowercase(),
                            &c.name,
                        )
                        .is_some()
                });
            if parameter {
                let f = source.function_at(c.at).expect("checked above");
                let name = f.name.clone().unwrap_or_default();
                for caller in source
                    .calls
                    .iter()
                    .filter(|d| d.name == name && !(f.start..f.end).contains(&d.at))
                {
                    if let Some(range) = caller.functions {
                        next.push((caller.callee.clone(), caller.at, range, range.0));
                    }
                    for g in named_functions(
                        source,
                        caller.open,
                        caller.close.max(caller.open),
                        (f.start, f.end),
                    ) {
                        let name = g.name.clone().unwrap_or_default();
                        next.push((name, caller.at, g.body, g.start));
                    }
                }
            }
        }
        for (name, called_at, body, key) in next {
            if seen.insert(key) {
                followed.push(Followed {
                    name,
                    called_at,
                    body,
                    from: via,
                });
                bodies.push((body, Some(followed.len() - 1), depth + 1));
            }
        }
    }
    let mut writes: Vec<fence::Write> = Vec::new();
    for ((from, to), _, _) in &bodies {
        for w in fence::writes(source, *from, *to) {
            if !writes.iter().any(|v| v.at == w.at) {
                writes.push(w);
            }
        }
    }
    Reach { writes, followed }
}

/// The first of `words` (a kind's tokens read from the lock's own
/// metadata) read as a name in `ranges`, and where.
fn metadata_token<'a>(
    source: &Source,
    words: &[String],
    ranges: impl Iterator<Item = &'a (usize, usize)>,
) -> Option<(String, usize)> {
    if words.is_empty() {
        return None;
    }
    let mut best: Option<(String, usize)> = None;
    for &(from, to) in ranges {
        let code = source.code[from..to.max(from)].to_ascii_lowercase();
        for w in words {
            let w = w.to_ascii_lowercase();
            if let Some(i) = find_word(&code, &w) {
                let at = from + i;
                if !best.as_ref().is_some_and(|(_, b)| at >= *b) {
                    best = Some((source.code[at..at + w.len()].to_owned(), at));
                }
            }
        }
    }
    best
}

/// What a finding's verdict looked at: the lock, where it is taken, the
/// scopes read and the functions followed from them.
struct Seen<'a> {
    hit: &'a detect::Hit,
    taken: Option<&'a detect::Taken>,
    examined: &'a [(usize, usize)],
    followed: &'a [Followed],
}

/// A call not followed.
struct Unseen {
    unfollowed: Unfollowed,
}

/// Names of calls that may write (a Redis command, an HTTP verb, a
/// publisher), as a whole name or before `_` or a capital: not reads,
/// whether their value is used or not.
const WRITE_WORDS: [&str; 33] = [
    "set", "setex", "setnx", "hset", "hmset", "sadd", "zadd", "lpush", "rpush", "xadd", "incr",
    "decr", "expire", "del", "append", "put", "post", "patch", "delete", "remove", "insert",
    "update", "upsert", "write", "save", "store", "persist", "publish", "send", "invoke", "upload",
    "commit", "enqueue",
];

/// Whether a call in the scopes a lock's verdict looked at is the lock's
/// own or none of its effect: the taking call, a release, a function the
/// audit followed, a log, or a call on the name the lock is held in.
fn lock_own_calls<'s>(source: &'s Source, seen: &'s Seen) -> impl Fn(&syntax::Call) -> bool + 's {
    let held = source
        .call_at(seen.hit.at)
        .and_then(|c| c.held_in.as_ref())
        .map(|(name, _)| name.as_str());
    let followed_at: std::collections::BTreeSet<usize> =
        seen.followed.iter().map(|f| f.called_at).collect();
    move |c| {
        c.at == seen.hit.at
            || seen.taken.is_some_and(|t| t.at == c.at)
            || followed_at.contains(&c.at)
            || c.name.contains("unlock")
            || c.name.starts_with("release")
            || source.is_quiet(c.at)
            || (held.is_some() && c.receiver.as_deref() == held)
    }
}

/// Whether what a lock's verdict looked at only reads: nothing is done for
/// its effect but reads, logs and the lock's own calls, no call may write
/// by its name, and something is read.
fn only_reads(source: &Source, seen: &Seen) -> bool {
    let own_call = lock_own_calls(source, seen);
    let write_named = |c: &syntax::Call| {
        WRITE_WORDS.iter().any(|w| {
            c.name.strip_prefix(w).is_some_and(|rest| {
                rest.is_empty() || rest.starts_with('_') || callee_camel(&c.callee, w.len())
            })
        })
    };
    let mut read = false;
    let ranges = seen
        .examined
        .iter()
        .chain(seen.followed.iter().map(|f| &f.body));
    for &(from, to) in ranges {
        for c in source.calls_in(from, to) {
            let own = own_call(c);
            if own {
                continue;
            }
            if reads(source, c) {
                read = true;
            } else if c.statement || write_named(c) {
                return false;
            }
        }
    }
    read
}

/// Names of calls that read: a lock guarding only these guards no write.
const READS: [&str; 20] = [
    "get", "query", "select", "find", "fetch", "read", "load", "list", "scan", "count", "exists",
    "describe", "head", "search", "lookup", "has", "contains", "peek", "stat", "is",
];

/// Whether the call `c` only reads: its name says so (`getItem`,
/// `queryForList`, `fetch_all`), or what it runs does (a `SELECT`, a
/// `GetItemCommand`).
fn reads(source: &Source, c: &syntax::Call) -> bool {
    let named = |d: &syntax::Call| {
        READS.iter().any(|r| {
            d.name.strip_prefix(r).is_some_and(|rest| {
                rest.is_empty() || rest.starts_with('_') || callee_camel(&d.callee, r.len())
            })
        })
    };
    if named(c) {
        return true;
    }
    let args = (c.open + 1).min(c.close)..c.close;
    let statements: Vec<&Literal> = source
        .strings_in(args.start, args.end)
        .iter()
        .filter(|l| {
            let t = l.text.trim_start().to_ascii_lowercase();
            t.starts_with("select") || t.starts_with("show")
        })
        .collect();
    let inner: Vec<&syntax::Call> = source.calls_in(args.start, args.end).iter().collect();
    !statements.is_empty()
        || (!inner.is_empty()
            && inner.iter().any(|d| named(d))
            && inner.iter().all(|d| !fence::is_write_call(d)))
}

/// Whether the callee as written has an upper-case letter right after its
/// name's first `len` characters (`getItem`: a camel-cased read).
fn callee_camel(callee: &str, len: usize) -> bool {
    let name = callee.rsplit(['.', ':']).next().unwrap_or(callee);
    name.chars()
        .nth(len)
        .is_some_and(|c| c.is_ascii_uppercase())
}

/// The calls done for their effect (a statement of their own) in the
/// scopes looked at whose bodies the audit did not read: not the lock's
/// own calls (taking, releasing, calls on the name it is held in), not a
/// write or a call running one, not a function it followed, not a log.
fn unfollowed(source: &Source, seen: &Seen) -> Vec<Unseen> {
    let own_call = lock_own_calls(source, seen);
    let followed_starts: Vec<usize> = seen.followed.iter().map(|f| f.body.0).collect();
    let ranges = seen
        .examined
        .iter()
        .map(|&r| (r, false))
        .chain(seen.followed.iter().map(|f| (f.body, true)));
    let mut out: Vec<Unseen> = Vec::new();
    let mut named: std::collections::BTreeSet<(usize, &str)> = Default::default();
    for ((from, to), in_helper) in ranges {
        for c in source.calls_in(from, to).iter().filter(|c| c.statement) {
            let own = own_call(c);
            if own
                || fence::writes(source, c.at, c.close.max(c.at))
                    .iter()
                    .any(|w| w.at >= c.at)
            {
                continue;
            }
            let defined: Vec<&syntax::Function> = source.defined(&c.name).collect();
            // A function of the file reached from another call site.
            if defined
                .iter()
                .any(|f| followed_starts.contains(&f.body.0) || (f.start..f.end).contains(&from))
            {
                continue;
            }
            let why = match (!defined.is_empty(), in_helper) {
                (false, _) if c.via_field => Unfollowed::THROUGH_FIELD,
                (false, _) => Unfollowed::ELSEWHERE,
                (true, false) => Unfollowed::NOT_FOLLOWED,
                (true, true) => Unfollowed::DEEPER,
            };
            let line = source.line(c.at);
            if named.insert((line, c.callee.as_str())) {
                out.push(Unseen {
                    unfollowed: Unfollowed {
                        line,
                        call: c.callee.clone(),
                        why,
                    },
                });
            }
        }
    }
    out.sort_by(|a, b| {
        (a.unfollowed.line, &a.unfollowed.call).cmp(&(b.unfollowed.line, &b.unfollowed.call))
    });
    out
}

/// The reason's words for the calls not followed: the first three, then
/// how many more.
fn could_not_follow(unfollowed: &[Unseen]) -> String {
    let mut named: Vec<String> = unfollowed
        .iter()
        .take(3)
        .map(|u| &u.unfollowed)
        .map(|u| format!("`{}` at line {} ({})", u.call, u.line, u.why))
        .collect();
    if unfollowed.len() > 3 {
        named.push(format!("and {} more", unfollowed.len() - 3));
    }
    format!("could not follow {}", named.join(", "))
}

/// The verdict on a lock whose API hands out no token: unfenced, whatever
/// its writes check; the first write after it is the one named.
fn unfenceable(
    source: &Source,
    why: &str,
    writes: &[fence::Write],
) -> (Option<bool>, String, Option<usize>) {
    match writes.first() {
        Some(w) => {
            let line = source.line(w.at);
            let reason = format!("{why}: the `{}` at line {line} cannot be fenced", w.name);
            (Some(false), reason, Some(line))
        }
        None => (Some(false), why.to_owned(), None),
    }
}

/// The verdict on a lock from the writes after it: unfenced if one write
/// checks nothing, unknown if one carries a token to a check out of sight,
/// fenced if every write checks; unknown without a write.
fn judge(source: &Source, writes: &[fence::Write]) -> (Option<bool>, String, Option<usize>) {
    let line = |w: &fence::Write| source.line(w.at);
    if let Some(w) = writes.iter().find(|w| w.guard == Guard::None) {
        let reason = format!(
            "the `{}` at line {} checks no token, version or precondition",
            w.name,
            line(w)
        );
        return (Some(false), reason, Some(line(w)));
    }
    if let Some(w) = writes.iter().find(|w| matches!(w.guard, Guard::Carries(_))) {
        let Guard::Carries(token) = &w.guard else {
            unreachable!("matched above")
        };
        let reason = format!(
            "`{token}` reaches the `{}` at line {}, but no check of it is in sight: \
             the storage must reject older tokens",
            w.name,
            line(w)
        );
        return (None, reason, Some(line(w)));
    }
    if let Some(w) = writes.first() {
        let Guard::Checked(check) = &w.guard else {
            unreachable!("every other guard was handled")
        };
        let reason = if writes.len() == 1 {
            format!("the `{}` at line {} checks {check}", w.name, line(w))
        } else {
            format!(
                "all {} writes check a token, version or precondition (the `{}` at line {} checks {check})",
                writes.len(),
                w.name,
                line(w)
            )
        };
        return (Some(true), reason, Some(line(w)));
    }
    (
        None,
        "no write follows in this function: the protected work happens elsewhere".to_owned(),
        None,
    )
}

/// The exit status of an audit: 1 when a finding is unfenced, 4 when there
/// are findings and none could be judged, else 0.
pub fn status(findings: &[Finding]) -> u8 {
    if findings.iter().any(|f| f.fenced == Some(false)) {
        1
    } else if !findings.is_empty() && findings.iter().all(|f| f.fenced.is_none()) {
        4
    } else {
        0
    }
}
