//! Where a file takes a distributed lock: call sites matched by name, the
//! client library told apart by what the file imports, and commands passed
//! as text (SQL, Redis commands, Lua scripts) found inside string literals
//! only where something executes them.

use super::rules::{FileFacts, Rules};
use super::source::{find_word, is_ident, matching, Source};
use super::{Kind, Language};

/// A call in the code: `receiver.name(args)`.
#[derive(Clone, Debug)]
pub(crate) struct Call {
    /// The callee's name, lowercased.
    pub name: String,
    /// Byte offset of the name.
    pub at: usize,
    /// The identifier before `.`, `::` or `->`, lowercased (a chained call's
    /// receiver is the previous call's name).
    pub receiver: Option<String>,
    /// Offsets of the opening and closing parenthesis (or brace, for a Go
    /// composite literal); the end of the text for an unclosed one.
    pub open: usize,
    pub close: usize,
}

/// Every call (and Go composite literal `Name{…}`) in `source`, in order.
pub(crate) fn calls(source: &Source) -> Vec<Call> {
    let code = source.code.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < code.len() {
        if !is_ident(code[i]) || (i > 0 && is_ident(code[i - 1])) {
            i += 1;
            continue;
        }
        let start = i;
        while i < code.len() && is_ident(code[i]) {
            i += 1;
        }
        let mut j = i;
        while j < code.len() && code[j] == b' ' {
            j += 1;
        }
        let brace = source.language == Language::Go && code.get(j) == Some(&b'{');
        if code.get(j) != Some(&b'(') && !brace {
            continue;
        }
        if code[start].is_ascii_digit() {
            continue;
        }
        let (up, down) = if brace { (b'{', b'}') } else { (b'(', b')') };
        // An unclosed call runs to the end of the text.
        let close = matching(code, j, up, down).unwrap_or(code.len());
        out.push(Call {
            name: source.code[start..i].to_ascii_lowercase(),
            at: start,
            receiver: receiver(&source.code, start),
            open: j,
            close,
        });
    }
    out
}

/// The identifier before the `.`, `::` or `->` that precedes `at`.
fn receiver(code: &str, at: usize) -> Option<String> {
    let before = code[..at].trim_end();
    let before = before
        .strip_suffix('.')
        .or_else(|| before.strip_suffix("::"))
        .or_else(|| before.strip_suffix("->"))?
        .trim_end();
    let before = before.strip_suffix("()").unwrap_or(before);
    let before = before.strip_suffix('?').unwrap_or(before);
    let bytes = before.as_bytes();
    if bytes.last() == Some(&b')') {
        // A chained call: the receiver is the previous call's name.
        let mut depth = 0usize;
        let mut k = bytes.len();
        while k > 0 {
            k -= 1;
            match bytes[k] {
                b')' => depth += 1,
                b'(' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                _ => {}
            }
        }
        return ident_before(before, k);
    }
    ident_before(before, bytes.len())
}

/// The identifier ending at byte `end` of `text`, lowercased.
fn ident_before(text: &str, end: usize) -> Option<String> {
    let bytes = text.as_bytes();
    let start = (0..end).rev().take_while(|&k| is_ident(bytes[k])).last()?;
    Some(text[start..end].to_ascii_lowercase())
}

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
pub(crate) fn locks(source: &Source, calls: &[Call], rules: &Rules) -> Vec<Hit> {
    let lower = source.code.to_ascii_lowercase();
    let facts = FileFacts {
        uses: rules.uses(&lower),
        call_names: calls.iter().map(|c| c.name.as_str()).collect(),
    };
    let assigned = |c: &Call| assigned_name(&source.code, c.at);
    let bound: Vec<Vec<String>> = rules
        .rules()
        .iter()
        .map(|r| r.bound_names(calls, &assigned))
        .collect();
    let mut hits = Vec::new();
    for c in calls {
        let first_arg = first_arg_literal(source, c);
        let nx = || nx_in_args(source, c);
        let keyword = |name: &str| kwarg(source, c, name);
        let found = rules
            .rules()
            .iter()
            .zip(&bound)
            .find(|(rule, bound)| rule.matches(c, &facts, bound, first_arg, &nx, &keyword));
        if let Some((rule, _)) = found {
            hits.push(Hit {
                at: c.at,
                kind: rule.kind(),
                end: c.close,
                scope_end: None,
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
            let end = source.next_block_end(i);
            hits.push(Hit {
                at: i,
                kind: rule.kind(),
                end: i + annotation.len(),
                scope_end: Some(end),
            });
        }
    }
    hits.extend(leader_guards(&lower));
    hits.extend(text_commands(source, calls));
    hits.sort_by_key(|h| h.at);
    // One finding per line: the first (the patterns overlap on a line such
    // as `Do(ctx, "SET", k, v, "NX")`).
    hits.dedup_by_key(|h| source.line(h.at));
    hits
}

/// The name assigned by the statement that `at` is in: `x = …`, `x := …`,
/// `let x: T = …`, `name: Type = …` (the name, not the type).
pub(crate) fn assigned_name(code: &str, at: usize) -> Option<String> {
    let line_start = code[..at].rfind('\n').map_or(0, |i| i + 1);
    let before = &code[line_start..at];
    let eq = before.rfind('=')?;
    if before[eq + 1..].contains('(') {
        return None;
    }
    let lhs = before[..eq].trim_end().trim_end_matches(':').trim_end();
    let lhs = match lhs.rfind(':') {
        // `name: Type` (TypeScript, Rust, Kotlin): the name.
        Some(i) if !lhs[..i].ends_with(':') => lhs[..i].trim_end(),
        _ => lhs,
    };
    let name = ident_before(lhs, lhs.len())?;
    (!name.is_empty()).then_some(name)
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
    let end = c.close;
    let args: String = source.code[c.open..(end + 1).min(source.code.len())]
        .to_ascii_lowercase()
        .split_whitespace()
        .collect();
    let code_marker = ["nx=true", "nx:true", ".nx()", "existencecheck::nx", "nx()"]
        .iter()
        .any(|m| args.contains(m));
    let literal_marker = source
        .strings
        .iter()
        .filter(|l| l.start > c.open && l.start < end)
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
        if lower[..i].ends_with('.') {
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
            });
        }
    }
    hits
}

/// Locks taken by commands written as text: `Do(ctx, "SET", k, v, "NX",
/// "PX", ttl)`, `cmd("SETNX")`, a Lua script's `redis.call('SET', …, 'NX')`,
/// and `SELECT pg_advisory_lock(…)` in a query string.
fn text_commands(source: &Source, calls: &[Call]) -> Vec<Hit> {
    let mut hits = Vec::new();
    if source.language == Language::Sql {
        return hits;
    }
    for lit in &source.strings {
        let text = lit.text.to_ascii_lowercase();
        let body = lit.body;
        // A statement calling pg_advisory_lock (prose has no parenthesis).
        for f in [
            "pg_advisory_lock",
            "pg_try_advisory_lock",
            "pg_advisory_xact_lock",
            "pg_try_advisory_xact_lock",
        ] {
            if let Some(i) = find_word(&text, f) {
                if text[i + f.len()..].trim_start().starts_with('(') {
                    hits.push(literal_hit(body + i, lit.end, Kind::PgAdvisoryLock));
                    break;
                }
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
            let Some(call) = enclosing_call(calls, lit.start) else {
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
    }
}
