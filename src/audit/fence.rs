//! Whether the writes after a lock are fenced: each write in the lock's
//! scope is found (a SQL statement, a storage call), then judged guarded
//! (its statement checks a token, version or precondition), carrying a
//! token whose check is out of sight, or unguarded.

use super::source::{find_word, words, Source};
use super::Language;

/// Storage calls counted as writes, lowercased. Executors of SQL text
/// (`execute`, `query`, `Exec`) are not here: the statement they run is.
const WRITE_CALLS: [&str; 31] = [
    "put",
    // Consul's check-and-set (`kv.CAS(&api.KVPair{…, ModifyIndex: i})`).
    "cas",
    "put_object",
    "putobject",
    "opput",
    "op_put",
    "upload",
    "upload_file",
    "upload_fileobj",
    "save",
    "write",
    "write_all",
    "writefile",
    "write_file",
    "insert",
    "insert_one",
    "insert_many",
    "update",
    "update_one",
    "update_many",
    "update_item",
    "updateitem",
    "put_item",
    "putitem",
    "replace_one",
    "upsert",
    "store",
    "persist",
    "create_or_replace",
    "set_object",
    "commit_write",
];

/// Markers of a conditional write, lowercased: object-store preconditions,
/// DynamoDB conditions, compare-and-set, etcd revision compares (and an
/// etcd mutex's `IsOwner`, which is one).
const PRECONDITIONS: [&str; 31] = [
    "ifmatch",
    "if_match",
    "if-match",
    "ifnonematch",
    "if_none_match",
    "if-none-match",
    "ifgenerationmatch",
    "if_generation_match",
    "ifmetagenerationmatch",
    "conditionexpression",
    "condition_expression",
    "compareandset",
    "compare_and_set",
    "compareandswap",
    "compare_and_swap",
    "modrevision",
    "mod_revision",
    "createrevision",
    "create_revision",
    "expectedversion",
    "expected_version",
    // etcd's `Txn().If(mutex.IsOwner())`: the mutex key's create revision.
    "isowner",
    // python-etcd3's `transaction(compare=[client.transactions.version(k)
    // == v], …)`: a compare on a key's version or revisions.
    "transactions.version",
    "transactions.mod",
    "transactions.create",
    // Consul: a check-and-set on the key's `ModifyIndex` (or its
    // `LockIndex`), python-consul's `kv.put(…, cas=index)`.
    "modifyindex",
    "modify_index",
    "lockindex",
    "lock_index",
    "cas=",
    // jetcd's `Cmp(key, op, CmpTarget.modRevision(…))` and its kin.
    "cmptarget.",
];

/// Parts of a name that say it holds a token: a fencing token, a version,
/// an epoch, a revision, a generation, an ETag, a sequencer, a zxid.
const TOKEN_WORDS: [&str; 12] = [
    "token",
    "fence",
    "epoch",
    "version",
    "revision",
    "generation",
    "etag",
    "sequencer",
    "zxid",
    "xmin",
    "lockindex",
    "lock_index",
];

/// A write in a lock's scope.
#[derive(Clone, Debug)]
pub(crate) struct Write {
    pub at: usize,
    pub end: usize,
    /// `UPDATE`, `put_object`, …
    pub name: String,
    pub guard: Guard,
}

/// Whether `c` is a storage call counted as a write.
pub(crate) fn is_write_call(c: &super::syntax::Call) -> bool {
    WRITE_CALLS.contains(&c.name.as_str()) && c.receiver.is_some()
}

/// Whether a write is a SQL statement (`UPDATE`, `INSERT`, …), not a
/// storage call.
pub(crate) fn is_statement(w: &Write) -> bool {
    // A statement's name is its verb in capitals; a call's, as written.
    ["UPDATE", "INSERT", "DELETE", "MERGE", "UPSERT", "REPLACE"].contains(&w.name.as_str())
}

/// How a write is protected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Guard {
    /// Its statement checks this: "`fence_token <` in its WHERE clause",
    /// "`IfMatch`".
    Checked(String),
    /// It carries a token (this name), checked where we cannot see.
    Carries(String),
    /// Nothing.
    None,
}

/// The writes between `from` and `to`, in order.
pub(crate) fn writes(source: &Source, from: usize, to: usize) -> Vec<Write> {
    let mut out = sql_writes(source, from, to);
    let constants = source.sql_constants.get_or_init(|| sql_constants(source));
    // A statement kept in a constant and run in scope: `cur.execute(UPDATE_SQL, …)`.
    let mut lower: Option<String> = None;
    for (name, lit, _) in constants
        .iter()
        .filter(|(_, _, at)| !(from..to).contains(at))
    {
        let lower = lower.get_or_insert_with(|| source.code[from..to].to_ascii_lowercase());
        let mut start = 0;
        while let Some(i) = find_word(&lower[start..], name).map(|i| start + i) {
            start = i + name.len();
            let at = from + i;
            if source.is_quiet(at) {
                continue;
            }
            if let Some((verb, guard)) = sql_statement(lit) {
                out.push(Write {
                    at,
                    end: at + name.len(),
                    name: verb,
                    guard,
                });
            }
        }
    }
    let statements: Vec<(usize, usize)> = out.iter().map(|w| (w.at, w.end)).collect();
    for c in source.calls_in(from, to) {
        if !WRITE_CALLS.contains(&c.name.as_str()) || c.receiver.is_none() || source.is_quiet(c.at)
        {
            continue;
        }
        // A function of the file that writes (`l.store(…)`) is followed:
        // its writes stand for the call.
        let writes_itself = source.defined(&c.name).any(|f| {
            let (a, b) = f.body;
            !sql_writes(source, a, b).is_empty()
                || source.calls_in(a, b).iter().any(|d| {
                    d.name != c.name
                        && WRITE_CALLS.contains(&d.name.as_str())
                        && d.receiver.is_some()
                })
        });
        if writes_itself {
            continue;
        }
        // A call that runs a statement found above is that statement.
        if statements.iter().any(|&(a, _)| c.open < a && a < c.close) {
            continue;
        }
        out.push(Write {
            at: c.at,
            end: c.close,
            name: source.code[c.at..c.open].trim().to_owned(),
            guard: Guard::None,
        });
    }
    out.sort_by_key(|w| w.at);
    // Judge the calls: a precondition in the call or in the lines building
    // its request since the previous write; else a token it carries.
    let mut boundary = from;
    for w in &mut out {
        if w.guard == Guard::None && !is_statement(w) {
            let line = source.line(w.at);
            // Not past the previous write, nor past this one (a write nested
            // in another's arguments).
            let window_start = boundary
                .max(source.line_start(line.saturating_sub(8).max(1)))
                .min(w.at);
            let window_end = (w.end + 1).min(source.code.len());
            w.guard = call_guard(source, window_start, window_end, w.at);
        }
        boundary = boundary.max(w.end);
    }
    out
}

/// The guard of a storage call whose request is built in `from..to`.
fn call_guard(source: &Source, from: usize, to: usize, call_at: usize) -> Guard {
    let code = source.code[from..to].to_ascii_lowercase();
    for marker in PRECONDITIONS {
        // Shown as written: `IfMatch`, `ifGenerationMatch`, `If-Match`.
        if let Some(i) = code.find(marker) {
            let at = from + i;
            return Guard::Checked(format!("`{}`", &source.code[at..at + marker.len()]));
        }
        let written = source.strings_in(from, to).iter().find_map(|l| {
            let i = l.text.to_ascii_lowercase().find(marker)?;
            Some(l.text[i..i + marker.len()].to_owned())
        });
        if let Some(written) = written {
            return Guard::Checked(format!("`{written}`"));
        }
    }
    // A token among the call's own arguments.
    let args = source.code[call_at..to].to_ascii_lowercase();
    for word in identifiers(&args) {
        if TOKEN_WORDS.iter().any(|t| word.contains(t)) {
            return Guard::Carries(word.to_owned());
        }
    }
    Guard::None
}

fn identifiers(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty() && !w.as_bytes()[0].is_ascii_digit())
}

/// SQL writes in `from..to`: statements in string literals, or the code of
/// a `.sql` file.
fn sql_writes(source: &Source, from: usize, to: usize) -> Vec<Write> {
    let mut out = Vec::new();
    if source.language == Language::Sql {
        let lower = source.code.to_ascii_lowercase();
        for verb in ["update", "insert", "delete", "merge"] {
            let mut start = from;
            while let Some(i) = find_word(&lower[start..to], verb).map(|i| start + i) {
                start = i + verb.len();
                let end = lower[i..].find(';').map_or(lower.len(), |n| i + n);
                if let Some((name, guard)) = sql_statement(&source.code[i..end]) {
                    out.push(Write {
                        at: i,
                        end,
                        name,
                        guard,
                    });
                }
            }
        }
        return out;
    }
    let literals = source.strings_in(from, to);
    let mut i = 0;
    while i < literals.len() {
        let lit = &literals[i];
        i += 1;
        // A logged or traced statement is not run.
        if source.is_quiet(lit.start) {
            continue;
        }
        // A statement written in parts (`"UPDATE … " + "WHERE …"`, Python's
        // adjacent literals) is judged whole.
        let mut text = lit.text.clone();
        let mut end = lit.end;
        while let Some(next) = literals.get(i).filter(|n| continues(source, end, n.start)) {
            text.push_str(&next.text);
            end = next.end;
            i += 1;
        }
        if let Some((name, guard)) = sql_statement(&text) {
            out.push(Write {
                at: lit.start,
                end,
                name,
                guard,
            });
        }
    }
    out
}

/// Whether the literal starting at `next` continues the one ending at
/// `end`: only quotes, `+`, a line continuation and spaces between them.
fn continues(source: &Source, end: usize, next: usize) -> bool {
    next > end
        && next - end < 200
        && source.code[end..next]
            .chars()
            .all(|c| c.is_whitespace() || matches!(c, '"' | '\'' | '`' | '#' | '+' | '\\'))
}

/// If `text` is a writing SQL statement: its verb and guard. The guard is a
/// comparison on a token-like column in its `WHERE` clause (`lock_token <=
/// :token`, `version = ?`): a column set in `SET` does not count.
pub(crate) fn sql_statement(text: &str) -> Option<(String, Guard)> {
    let lower = text.trim_start().to_ascii_lowercase();
    let first = lower.split_whitespace().next()?;
    let verb = match first {
        "update" | "insert" | "delete" | "merge" | "upsert" | "replace" => first,
        "with" => ["update", "insert", "delete"]
            .into_iter()
            .find(|v| find_word(&lower, v).is_some())?,
        _ => return None,
    };
    let guard = match find_word(&lower, "where") {
        Some(w) => token_comparison(&lower[w..]).map_or(Guard::None, |c| {
            Guard::Checked(format!("`{c}` in its WHERE clause"))
        }),
        None => Guard::None,
    };
    Some((verb.to_ascii_uppercase(), guard))
}

/// The first comparison on a token-like name in a `WHERE` clause:
/// `fence_token <`, `< :token`, `version =`.
fn token_comparison(clause: &str) -> Option<String> {
    for (start, i) in words(clause) {
        let word = &clause[start..i];
        if !TOKEN_WORDS.iter().any(|t| word.contains(t)) {
            continue;
        }
        let after = clause[i..].trim_start();
        let op_after: String = after.chars().take_while(|c| "<>=!".contains(*c)).collect();
        if !op_after.is_empty() {
            return Some(format!("{word} {op_after}"));
        }
        let before = clause[..start]
            .trim_end_matches([':', '$', '@', '?'])
            .trim_end();
        let op_before: String = before
            .chars()
            .rev()
            .take_while(|c| "<>=!".contains(*c))
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        if !op_before.is_empty() {
            return Some(format!("{op_before} {word}"));
        }
    }
    None
}

/// SQL statements kept in named constants: `UPDATE_SQL = "UPDATE …"`,
/// `const q = \`UPDATE …\``, `static final String SQL = "UPDATE …"`.
fn sql_constants(source: &Source) -> Vec<(String, String, usize)> {
    source
        .strings
        .iter()
        .filter(|l| sql_statement(&l.text).is_some())
        .filter_map(|l| Some((l.bound.clone()?, l.text.clone(), l.start)))
        .filter(|(name, _, _)| name.len() > 2)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_where_clause_on_a_token_guards_and_a_set_does_not() {
        let guarded = sql_statement("UPDATE t SET v = $1 WHERE id = $2 AND fence_token < $3");
        assert_eq!(
            guarded,
            Some((
                "UPDATE".to_owned(),
                Guard::Checked("`fence_token <` in its WHERE clause".to_owned())
            ))
        );
        let unguarded = sql_statement("UPDATE t SET v = $1, token = $2 WHERE id = $3");
        assert_eq!(unguarded, Some(("UPDATE".to_owned(), Guard::None)));
        let bound = sql_statement("update t set v = 1 where id = 1 and :token >= lock_token");
        assert!(matches!(bound, Some((_, Guard::Checked(_)))), "{bound:?}");
        assert_eq!(sql_statement("SELECT * FROM t WHERE version = 1"), None);
    }
}
