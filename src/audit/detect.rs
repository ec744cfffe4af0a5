//! Where a file takes a distributed lock: call sites matched by name, the
//! client library told apart by what the file imports, and commands passed
//! as text (SQL, Redis commands, Lua scripts) found inside string literals
//! only where something executes them.

use super::rules::{CallFacts, FileFacts, FirstArgSeen, Rules};
use super::source::{find_word, Source};
use super::{Kind, Language};

pub(crate) use super::syntax::Call;

/// A lock found: where, which kind, and where its statement ends.
#[derive(Clone, Debug)]
pub(crate) struct Hit {
    pub at: usize,
    pub kind: Kind,
    /// The end of the acquiring call (its writes are not the protected
    /// write).
    pub end: usize,
    /// The scope ends here (a ShedLock annotation's method).
    pub scope_end: Option<usize>,
    /// The id of the rule that found it (none for a leader flag or a
    /// Redis command written as text).
    pub rule: Option<String>,
    /// The database holds the lock for the transaction that took it
    /// (`pg_advisory_xact_lock`, `FOR UPDATE`).
    pub in_transaction: bool,
}

/// Callees that execute a command or statement given as text.
const EXECUTORS: [&str; 14] = [
    "do",
    "call",
    "pcall",
    "execute_command",
    "send_command",
    "sendcommand",
    "command",
    "cmd",
    "raw",
    "rawcommand",
    "exec",
    "execute",
    "eval",
    "docontext",
];

/// Every lock acquisition and leader guard in `source`, in file order:
/// calls and annotations as `rules` describe them, then the leader flags
/// and the commands written as text.
pub(crate) fn locks(source: &Source, rules: &Rules) -> Vec<Hit> {
    let calls = &source.calls;
    let lower = source.code.to_ascii_lowercase();
    // The libraries a file uses show in its code and in the paths it
    // imports, which Go and JavaScript write as strings.
    let uses_text = format!("{lower}\n{}", imported_paths(source));
    let types = std::cell::RefCell::new(std::collections::BTreeMap::new());
    let types_of = |name: &str| -> Vec<String> {
        types
            .borrow_mut()
            .entry(name.to_owned())
            .or_insert_with(|| declared_types(&lower, name))
            .clone()
    };
    let facts = FileFacts {
        uses: rules.uses(&uses_text),
        call_names: calls.iter().map(|c| c.name.as_str()).collect(),
        language: source.language.name(),
        types_of: &types_of,
    };
    // A name assigned from a call, or a struct or object literal's field
    // set to one (`&Compactor{locker: redislock.New(rdb)}`).
    let assigned = |c: &Call| c.held_in.as_ref().map(|(name, _)| name.clone());
    let bound: Vec<Vec<String>> = rules
        .rules()
        .iter()
        .map(|r| r.bound_names(calls, &assigned))
        .collect();
    let mut hits = Vec::new();
    for c in calls {
        // A function of the file itself (`lockKey(day)`) is not a
        // library's call, whatever its name.
        if c.receiver.is_none() && source.defined(&c.name).next().is_some() {
            continue;
        }
        let first_arg = FirstArgSeen {
            literal: first_arg_literal(source, c),
            given: source
                .code
                .get(c.open + 1..c.close)
                .is_some_and(|args| !args.trim().is_empty()),
        };
        let nx = || nx_in_args(source, c);
        let keyword = |name: &str| kwarg(source, c, name);
        let args = || {
            let end = (c.close + 1).min(source.code.len());
            source
                .code
                .get(c.open..end)
                .unwrap_or("")
                .to_ascii_lowercase()
                .split_whitespace()
                .collect::<String>()
        };
        let seen = CallFacts {
            first_arg,
            nx: &nx,
            keyword: &keyword,
            args: &args,
        };
        let found = rules
            .rules()
            .iter()
            .zip(&bound)
            .find(|(rule, bound)| rule.matches(c, &facts, bound, &seen));
        if let Some((rule, _)) = found {
            let statement_end = source.code[c.at..]
                .find(';')
                .map_or(source.code.len(), |n| c.at + n);
            let statement = source.code[c.at..statement_end].to_ascii_lowercase();
            hits.push(Hit {
                at: c.at,
                kind: rule.kind(),
                end: c.close,
                scope_end: None,
                rule: Some(rule.id().to_owned()),
                in_transaction: rule.in_transaction(&c.name, &statement),
            });
        }
    }
    // An annotation on a method (ShedLock's `@SchedulerLock(…)`): the
    // method is the scope.
    for rule in rules.rules() {
        let Some(annotation) = rule.annotation() else {
            continue;
        };
        for (i, _) in lower.match_indices(annotation) {
            let end = source.annotated_end(i);
            hits.push(Hit {
                at: i,
                kind: rule.kind(),
                end: i + annotation.len(),
                scope_end: Some(end),
                rule: Some(rule.id().to_owned()),
                in_transaction: false,
            });
        }
    }
    hits.extend(leader_guards(&lower));
    hits.extend(text_commands(source, rules));
    let taken_lines: Vec<usize> = hits.iter().map(|h| source.line(h.at)).collect();
    hits.extend(
        possible_locks(source, rules, &lower, &types_of)
            .into_iter()
            .filter(|h| !taken_lines.contains(&source.line(h.at))),
    );
    hits.sort_by_key(|h| h.at);
    // One finding per line: the first (the patterns overlap on a line such
    // as `Do(ctx, "SET", k, v, "NX")`).
    hits.dedup_by_key(|h| source.line(h.at));
    // Options built first (`args := redis.SetArgs{Mode: "NX"}`) and handed
    // to the call that takes the lock are that call's, not a lock.
    let options: Vec<usize> = hits
        .iter()
        .filter_map(|h| {
            let c = source.call_at(h.at)?;
            if source.code.as_bytes().get(c.open) != Some(&b'{') {
                return None;
            }
            let name = c.held_in.as_ref().map(|(name, _)| name.clone())?;
            let handed = hits.iter().filter(|o| o.at > c.close).any(|o| {
                source.call_at(o.at).is_some_and(|oc| {
                    find_word(&source.code[oc.open..oc.close].to_ascii_lowercase(), &name).is_some()
                })
            });
            handed.then_some(h.at)
        })
        .collect();
    hits.retain(|h| !options.contains(&h.at));
    // A lock handed to another lock's call in the same function is a part
    // of that lock, not one of its own: the Redisson locks a
    // `RedissonRedLock(l1, l2, l3)` or a `MultiLock(locks)` is made of. (A
    // lease handed to a lock, `lock(name, with_lease(lease.id()))`, stays
    // a finding: it expires on its own.)
    let parts: Vec<usize> = hits
        .iter()
        .filter(|h| h.kind != Kind::EtcdLease)
        .filter_map(|h| {
            let (name, holder) = held_name(source, h.at)?;
            let end = source.scope_end(holder);
            let handed = hits.iter().filter(|o| o.at > h.end && o.at < end).any(|o| {
                source.call_at(o.at).is_some_and(|oc| {
                    oc.close > oc.open
                        && find_word(&source.code[oc.open..oc.close].to_ascii_lowercase(), &name)
                            .is_some()
                })
            });
            handed.then_some(h.at)
        })
        .collect();
    hits.retain(|h| !parts.contains(&h.at));
    // A lock got only to be released (`registry.obtain(key).unlock()`).
    hits.retain(|h| {
        let Some(c) = source.call_at(h.at) else {
            return true;
        };
        let released = source.calls.iter().any(|d| {
            d.at > c.close
                && d.receiver.as_deref() == Some(c.name.as_str())
                && source.code[c.close + 1..d.at]
                    .chars()
                    .all(|ch| ch.is_whitespace() || ch == '.' || ch == '?' || ch == '!')
                && (d.name.contains("unlock") || d.name.starts_with("release"))
        });
        !released
    });
    hits
}

/// The name a lock found at `at` is held in (not a field): its call's, or
/// that of the call whose arguments it is made in (`locks =
/// keys.map(k -> r.getLock(k))`).
fn held_name(source: &Source, at: usize) -> Option<(String, usize)> {
    let own = source.call_at(at)?;
    let mut around: Vec<&Call> = source
        .calls
        .iter()
        .filter(|c| c.open < at && at < c.close)
        .collect();
    around.sort_by_key(|c| std::cmp::Reverse(c.open));
    std::iter::once(own)
        .chain(around)
        .find_map(|c| Some((c.held_in.as_ref()?, c.at)))
        .filter(|((_, field), _)| !field)
        .map(|((name, _), at)| (name.clone(), at))
}

/// Words that stand before a name without being its type.
const NOT_TYPES: [&str; 46] = [
    "import",
    "from",
    "return",
    "await",
    "new",
    "const",
    "let",
    "var",
    "val",
    "def",
    "package",
    "use",
    "static",
    "final",
    "private",
    "public",
    "protected",
    "readonly",
    "async",
    "in",
    "of",
    "as",
    "is",
    "not",
    "and",
    "or",
    "yield",
    "throw",
    "case",
    "else",
    "if",
    "for",
    "while",
    "with",
    "go",
    "defer",
    "mut",
    "ref",
    "pub",
    "fn",
    "func",
    "class",
    "struct",
    "type",
    "raise",
    "lateinit",
];

/// The types `name` is declared with in `code` (lowercased, comments and
/// strings blanked), as lowercased paths: after it (`rs *redsync.Redsync`,
/// `lock: RLock`, `rl: &LockManager`, `private readonly redlock: Redlock`)
/// or before it (`RLock lock`, `private final FencedLock lock;`).
fn declared_types(code: &str, name: &str) -> Vec<String> {
    let path_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':');
    let mut out = Vec::new();
    if name.is_empty() {
        return out;
    }
    let mut from = 0;
    while let Some(i) = find_word(&code[from..], name).map(|i| from + i) {
        from = i + name.len();
        // After: `name: T`, `name T` (Go), with `*`, `&`, `&mut`, `?`.
        let after = &code[from..];
        let rest = after.trim_start_matches([' ', '\t']);
        let (rest, colon) = match rest.strip_prefix(':') {
            Some(r) if !r.starts_with(':') && !r.starts_with('=') => (r, true),
            _ => (rest, false),
        };
        let spaced = after.len() > rest.len();
        if colon || spaced {
            let rest = rest
                .trim_start_matches([' ', '\t'])
                .trim_start_matches(['*', '&', '?'])
                .trim_start_matches("mut ")
                .trim_start();
            let ty: String = rest.chars().take_while(|&c| path_char(c)).collect();
            let ty = ty.trim_matches([':', '.']);
            if !ty.is_empty() {
                out.push(ty.to_owned());
            }
        }
        // Before: `T name` (not `other: name`, where `name` is a type).
        let before = code[..i].trim_end_matches([' ', '\t']);
        if before.len() < i && (!before.ends_with(':') || before.ends_with("::")) {
            let start = before
                .char_indices()
                .rev()
                .find(|&(_, c)| !path_char(c))
                .map_or(0, |(n, c)| n + c.len_utf8());
            let ty = before[start..].trim_matches([':', '.']);
            if !ty.is_empty() && !NOT_TYPES.contains(&ty) {
                out.push(ty.to_owned());
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// Calls that look like taking a lock, lowercased.
const POSSIBLE_TAKES: [&str; 12] = [
    "acquire",
    "acquire_lock",
    "tryacquire",
    "try_acquire",
    "lock",
    "trylock",
    "try_lock",
    "lockinterruptibly",
    "lock_async",
    "obtain",
    "campaign",
    "elect",
];

/// Words of a type or module that name a lock.
const LOCK_WORDS: [&str; 7] = [
    "lock",
    "mutex",
    "lease",
    "leader",
    "election",
    "semaphore",
    "latch",
];

/// Modules whose locks are the process's own (a path segment of an
/// import): not distributed.
const LOCAL_MODULES: [&str; 27] = [
    "sync",
    "spin",
    "lock_api",
    "crossbeam",
    "threading",
    "asyncio",
    "concurrent",
    "tokio",
    "parking_lot",
    "async-mutex",
    "async-lock",
    "async_mutex",
    "async_lock",
    "multiprocessing",
    "filelock",
    "portalocker",
    "fcntl",
    "std",
    "futures",
    "kotlinx",
    "trio",
    "anyio",
    "gevent",
    "lockfile",
    "proper-lockfile",
    "atomic",
    "await-lock",
];

/// The file's imports, lowercased, one an entry: Go's and JavaScript's
/// import paths, and the import lines of the others (`import a.b.C;`,
/// `from a import B`, `use a::B;`).
fn imports(source: &Source, lower: &str) -> Vec<String> {
    let mut out: Vec<String> = imported_paths(source).lines().map(str::to_owned).collect();
    let mut start = 0;
    for line in lower.split_inclusive('\n') {
        let end = start + line.len();
        let t = line.trim_start();
        if t.starts_with("import ") || t.starts_with("from ") || t.starts_with("use ") {
            // With the path a string of it holds (`import { Mutex } from
            // "async-mutex"`).
            let mut entry = t.trim_end().to_owned();
            for lit in source
                .strings
                .iter()
                .filter(|l| l.start >= start && l.start < end)
            {
                entry.push(' ');
                entry.push_str(&lit.text.to_ascii_lowercase());
            }
            out.push(entry);
        }
        start = end;
    }
    out
}

/// A possible lock site of a library the catalogue does not know: a
/// taking call whose receiver is declared with a type (or made by a call
/// on a module) that an import of the file qualifies, where the type or
/// the import names a lock, and the import is no process-local lock
/// module nor a library of the catalogue.
fn possible_locks(
    source: &Source,
    rules: &Rules,
    lower: &str,
    types_of: &dyn Fn(&str) -> Vec<String>,
) -> Vec<Hit> {
    let imports = imports(source, lower);
    if imports.is_empty() {
        return Vec::new();
    }
    let catalogued = |entry: &str| {
        rules
            .libraries()
            .iter()
            .any(|(_, words)| words.iter().any(|w| entry.contains(w.as_str())))
    };
    let local = |entry: &str| {
        entry
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
            .any(|seg| LOCAL_MODULES.contains(&seg))
    };
    let names_lock = |text: &str| LOCK_WORDS.iter().any(|w| text.contains(w));
    // A type path (`dlock.locker`, `distributedlock`) is an unknown
    // library's lock when an import names its first segment.
    let unknown_lock = |path: &str| {
        let first = path.split(['.', ':']).find(|s| !s.is_empty()).unwrap_or("");
        if first.len() < 2 {
            return false;
        }
        imports.iter().any(|entry| {
            find_word(entry, first).is_some()
                && (names_lock(entry) || names_lock(path))
                && !local(entry)
                && !catalogued(entry)
        })
    };
    let mut hits = Vec::new();
    for c in &source.calls {
        let Some(receiver) = c.receiver.as_deref() else {
            continue;
        };
        if !POSSIBLE_TAKES.contains(&c.name.as_str()) {
            continue;
        }
        // Declared with the type, or made by a call on a module.
        let made: Vec<String> = source
            .calls
            .iter()
            .filter(|m| m.at < c.at && m.held_in.as_ref().is_some_and(|(n, _)| n == receiver))
            // What a taking call returns is a guard, not the client.
            .filter(|m| !POSSIBLE_TAKES.contains(&m.name.as_str()))
            .filter_map(|m| m.receiver.as_ref().map(|r| format!("{r}.{}", m.name)))
            .collect();
        let typed = types_of(receiver);
        if typed.iter().chain(&made).any(|t| unknown_lock(t)) {
            hits.push(Hit {
                at: c.at,
                kind: Kind::PossibleLock,
                end: c.close,
                scope_end: None,
                rule: None,
                in_transaction: false,
            });
        }
    }
    hits
}

/// Calls that begin a transaction and return it, lowercased.
const BEGIN_CALLS: [&str; 7] = [
    "begin",
    "begintx",
    "beginx",
    "begin_transaction",
    "begintransaction",
    "starttransaction",
    "transaction",
];

/// Whether the write at `write_at` runs in the transaction that holds a
/// lock taken at `lock_at`: in SQL code, a transaction is open at the lock
/// (a `BEGIN` or `START TRANSACTION` since the last `COMMIT` or
/// `ROLLBACK`, or a function body); in other code, the lock's statement
/// and the write's are run by calls on one name (`tx.Exec`, `client.query`)
/// that is a transaction: declared as one (`tx *sql.Tx`), returned by a call
/// that begins one (`db.BeginTx`), or given a `BEGIN` before the lock.
pub(crate) fn same_transaction(source: &Source, lock_at: usize, write_at: usize) -> bool {
    let code = &source.code;
    if source.language == Language::Sql {
        let before = code[..lock_at].to_ascii_lowercase();
        if before.matches("$$").count() % 2 == 1 {
            return true;
        }
        let last = |w: &str| {
            let mut at = None;
            let mut from = 0;
            while let Some(i) = find_word(&before[from..], w).map(|i| from + i) {
                at = Some(i);
                from = i + w.len();
            }
            at
        };
        let opened = last("begin").max(last("start"));
        let closed = last("commit").max(last("rollback"));
        return opened.is_some() && opened > closed;
    }
    let on = |at: usize| enclosing_call(&source.calls, at).and_then(|c| c.receiver.clone());
    let (Some(lock_on), Some(write_on)) = (on(lock_at), on(write_at)) else {
        return false;
    };
    if lock_on != write_on {
        return false;
    }
    let lower = code.to_ascii_lowercase();
    let declared = declared_types(&lower, &lock_on).iter().any(|t| {
        let last = t.rsplit(['.', ':']).next().unwrap_or(t);
        last == "tx" || last.ends_with("transaction")
    });
    let function_start = source.function_at(lock_at).map_or(0, |f| f.start);
    let begun = source
        .calls
        .iter()
        .filter(|c| c.at >= function_start && c.at < lock_at)
        .any(|c| {
            // `tx, err := db.BeginTx(…)`, Python's `with db.transaction() as tx:`.
            let with_as = || {
                let rest = lower.get(c.close + 1..).unwrap_or("").trim_start();
                rest.strip_prefix("as ")
                    .map(str::trim_start)
                    .is_some_and(|r| find_word(r, &lock_on) == Some(0))
            };
            let returned = BEGIN_CALLS.contains(&c.name.as_str())
                && (c.held_in.as_ref().is_some_and(|(n, _)| *n == lock_on) || with_as());
            let given_begin = c.receiver.as_deref() == Some(lock_on.as_str())
                && source
                    .strings
                    .iter()
                    .filter(|l| l.start > c.open && l.start < c.close)
                    .any(|l| {
                        let t = l.text.trim().to_ascii_lowercase();
                        t == "begin"
                            || t.starts_with("begin ")
                            || t.starts_with("start transaction")
                    });
            returned || given_begin
        });
    declared || begun
}

/// The string literals that name an imported module, lowercased, one a
/// line: Go's `import "go.etcd.io/…"` (also in an `import ( … )` block,
/// with an alias), JavaScript's `import … from "redlock"`, `require("…")`
/// and `import("…")`.
fn imported_paths(source: &Source) -> String {
    let code = &source.code;
    let mut out = String::new();
    for lit in &source.strings {
        let line_start = code[..lit.start].rfind('\n').map_or(0, |n| n + 1);
        let before = code[line_start..lit.start].trim().to_ascii_lowercase();
        let stated = before.starts_with("import")
            || before.ends_with("from")
            || before.ends_with("require(")
            || before.ends_with("import(");
        // Inside Go's `import (`: an alias at most before the path.
        let in_block = source.language == Language::Go
            && !before.contains(char::is_whitespace)
            && code[..line_start]
                .rfind("import (")
                .is_some_and(|open| !code[open..line_start].contains(')'));
        if stated || in_block {
            out.push_str(&lit.text.to_ascii_lowercase());
            out.push('\n');
        }
    }
    out
}

/// The text of the string literal that is the call's first argument (after
/// a Go `ctx`), if it is one.
fn first_arg_literal<'s>(source: &'s Source, c: &Call) -> Option<&'s str> {
    let lit = source
        .strings
        .iter()
        .find(|l| l.start > c.open && l.start < c.close)?;
    let between = source.code[c.open + 1..lit.start].trim();
    let between = between.strip_prefix("ctx,").unwrap_or(between).trim();
    matches!(between, "" | "b" | "&").then_some(lit.text.as_str())
}

/// Whether a keyword argument `name=` is given to the call (Python).
fn kwarg(source: &Source, c: &Call, name: &str) -> bool {
    let args: String = source.code[c.open..(c.close + 1).min(source.code.len())]
        .to_ascii_lowercase()
        .split_whitespace()
        .collect();
    args.contains(&format!(",{name}=")) || args.contains(&format!("({name}="))
}

/// Whether a `set` call (and the builder chained after it on the
/// statement) asks for NX: `nx=True`, `{NX: true}`, `"NX"`, `.nx()`,
/// `ExistenceCheck::NX`, `Mode: "NX"`.
fn nx_in_args(source: &Source, c: &Call) -> bool {
    let end = (c.close + 1).min(source.code.len());
    if asks_nx(source, c.open, end) {
        return true;
    }
    // Options built in a variable first: `let opts =
    // SetOptions::default().conditional_set(ExistenceCheck::NX)`, `args :=
    // redis.SetArgs{Mode: "NX"}`, `const opts = { NX: true }`.
    let function_start = source.line_start(source.line(c.at).saturating_sub(12).max(1));
    let before = &source.code[function_start..c.at];
    source.code[c.open..end]
        .split(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_'))
        .filter(|w| w.len() > 1 && !w.as_bytes()[0].is_ascii_digit())
        .any(|name| {
            let mut from = 0;
            while let Some(i) = find_word(&before[from..], name).map(|i| from + i) {
                from = i + name.len();
                let rest = before[from..].trim_start();
                let rest = rest.strip_prefix(':').unwrap_or(rest);
                if rest.starts_with('=') && !rest.starts_with("==") {
                    let at = function_start + from;
                    let stop = source.code[at..c.at].find(';').map_or(c.at, |n| at + n);
                    if asks_nx(source, at, stop) {
                        return true;
                    }
                }
            }
            false
        })
}

/// Whether `from..to` asks for NX: a marker in the code or an `"NX"`.
fn asks_nx(source: &Source, from: usize, to: usize) -> bool {
    let code: String = source.code[from..to]
        .to_ascii_lowercase()
        .split_whitespace()
        .collect();
    let code_marker = ["nx=true", "nx:true", ".nx()", "existencecheck::nx", "nx()"]
        .iter()
        .any(|m| code.contains(m));
    let literal_marker = source
        .strings
        .iter()
        .filter(|l| l.start > from && l.start < to)
        .any(|l| l.text.eq_ignore_ascii_case("nx"));
    code_marker || literal_marker
}

/// `if …leader…`: a branch on a leader flag (`if self.is_leader:`, `if
/// !elector.IsLeader() {`, `if (leaderLatch.hasLeadership())`).
fn leader_guards(lower: &str) -> Vec<Hit> {
    let mut hits = Vec::new();
    let mut from = 0;
    while let Some(i) = find_word(&lower[from..], "if").map(|i| from + i) {
        from = i + 2;
        // `.If(…)` is a method (etcd's `Txn().If`), not a branch.
        if lower[..i].trim_end().ends_with('.') {
            continue;
        }
        let line_end = lower[i..].find('\n').map_or(lower.len(), |n| i + n);
        let cond = &lower[i + 2..line_end];
        let cond = cond.split(['{', ':']).next().unwrap_or("");
        let flag = cond
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .any(|w| {
                w.contains("leader") && !w.contains("election") && !w.starts_with("newleader")
                    || w == "hasleadership"
                    || w == "isleading"
                    || w == "is_leading"
            });
        if flag {
            hits.push(Hit {
                at: i,
                kind: Kind::LeaderGuard,
                end: line_end,
                scope_end: None,
                rule: None,
                in_transaction: false,
            });
        }
    }
    hits
}

/// Locks taken by commands written as text: `Do(ctx, "SET", k, v, "NX",
/// "PX", ttl)`, `cmd("SETNX")`, a Lua script's `redis.call('SET', …, 'NX')`,
/// and `SELECT pg_advisory_lock(…)` in a query string.
fn text_commands(source: &Source, rules: &Rules) -> Vec<Hit> {
    let mut hits = Vec::new();
    if source.language == Language::Sql {
        let lower = source.code.to_ascii_lowercase();
        let mut from = 0;
        while let Some(i) = for_update(&lower[from..]).map(|i| from + i) {
            from = i + 1;
            hits.push(literal_hit(
                i,
                i + "for update".len(),
                Kind::SelectForUpdate,
            ));
        }
        // A procedure run without parentheses (`EXEC sp_getapplock
        // @Resource = …`): the calls of the code found the others.
        let mut from = 0;
        while let Some(mut hit) = query_call(rules, &lower[from..], from, lower.len()) {
            from = hit.at + 1;
            let name_end = lower[hit.at..]
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .map_or(lower.len(), |n| hit.at + n);
            if lower[name_end..].trim_start().starts_with('@') {
                // The statement is the lock's: its writes come after it.
                hit.end = lower[name_end..]
                    .find(';')
                    .map_or(name_end, |n| name_end + n);
                hits.push(hit);
            }
        }
        return hits;
    }
    for lit in &source.strings {
        let text = lit.text.to_ascii_lowercase();
        let body = lit.body;
        // A statement calling a lock function of the database (prose has
        // no parenthesis, and a statement starts with a verb: a log
        // message does not).
        let verb = text
            .trim_start()
            .trim_start_matches(['{', '('])
            .trim_start()
            .split(|c: char| !c.is_ascii_alphabetic())
            .next()
            .unwrap_or("");
        let statement = matches!(
            verb,
            "select"
                | "perform"
                | "with"
                | "do"
                | "begin"
                | "call"
                | "values"
                | "if"
                | "exec"
                | "execute"
                | "declare"
                | "set"
        );
        if let Some(hit) = statement
            .then(|| query_call(rules, &text, body, lit.end))
            .flatten()
        {
            hits.push(hit);
        }
        // `SELECT … FOR UPDATE`: a row lock held by the database.
        // (A statement reads rows: it has a FROM before its FOR UPDATE.)
        if matches!(verb, "select" | "with") {
            if let Some(i) = for_update(&text).filter(|&i| find_word(&text[..i], "from").is_some())
            {
                hits.push(literal_hit(body + i, lit.end, Kind::SelectForUpdate));
            }
        }
        // A Lua script: redis.call('SET', KEYS[1], ARGV[1], 'NX', …).
        for (i, _) in text
            .match_indices("redis.call(")
            .chain(text.match_indices("redis.pcall("))
        {
            let args = &text[i..];
            let args = &args[..args.find(')').unwrap_or(args.len())];
            let words: Vec<&str> = args
                .split([',', '('])
                .map(|w| w.trim().trim_matches(['\'', '"']))
                .collect();
            let setnx = words.get(1) == Some(&"setnx")
                || (words.get(1) == Some(&"set") && words.contains(&"nx"));
            if setnx {
                hits.push(literal_hit(body + i, lit.end, Kind::RedisSetNx));
            }
        }
        // An argument list: "SETNX", or "SET" with an "NX" after it, given
        // to something that executes commands.
        let word = lit.text.trim();
        if word.eq_ignore_ascii_case("setnx") || word.eq_ignore_ascii_case("set") {
            let Some(call) = enclosing_call(&source.calls, lit.start) else {
                continue;
            };
            if !EXECUTORS.contains(&call.name.as_str()) {
                continue;
            }
            let nx = word.eq_ignore_ascii_case("setnx")
                || source
                    .strings
                    .iter()
                    .filter(|l| l.start > lit.start && l.start < call.close)
                    .any(|l| l.text.eq_ignore_ascii_case("nx"))
                || chained_nx(source, call);
            if nx {
                hits.push(literal_hit(lit.start, call.close, Kind::RedisSetNx));
            }
        }
    }
    hits
}

/// The first call in `text` (a lowercased statement whose first byte is at
/// `body`) of a rule that looks in queries: the function's name as a word,
/// then `(` or, for a procedure run by `EXEC`, a space.
fn query_call(rules: &Rules, text: &str, body: usize, end: usize) -> Option<Hit> {
    let called = |i: usize, f: &str| {
        let rest = &text[i + f.len()..];
        rest.trim_start().starts_with('(')
            || rest.starts_with(char::is_whitespace) && rest.trim_start().starts_with('@')
    };
    rules
        .rules()
        .iter()
        .filter_map(|rule| {
            rule.query_calls()
                .iter()
                .filter_map(|f: &String| {
                    let mut from = 0;
                    while let Some(i) = find_word(&text[from..], f).map(|i| from + i) {
                        if called(i, f) {
                            return Some((i, f));
                        }
                        from = i + f.len();
                    }
                    None
                })
                .min()
                .map(|(i, f)| (i, rule, f.as_str()))
        })
        // The earliest call; of two at one place, the first rule's.
        .min_by_key(|(i, _, _)| *i)
        .map(|(i, rule, f)| Hit {
            at: body + i,
            kind: rule.kind(),
            end,
            scope_end: None,
            rule: Some(rule.id().to_owned()),
            in_transaction: rule.in_transaction(f, text),
        })
}

/// Where `FOR UPDATE` (or `FOR NO KEY UPDATE`) is in lowercased SQL
/// `text`, as words.
fn for_update(text: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(i) = find_word(&text[from..], "for").map(|i| from + i) {
        from = i + 3;
        let rest = text[from..].trim_start();
        let rest = rest
            .strip_prefix("no")
            .filter(|r| r.starts_with(char::is_whitespace))
            .map_or(rest, |r| {
                r.trim_start()
                    .strip_prefix("key")
                    .map_or(r, str::trim_start)
            });
        if rest.starts_with("update")
            && !rest[6..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
            && text[from..].starts_with(char::is_whitespace)
        {
            return Some(i);
        }
    }
    None
}

/// redis-rs: `redis::cmd("SET").arg(k).arg(v).arg("NX")`: an `"NX"` in the
/// calls chained after `cmd(…)` on the statement.
fn chained_nx(source: &Source, call: &Call) -> bool {
    let rest = &source.code[call.close..];
    let end = rest.find(';').unwrap_or(rest.len());
    let from = call.close;
    source
        .strings
        .iter()
        .filter(|l| l.start > from && l.start < from + end)
        .any(|l| l.text.eq_ignore_ascii_case("nx"))
}

/// The innermost call whose arguments hold `at`.
pub(crate) fn enclosing_call(calls: &[Call], at: usize) -> Option<&Call> {
    calls
        .iter()
        .filter(|c| c.open < at && at < c.close)
        .max_by_key(|c| c.open)
}

fn literal_hit(at: usize, end: usize, kind: Kind) -> Hit {
    Hit {
        at,
        kind,
        end,
        scope_end: None,
        rule: None,
        // A row lock is the transaction's.
        in_transaction: kind == Kind::SelectForUpdate,
    }
}

/// Where a lock made in one function is taken in another: a call such as
/// `acquire` on the field or variable it is held in, or a Python `with`.
#[derive(Clone, Debug)]
pub(crate) struct Taken {
    /// The name the lock is held in.
    pub held_in: String,
    /// Byte offset of the taking call (or `with`).
    pub at: usize,
    /// The end of that call: the protected work is after it.
    pub end: usize,
    /// The call as written: `mutex.acquire`, `with self.lock`.
    pub what: String,
}

/// Calls that take a lock held in a name, lowercased.
const TAKE_CALLS: [&str; 15] = [
    "lock",
    "trylock",
    "lockinterruptibly",
    "lock_async",
    "acquire",
    "tryacquire",
    "acquire_lock",
    "lockandgetfence",
    "trylockandgetfence",
    "lockandgettoken",
    "trylockandgettoken",
    "obtain",
    "campaign",
    "using",
    "do",
];

/// Follows each lock from the field or variable it is bound to: a hit that
/// is a call on a name another hit's lock is held in is that lock taken,
/// not a second lock, and is dropped; a lock held in a field (`this.x =`,
/// `self.x =`, `x: …` in a struct or object literal, a field declaration)
/// is paired with the first call that takes it outside the function that
/// made it.
pub(crate) fn follow(source: &Source, hits: Vec<Hit>) -> Vec<(Hit, Option<Taken>)> {
    let code = &source.code;
    // The name each hit's lock is held in, whether it is a field, and the
    // range its name reaches.
    let held: Vec<Option<(String, bool, usize, usize)>> = hits
        .iter()
        .map(|h| {
            if h.scope_end.is_some() {
                return None;
            }
            let (name, field) = source.call_at(h.at)?.held_in.clone()?;
            let (from, to) = if field {
                (0, code.len())
            } else {
                (h.at, source.scope_end(h.at))
            };
            Some((name, field, from, to))
        })
        .collect();
    let mut out = Vec::new();
    for (i, hit) in hits.iter().enumerate() {
        let call = source.call_at(hit.at);
        let receiver = call.and_then(|c| c.receiver.as_deref());
        let via_field = call.is_some_and(|c| c.via_field);
        // A lock held in a variable and then kept in a field of the same
        // name (`&Failover{lock: lock}`) is taken through that field.
        let taking_another = receiver.is_some_and(|r| {
            held.iter().enumerate().any(|(j, b)| {
                j != i
                    && b.as_ref().is_some_and(|(name, field, from, to)| {
                        name == r && ((*from..*to).contains(&hit.at) || (via_field && !field))
                    })
            })
        });
        if taking_another {
            continue;
        }
        let own = hit.at..source.scope_end(hit.at);
        let taken = match &held[i] {
            Some((name, true, _, _)) => taken(source, name, &own, false),
            Some((name, false, _, _)) => taken(source, name, &own, true),
            None => None,
        };
        out.push((hit.clone(), taken));
    }
    out
}

/// The first place outside `own` that takes the lock held in `name`: a
/// taking call on it, or a Python `with name:` / `with self.name:`.
///
/// With `through_field` (a lock held in a variable), only a taking call
/// reached through a field of that name counts: the variable was kept in
/// a field (`&Failover{lock: lock}`, `this.lock = lock`), and no `with`.
fn taken(
    source: &Source,
    name: &str,
    own: &std::ops::Range<usize>,
    through_field: bool,
) -> Option<Taken> {
    let by_call = source
        .calls
        .iter()
        .filter(|c| !own.contains(&c.at) && (c.via_field || !through_field))
        .find(|c| c.receiver.as_deref() == Some(name) && TAKE_CALLS.contains(&c.name.as_str()))
        .map(|c| Taken {
            held_in: name.to_owned(),
            at: c.at,
            end: c.close,
            what: c.callee.clone(),
        });
    let by_with = source
        .withs
        .iter()
        .filter(|w| !own.contains(&w.at) && !through_field)
        .find(|w| w.name == name)
        .map(|w| Taken {
            held_in: name.to_owned(),
            at: w.at,
            end: w.end,
            what: w.what.clone(),
        });
    match (by_call, by_with) {
        (Some(a), Some(b)) => Some(if a.at < b.at { a } else { b }),
        (a, b) => a.or(b),
    }
}
