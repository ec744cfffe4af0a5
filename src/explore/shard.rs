//! `--shard K/N`: seed `s` belongs to shard `s % N`, so the shards of a range
//! are disjoint, their union is the range, and a seed's shard does not depend
//! on the range it was swept in.
//!
//! Shards print the same JSON lines as a whole sweep; [`merge`] combines them
//! (failing seeds in seed order, one summary), and [`merge_files`], the
//! `fencesim merge` command, combines whole shard files, partial ones too:
//!
//! ```sh
//! fencesim merge shard-*.jsonl
//! ```
//!
//! ```
//! use fencesim::explore::shard::Shard;
//! let shards = [Shard::parse("0/2").unwrap(), Shard::parse("1/2").unwrap()];
//! let covered: Vec<u64> = (0..10).filter(|s| shards.iter().any(|k| k.contains(*s))).collect();
//! assert_eq!(covered, (0..10).collect::<Vec<_>>());
//! ```

use std::fmt;
use std::ops::Range;

use serde_json::{json, Value};

/// One shard of a sweep: `index` of `count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// `K`, from 0.
    pub index: u64,
    /// `N`, at least 1.
    pub count: u64,
}

impl Shard {
    /// The whole sweep: shard 0 of 1.
    pub const WHOLE: Shard = Shard { index: 0, count: 1 };

    /// `"K/N"` with `K < N`.
    pub fn parse(text: &str) -> Result<Shard, String> {
        let bad = || format!("invalid shard \"{text}\": expected K/N with 0 <= K < N, such as 0/4");
        let (k, n) = text.split_once('/').ok_or_else(bad)?;
        let index: u64 = k.trim().parse().map_err(|_| bad())?;
        let count: u64 = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }

    /// Whether `seed` is this shard's.
    pub fn contains(&self, seed: u64) -> bool {
        seed % self.count == self.index
    }

    /// The `i`-th seed of this shard within `range`, if there is one.
    pub fn nth(&self, range: &Range<u64>, i: u64) -> Option<u64> {
        let offset = (self.index + self.count - range.start % self.count) % self.count;
        let seed = range
            .start
            .checked_add(offset)?
            .checked_add(i.checked_mul(self.count)?)?;
        (seed < range.end).then_some(seed)
    }

    /// How many seeds of `range` are this shard's.
    pub fn len(&self, range: &Range<u64>) -> u64 {
        let offset = (self.index + self.count - range.start % self.count) % self.count;
        let span = range.end.saturating_sub(range.start);
        span.saturating_sub(offset).div_ceil(self.count)
    }

    /// Whether this shard has no seed in `range`.
    pub fn is_empty(&self, range: &Range<u64>) -> bool {
        self.len(range) == 0
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// `"A..B"` (B excluded), `"A..=B"` or a single seed `"A"`.
pub fn parse_range(text: &str) -> Result<Range<u64>, String> {
    let bad = || format!("invalid seed range \"{text}\": expected A..B (B excluded), A..=B or A");
    let number = |s: &str| s.trim().parse::<u64>().map_err(|_| bad());
    let range = if let Some((a, b)) = text.split_once("..=") {
        number(a)?..number(b)?.checked_add(1).ok_or_else(bad)?
    } else if let Some((a, b)) = text.split_once("..") {
        number(a)?..number(b)?
    } else {
        let a = number(text)?;
        a..a.checked_add(1).ok_or_else(bad)?
    };
    if range.start >= range.end {
        return Err(format!("empty seed range \"{text}\": A..B needs A < B"));
    }
    Ok(range)
}

/// Merges the JSON lines of several shards (or sweeps): the failing seeds'
/// lines in seed order, then one summary that adds up the shards' counts
/// (`seeds`, `violations`, `crashed`, the outcomes, …), with the lowest
/// `first_failing_seed` and the slowest shard's `wall_ms`.
///
/// Shards may be partial (stopped, or killed after a checkpoint): each
/// shard's last summary or checkpoint line counts, with the seeds its
/// `completed_ranges` cover, and the merged summary lists what is missing
/// as `gaps` (`[{"shard": "1/4", "missing": [[a, b]]}]`, a shard that left
/// no line at all missing its whole range) and says `"complete": false`.
/// Give each shard's lines once (a resumed shard's output replaces the
/// stopped one's). Lines that are not JSON objects are an error.
pub fn merge<'a>(lines: impl IntoIterator<Item = &'a str>) -> Result<Vec<Value>, String> {
    let mut parsed = Vec::new();
    for (i, line) in lines.into_iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: Value =
            serde_json::from_str(line).map_err(|e| format!("line {}: not JSON: {e}", i + 1))?;
        parsed.push((format!("line {}", i + 1), v));
    }
    combine(parsed)
}

/// [`merge`] over whole files, `(name, text)`, each the `--json` output of
/// one shard of one sweep (`fencesim merge`). Stricter than [`merge`], and
/// every error names `file:line:column`:
///
/// - a line that is not JSON is an error, except a last line cut in the
///   middle (no newline after it: the shard was killed while writing it),
///   which is left out, as `explore --resume` leaves it out;
/// - a line must be a failing seed's (a numeric `seed`) or a checkpoint or
///   summary, whose `range`, `shard` and `completed_ranges` must parse;
/// - every file must come from the same sweep: one scenario, range, fault
///   mode and shard count;
/// - a shard's checkpoints and summary must all be in one file (a resumed
///   shard's output holds what its stopped run completed: give only it).
///
/// A file with no line at all (a shard killed before its first checkpoint)
/// adds nothing; its shard shows in `gaps`. At least one file must hold a
/// checkpoint or summary.
///
/// ```
/// use fencesim::explore::shard::merge_files;
/// let a = "{\"seed\": 4}\n{\"summary\": true, \"seeds\": 3, \"range\": \"0..6\", \"shard\": \"0/2\", \"completed_ranges\": [[0, 6]]}\n";
/// let b = "{\"progress\": true, \"seeds\": 1, \"range\": \"0..6\", \"shard\": \"1/2\", \"completed_ranges\": [[0, 2]]}\n{\"seed\": 5, \"verd";
/// let merged = merge_files([("a.jsonl", a), ("b.jsonl", b)]).unwrap();
/// let summary = merged.last().unwrap();
/// assert_eq!(summary["seeds"], 4);
/// assert_eq!(summary["complete"], false);
/// assert_eq!(summary["gaps"][0]["missing"], serde_json::json!([[2, 6]]));
/// ```
pub fn merge_files<'a>(
    files: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Result<Vec<Value>, String> {
    // The first line to say each of the sweep's settings: (value, where).
    let mut settings: Vec<(&str, String, String)> = Vec::new();
    // Which file holds each shard's lines.
    let mut shards: Vec<(String, String)> = Vec::new();
    let mut parsed = Vec::new();
    let mut bases = 0;
    for (file, text) in files {
        let lines: Vec<&str> = text.split('\n').collect();
        for (i, line) in lines.iter().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let at = format!("{file}:{}", i + 1);
            let v: Value = match serde_json::from_str(line) {
                Ok(v) => v,
                // Killed while writing its last line.
                Err(_) if i + 1 == lines.len() => continue,
                Err(e) => {
                    return Err(format!(
                        "{at}:{}: not a JSON line of `explore --json`: {e}",
                        e.column()
                    ))
                }
            };
            let bad = |what: &str| format!("{at}:1: {what}");
            let flag = |k: &str| v.get(k).and_then(Value::as_bool) == Some(true);
            if !(flag("summary") || flag("progress")) {
                if v.get("seed").and_then(Value::as_u64).is_none() {
                    return Err(bad(
                        "neither a failing seed's line (a numeric \"seed\") nor a checkpoint \
                         or summary line of `explore --json`",
                    ));
                }
                parsed.push((format!("{at}:1"), v));
                continue;
            }
            bases += 1;
            let text_field = |k: &str| match v.get(k) {
                None => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(_) => Err(bad(&format!("\"{k}\" is not a string"))),
            };
            let range = text_field("range")?;
            if let Some(range) = &range {
                parse_range(range).map_err(|e| bad(&e))?;
            }
            let shard = match text_field("shard")? {
                Some(s) => Some(Shard::parse(&s).map_err(|e| bad(&e))?),
                None => None,
            };
            if let Some(done) = v.get("completed_ranges") {
                super::resume::ranges(done).ok_or_else(|| {
                    bad("completed_ranges is not a list of [start, end] pairs with start <= end")
                })?;
            }
            let count = shard.map(|s| s.count.to_string());
            for (key, value) in [
                ("scenario", text_field("scenario")?),
                ("range", range),
                ("faults", text_field("faults")?),
                ("shard count", count),
            ] {
                let Some(value) = value else { continue };
                match settings.iter().find(|(k, _, _)| *k == key) {
                    Some((_, first, place)) if *first != value => {
                        return Err(bad(&format!(
                            "{key} {value}, but {place} has {key} {first}: \
                             merge takes the shards of one sweep"
                        )))
                    }
                    Some(_) => {}
                    None => settings.push((key, value, at.clone())),
                }
            }
            if let Some(shard) = shard {
                let name = shard.to_string();
                match shards.iter().find(|(s, _)| *s == name) {
                    Some((_, other)) if other != file => {
                        return Err(bad(&format!(
                            "shard {name} is also in {other}: give each shard's output once \
                             (a resumed shard's output holds what its stopped run completed)"
                        )))
                    }
                    Some(_) => {}
                    None => shards.push((name, file.to_owned())),
                }
            }
            parsed.push((format!("{at}:1"), v));
        }
    }
    if bases == 0 {
        return Err(
            "no checkpoint or summary line in any file: nothing to merge \
             (merge reads the output of `explore --json`)"
                .to_owned(),
        );
    }
    combine(parsed)
}

/// The merge of lines already read, each with where it came from (for the
/// key of a summary that names no shard, and for errors).
fn combine(lines: Vec<(String, Value)>) -> Result<Vec<Value>, String> {
    use super::resume::{add, ranges, Sessions};
    use super::sweep::{ranges_json, subtract};
    let mut seeds_lines: Vec<Value> = Vec::new();
    // Each shard's last summary or checkpoint, by shard (lines of an older
    // fencesim name no shard: each of those counts on its own).
    let mut bases: Vec<(String, Value)> = Vec::new();
    for (at, v) in lines {
        let flag = |k: &str| v.get(k).and_then(Value::as_bool) == Some(true);
        if flag("summary") || flag("progress") {
            let key = match v.get("shard").and_then(Value::as_str) {
                Some(shard) => shard.to_owned(),
                None => at,
            };
            bases.retain(|(k, _)| *k != key);
            bases.push((key, v));
        } else if v.get("seed").is_some() {
            seeds_lines.push(v);
        } else {
            return Err(format!("{at}: neither a seed nor a summary"));
        }
    }
    bases.sort_by(|a, b| a.0.cmp(&b.0));
    let shard_of = |v: &Value| {
        v.get("shard")
            .and_then(Value::as_str)
            .and_then(|s| Shard::parse(s).ok())
    };
    // A seed counts when a shard that holds it has run it.
    let covered = |seed: u64| {
        bases.iter().any(|(_, b)| {
            let shard = shard_of(b).unwrap_or(Shard::WHOLE);
            shard.contains(seed)
                && match b.get("completed_ranges").and_then(ranges) {
                    Some(done) => done.iter().any(|r| r.contains(&seed)),
                    None => true,
                }
        })
    };
    seeds_lines.retain(|v| v.get("seed").and_then(Value::as_u64).is_some_and(covered));
    seeds_lines.sort_by_key(|v| v.get("seed").and_then(Value::as_u64));
    seeds_lines.dedup_by_key(|v| v.get("seed").and_then(Value::as_u64));
    let mut summary = json!({"summary": true, "seeds": 0, "violations": 0, "crashed": 0,
        "first_failing_seed": null, "by_kind": {}, "outcomes": {}, "wall_ms": 0});
    for (_, b) in &bases {
        summary = add(&summary, b, Sessions::Parallel);
    }
    let map = summary.as_object_mut().expect("an object");
    map.remove("progress");
    map.insert("summary".into(), true.into());
    // Gaps: what each shard of the range has not run.
    let range = bases
        .iter()
        .find_map(|(_, b)| b.get("range").and_then(Value::as_str))
        .and_then(|r| parse_range(r).ok());
    let count = bases.iter().find_map(|(_, b)| shard_of(b)).map(|s| s.count);
    if let (Some(range), Some(count)) = (range, count) {
        let mut gaps = Vec::new();
        for index in 0..count {
            let shard = Shard { index, count };
            let done = bases
                .iter()
                .find(|(_, b)| shard_of(b) == Some(shard))
                .map(|(_, b)| {
                    b.get("completed_ranges")
                        .and_then(ranges)
                        .unwrap_or_else(|| vec![range.clone()])
                })
                .unwrap_or_default();
            let missing: Vec<Range<u64>> = subtract(&range, &done)
                .into_iter()
                .filter(|r| !shard.is_empty(r))
                .collect();
            if !missing.is_empty() {
                gaps.push(json!({"shard": shard.to_string(), "missing": ranges_json(&missing)}));
            }
        }
        map.insert("complete".into(), gaps.is_empty().into());
        map.insert("gaps".into(), gaps.into());
        map.insert("shards".into(), count.into());
        map.insert(
            "range".into(),
            format!("{}..{}", range.start, range.end).into(),
        );
        // Per-shard fields mean nothing for the whole.
        map.remove("completed_ranges");
        map.remove("shard");
        map.remove("jobs");
    }
    seeds_lines.push(summary);
    Ok(seeds_lines)
}
