//! `--shard K/N`: seed `s` belongs to shard `s % N`, so the shards of a range
//! are disjoint, their union is the range, and a seed's shard does not depend
//! on the range it was swept in.
//!
//! Shards print the same JSON lines as a whole sweep; [`merge`] combines them
//! (failing seeds in seed order, one summary). With only a shell:
//!
//! ```sh
//! cat shard-*.jsonl | jq -c 'select(.summary | not)' | jq -sc 'sort_by(.seed)[]'
//! cat shard-*.jsonl | jq -sc '[.[] | select(.summary)] | {seeds: (map(.seeds) | add),
//!   violations: (map(.violations) | add),
//!   first_failing_seed: (map(.first_failing_seed | select(. != null)) | min)}'
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
/// lines in seed order, then one summary adding up `seeds`, `violations`,
/// `crashed`, `inconclusive`, `cut_short`, `unfired`, `wall_ms`, the
/// outcomes and the seeds per milestone, with the lowest
/// `first_failing_seed`. Lines that are not JSON objects are an error.
pub fn merge<'a>(lines: impl IntoIterator<Item = &'a str>) -> Result<Vec<Value>, String> {
    let mut seeds_lines: Vec<Value> = Vec::new();
    let (mut seeds, mut violations, mut crashed, mut wall_ms) = (0u64, 0u64, 0u64, 0u64);
    let mut first: Option<u64> = None;
    let mut outcomes = serde_json::Map::new();
    let mut by_kind = serde_json::Map::new();
    let mut milestones = serde_json::Map::new();
    let mut untested = [("inconclusive", 0u64), ("cut_short", 0), ("unfired", 0)];
    for (i, line) in lines.into_iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: Value =
            serde_json::from_str(line).map_err(|e| format!("line {}: not JSON: {e}", i + 1))?;
        if v.get("summary").and_then(Value::as_bool) == Some(true) {
            let n = |k: &str| v.get(k).and_then(Value::as_u64).unwrap_or(0);
            seeds += n("seeds");
            violations += n("violations");
            crashed += n("crashed");
            for (key, count) in &mut untested {
                *count += n(key);
            }
            wall_ms = wall_ms.max(n("wall_ms"));
            if let Some(f) = v.get("first_failing_seed").and_then(Value::as_u64) {
                first = Some(first.map_or(f, |g: u64| g.min(f)));
            }
            let tables = [
                ("outcomes", &mut outcomes),
                ("by_kind", &mut by_kind),
                ("milestones", &mut milestones),
            ];
            for (table, into) in tables {
                if let Some(map) = v.get(table).and_then(Value::as_object) {
                    for (k, c) in map {
                        let sum = into.get(k).and_then(Value::as_u64).unwrap_or(0)
                            + c.as_u64().unwrap_or(0);
                        into.insert(k.clone(), sum.into());
                    }
                }
            }
        } else if v.get("seed").is_some() {
            seeds_lines.push(v);
        } else {
            return Err(format!("line {}: neither a seed nor a summary", i + 1));
        }
    }
    seeds_lines.sort_by_key(|v| v.get("seed").and_then(Value::as_u64));
    let mut summary = json!({
        "summary": true,
        "seeds": seeds,
        "violations": violations,
        "crashed": crashed,
        "first_failing_seed": first,
        "by_kind": by_kind,
        "outcomes": outcomes,
        "milestones": milestones,
        // The slowest shard bounds a parallel batch's wall time.
        "wall_ms": wall_ms,
    });
    for (key, count) in untested {
        summary[key] = count.into();
    }
    seeds_lines.push(summary);
    Ok(seeds_lines)
}
