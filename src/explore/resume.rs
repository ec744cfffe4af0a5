//! `explore --resume FILE`: continue a sweep from its own `--json` output.
//!
//! A sweep's JSON lines carry what resuming needs: every checkpoint
//! (`"progress": true`) and the summary (`"summary": true`) name the seeds
//! completed so far as `completed_ranges` (half-open `[a, b)` pairs), with
//! the counts over exactly those seeds, the range, the shard and the fault
//! mode; failing seeds have one line each. [`read`] takes the last such line
//! (a sweep killed outright still left its last checkpoint), the failing
//! seeds it covers, and leaves the rest to run again.
//!
//! ```
//! let out = r#"{"seed": 7, "verdict": "violation"}
//! {"progress": true, "completed_ranges": [[0, 1000]], "seeds": 1000, "range": "0..5000", "shard": "0/1", "faults": "random"}
//! {"seed": 1203, "verdict": "vio"#;
//! let r = fencesim::explore::resume::read(out, "out.jsonl").unwrap();
//! assert_eq!(r.completed, [0..1000]);
//! assert_eq!(r.range, 0..5000);
//! assert_eq!(r.failing.len(), 1); // seed 1203 is not covered: it runs again
//! ```

use std::ops::Range;

use serde_json::Value;

use super::shard::{parse_range, Shard};
use super::sweep::normalize;

/// What a stopped sweep's output says.
#[derive(Clone, Debug)]
pub struct Resumed {
    /// The sweep's whole range.
    pub range: Range<u64>,
    /// Its shard.
    pub shard: Shard,
    /// Its fault mode, with what it needs to go on exactly.
    pub faults: Recorded,
    /// The scenario's name, when the output recorded it.
    pub scenario: Option<String>,
    /// Whether the sweep explored with the generic table (`--generic`),
    /// when the output recorded it.
    pub generic: Option<bool>,
    /// Whether each seed varied its workload (`--workloads`), when the
    /// output recorded it.
    pub workloads: Option<bool>,
    /// Seed ranges completed, half-open, normalized.
    pub completed: Vec<Range<u64>>,
    /// The failing seeds' lines within `completed`, in seed order, one per
    /// seed.
    pub failing: Vec<Value>,
    /// The checkpoint or summary line the counts come from.
    pub base: Value,
}

/// A stopped sweep's fault mode, as its checkpoints record it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Recorded {
    /// `--faults random`.
    Random,
    /// `--faults scenario`.
    Scenario,
    /// `--guided`: the corpus it drew from and what it added so far.
    Guided(GuidedRecord),
    /// `--depth D`.
    Depth(u32),
    /// `--exhaustive 1|2`: the depth and the size of the menu; its "seeds"
    /// are the numbers of the injection sets, `0..sets`.
    Exhaustive {
        /// 1 or 2.
        depth: u8,
        /// Injections in the menu.
        menu: u64,
    },
}

impl Recorded {
    /// `random`, `scenario`, `guided`, `depth` or `exhaustive`, as the
    /// lines' `faults` says.
    pub fn as_str(&self) -> &'static str {
        match self {
            Recorded::Random => "random",
            Recorded::Scenario => "scenario",
            Recorded::Guided(_) => "guided",
            Recorded::Depth(_) => "depth",
            Recorded::Exhaustive { .. } => "exhaustive",
        }
    }

    /// The key that numbers a failing line: `injection` for an exhaustive
    /// search, else `seed`.
    pub fn key(&self) -> &'static str {
        match self {
            Recorded::Exhaustive { .. } => "injection",
            _ => "seed",
        }
    }
}

/// What a guided sweep's checkpoint records in its `corpus` object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GuidedRecord {
    /// The `--corpus` file.
    pub file: String,
    /// The entries it loaded from it (the file's first ones).
    pub loaded: usize,
    /// Their fingerprint ([`super::guided::Corpus::fingerprint`]), when
    /// recorded.
    pub fingerprint: Option<String>,
    /// Where the grown corpus is written.
    pub out: String,
    /// The new milestone combinations found so far, each with the lowest
    /// seed that reached it, in seed order.
    pub found: Vec<(u64, Vec<String>)>,
}

/// The largest `--resume` file read, in bytes (256 MiB): a sweep's output
/// holds at most 10 000 failing seed lines and a checkpoint line per 1 000
/// seeds or 5 s, far less than this for any sweep one machine runs.
pub const MAX_RESUME_BYTES: u64 = 256 << 20;

/// The text of the `--resume` file at `path`: a regular file (not a device
/// or a pipe, which could stream forever) of at most [`MAX_RESUME_BYTES`].
pub fn read_file(path: &std::path::Path) -> Result<String, String> {
    use std::io::Read as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(|e| e.to_string())?;
    let meta = file.metadata().map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("not a regular file (a sweep's --json output is one)".to_owned());
    }
    if meta.len() > MAX_RESUME_BYTES {
        return Err(format!(
            "{} bytes, more than a sweep's output can hold ({MAX_RESUME_BYTES} at most)",
            meta.len()
        ));
    }
    let mut text = String::new();
    file.take(MAX_RESUME_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| e.to_string())?;
    if text.len() as u64 > MAX_RESUME_BYTES {
        return Err(format!(
            "more than {MAX_RESUME_BYTES} bytes, more than a sweep's output can hold"
        ));
    }
    Ok(text)
}

/// Reads a sweep's `--json` output (`text`, from `file`). A last line cut in
/// the middle (the sweep was killed while writing it) is ignored; any other
/// line that is not JSON is an error naming `file:line:column`.
pub fn read(text: &str, file: &str) -> Result<Resumed, String> {
    let lines: Vec<&str> = text.split('\n').collect();
    let mut base: Option<(usize, Value)> = None;
    let mut seeds: Vec<Value> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            // The sweep was killed in the middle of writing its last line.
            Err(_) if i + 1 == lines.len() => continue,
            Err(e) => {
                return Err(format!(
                    "{file}:{}:{}: not a JSON line of `explore --json`: {e}",
                    i + 1,
                    e.column()
                ))
            }
        };
        let flag = |k: &str| v.get(k).and_then(Value::as_bool) == Some(true);
        if flag("summary") || flag("progress") {
            if v.get("completed_ranges").is_some() {
                base = Some((i + 1, v));
            }
        } else if v.get("seed").and_then(Value::as_u64).is_some() {
            seeds.push(v);
        }
    }
    let Some((line, base)) = base else {
        return Err(format!(
            "{file}: no checkpoint or summary line with completed_ranges: \
             nothing to resume from (resume reads the output of `explore --json`)"
        ));
    };
    let at = |what: &str| format!("{file}:{line}:1: {what}");
    let text_field = |k: &str| {
        base.get(k)
            .and_then(Value::as_str)
            .ok_or_else(|| at(&format!("missing \"{k}\"")))
    };
    let range = parse_range(text_field("range")?).map_err(|e| at(&e))?;
    let shard = Shard::parse(text_field("shard")?).map_err(|e| at(&e))?;
    let faults = match text_field("faults")? {
        "random" => Recorded::Random,
        "scenario" => Recorded::Scenario,
        "guided" => Recorded::Guided(guided_record(&base).map_err(|e| at(&e))?),
        "depth" => {
            let d = base.get("depth").and_then(Value::as_u64);
            match d.filter(|d| (1..=u64::from(super::depth::MAX_DEPTH)).contains(d)) {
                Some(d) => Recorded::Depth(d as u32),
                None => return Err(at("a --depth sweep's line without its \"depth\" (1 to 16)")),
            }
        }
        "exhaustive" => {
            let depth = base.get("depth").and_then(Value::as_u64);
            let menu = base.get("menu").and_then(Value::as_u64);
            match (depth, menu) {
                (Some(d @ (1 | 2)), Some(menu)) => Recorded::Exhaustive {
                    depth: d as u8,
                    menu,
                },
                _ => {
                    return Err(at(
                        "an --exhaustive search's line without its \"depth\" (1 or 2) and \"menu\"",
                    ))
                }
            }
        }
        other => return Err(at(&format!("unknown faults \"{other}\""))),
    };
    let given = raw_ranges(&base["completed_ranges"]).ok_or_else(|| {
        at("completed_ranges is not a list of [start, end] pairs with start <= end")
    })?;
    check_consistent(&base, &range, &shard, &given).map_err(|e| at(&e))?;
    let completed = normalize(given);
    let covered = |s: u64| completed.iter().any(|r| r.contains(&s));
    let key = faults.key();
    let mut failing: Vec<Value> = seeds
        .into_iter()
        .filter(|v| v[key].as_u64().is_some_and(covered))
        .collect();
    failing.sort_by_key(|v| v[key].as_u64());
    failing.dedup_by_key(|v| v[key].as_u64());
    let claimed = base.get("failing_seeds").and_then(Value::as_u64);
    if let Some(claimed) = claimed.filter(|&n| failing.len() as u64 > n) {
        return Err(at(&format!(
            "it counts {claimed} failing seeds in completed_ranges, but the file has {} \
             failing seed lines there: not the output of one sweep",
            failing.len()
        )));
    }
    Ok(Resumed {
        range,
        shard,
        faults,
        scenario: base
            .get("scenario")
            .and_then(Value::as_str)
            .map(str::to_owned),
        generic: base.get("generic").and_then(Value::as_bool),
        workloads: base.get("workloads").and_then(Value::as_bool),
        completed,
        failing,
        base,
    })
}

/// A guided sweep's `corpus` object.
fn guided_record(base: &Value) -> Result<GuidedRecord, String> {
    let bad = || {
        "a --guided sweep's line without its \"corpus\" object (file, loaded, out, found): \
         it was written by a fencesim that could not resume guided sweeps"
            .to_owned()
    };
    let c = base
        .get("corpus")
        .filter(|c| c.is_object())
        .ok_or_else(bad)?;
    let text = |k: &str| c.get(k).and_then(Value::as_str).map(str::to_owned);
    let (Some(file), Some(out), Some(loaded)) = (
        text("file"),
        text("out"),
        c.get("loaded").and_then(Value::as_u64),
    ) else {
        return Err(bad());
    };
    let mut found = Vec::new();
    for pair in c.get("found").and_then(Value::as_array).ok_or_else(bad)? {
        let entry = pair.as_array().filter(|p| p.len() == 2).and_then(|p| {
            let seed = p[0].as_u64()?;
            let names: Option<Vec<String>> = p[1]
                .as_array()?
                .iter()
                .map(|n| n.as_str().map(str::to_owned))
                .collect();
            Some((seed, names?))
        });
        found.push(entry.ok_or_else(|| {
            format!("corpus.found holds {pair}, not a [seed, [milestone, …]] pair")
        })?);
    }
    Ok(GuidedRecord {
        file,
        loaded: loaded as usize,
        fingerprint: text("fingerprint"),
        out,
        found,
    })
}

/// The counts a checkpoint or summary carries: each, when present, a
/// non-negative integer.
const COUNTS: [&str; 13] = [
    "seeds",
    "violations",
    "crashed",
    "timed_out",
    "failing_seeds",
    "inconclusive",
    "cut_short",
    "cut_short_unexplained",
    "idle_process",
    "unfired",
    "sim_ms",
    "sim_ns",
    "mechanism_seeds",
];

/// Whether a checkpoint or summary line agrees with itself and with the
/// sweep it names: its counts are non-negative integers, its completed
/// ranges (`given`, as the line lists them) lie inside `range` and do not
/// overlap (one sweep never runs a seed twice), and `seeds` is the number
/// of `shard`'s seeds in them.
fn check_consistent(
    base: &Value,
    range: &Range<u64>,
    shard: &Shard,
    given: &[Range<u64>],
) -> Result<(), String> {
    for key in COUNTS {
        if let Some(v) = base.get(key) {
            if v.as_u64().is_none() {
                return Err(format!("\"{key}\" is {v}, not a count"));
            }
        }
    }
    let mut sorted = given.to_vec();
    sorted.sort_unstable_by_key(|r| (r.start, r.end));
    for r in &sorted {
        if r.start < range.start || r.end > range.end {
            return Err(format!(
                "completed range [{}, {}] lies outside the sweep's range {}..{}",
                r.start, r.end, range.start, range.end
            ));
        }
    }
    if let Some(w) = sorted.windows(2).find(|w| w[1].start < w[0].end) {
        return Err(format!(
            "completed ranges [{}, {}] and [{}, {}] overlap: a sweep runs each seed once",
            w[0].start, w[0].end, w[1].start, w[1].end
        ));
    }
    // Disjoint, so the seeds of each range add up.
    let in_shard: u64 = sorted.iter().map(|r| shard.len(r)).sum();
    if let Some(seeds) = base.get("seeds").and_then(Value::as_u64) {
        if seeds != in_shard {
            return Err(format!(
                "it counts {seeds} seeds, but its completed ranges hold {in_shard} seeds of \
                 shard {shard}"
            ));
        }
    }
    Ok(())
}

/// `[[a, b], …]` as ranges, normalized; `None` if malformed.
pub fn ranges(v: &Value) -> Option<Vec<Range<u64>>> {
    raw_ranges(v).map(normalize)
}

/// `[[a, b], …]` as ranges, as listed; `None` if malformed.
fn raw_ranges(v: &Value) -> Option<Vec<Range<u64>>> {
    let mut out = Vec::new();
    for pair in v.as_array()? {
        let pair = pair.as_array()?;
        let (a, b) = (pair.first()?.as_u64()?, pair.get(1)?.as_u64()?);
        if pair.len() != 2 || a > b {
            return None;
        }
        out.push(a..b);
    }
    Some(out)
}

/// Adds up two summary (or checkpoint) lines: counts are added, tables of
/// counts (`outcomes`, `by_kind`, …) key by key, `first_failing_seed` is
/// the lower, `completed_ranges` the union; `wall_ms` is added for
/// `Sequential` sessions (a resumed sweep) and the larger one is kept for
/// `Parallel` ones (shards). Any other field is `b`'s. Counters that a
/// summary gains later are added up too, without changes here.
pub fn add(a: &Value, b: &Value, sessions: Sessions) -> Value {
    let (Some(a), Some(b)) = (a.as_object(), b.as_object()) else {
        return b.clone();
    };
    let mut out = a.clone();
    for (k, vb) in b {
        let va = a.get(k);
        let merged = match (k.as_str(), va) {
            (_, None) => vb.clone(),
            ("first_failing_seed" | "first_mechanism_seed", Some(va)) => {
                match (va.as_u64(), vb.as_u64()) {
                    (Some(x), Some(y)) => x.min(y).into(),
                    (x, y) => x.or(y).into(),
                }
            }
            // The lower seed's, with what came with it.
            ("first_cut_short" | "first_nondeterministic", Some(va)) => {
                let seed = |v: &Value| v.get("seed").and_then(Value::as_u64);
                match (seed(va), seed(vb)) {
                    (Some(x), Some(y)) if y < x => vb.clone(),
                    (Some(_), _) => va.clone(),
                    _ => vb.clone(),
                }
            }
            ("completed_ranges", Some(va)) => {
                let mut all = ranges(va).unwrap_or_default();
                all.extend(ranges(vb).unwrap_or_default());
                super::sweep::ranges_json(&normalize(all))
            }
            ("wall_ms", Some(va)) if sessions == Sessions::Parallel => {
                va.as_u64().max(vb.as_u64()).into()
            }
            ("failing_seeds_truncated", Some(va)) => {
                (va.as_bool() == Some(true) || vb.as_bool() == Some(true)).into()
            }
            // Of shards, any one's reason to stop.
            ("stopped_by", Some(va)) if sessions == Sessions::Parallel && vb.is_null() => {
                va.clone()
            }
            ("stopped", Some(va)) if sessions == Sessions::Parallel => {
                (va.as_bool() == Some(true) || vb.as_bool() == Some(true)).into()
            }
            ("complete", Some(va)) if sessions == Sessions::Parallel => {
                (va.as_bool() != Some(false) && vb.as_bool() != Some(false)).into()
            }
            // Settings and rates: the later line's.
            (
                "seeds_per_sec" | "jobs" | "range" | "shard" | "faults" | "stopped_by" | "until"
                | "time_ms" | "seeds_per_failure" | "corpus" | "depth" | "menu",
                _,
            ) => vb.clone(),
            (_, Some(va)) => add_counts(va, vb),
        };
        out.insert(k.clone(), merged);
    }
    // The line is what `b` is: a summary after a checkpoint is no checkpoint.
    let flag = |k: &str| b.get(k).and_then(Value::as_bool) == Some(true);
    if flag("summary") {
        out.remove("progress");
    } else if flag("progress") {
        out.remove("summary");
    }
    // Simulated time adds up exactly in nanoseconds; milliseconds rounded
    // down on each side would lose up to one per line added.
    let exact = |v: &serde_json::Map<String, Value>| v.get("sim_ns").and_then(Value::as_u64);
    match (exact(a), exact(b)) {
        (Some(x), Some(y)) => {
            out.insert("sim_ns".into(), (x + y).into());
            out.insert("sim_ms".into(), ((x + y) / 1_000_000).into());
        }
        // Adding to nothing yet (the first of the shards).
        (None, Some(_)) if !a.contains_key("sim_ms") => {}
        // A line written before sim_ns was: milliseconds are all there is.
        _ => {
            out.remove("sim_ns");
        }
    }
    let n = |k: &str| out.get(k).and_then(Value::as_u64).unwrap_or(0);
    let (seeds, wall_ms, failing) = (n("seeds"), n("wall_ms"), n("failing_seeds"));
    if out.contains_key("seeds_per_sec") && wall_ms > 0 {
        let rate = seeds as f64 * 1000.0 / wall_ms as f64;
        out.insert(
            "seeds_per_sec".into(),
            ((rate * 10.0).round() / 10.0).into(),
        );
    }
    if out.contains_key("seeds_per_failure") {
        let rate = (failing > 0).then(|| (seeds as f64 / failing as f64 * 10.0).round() / 10.0);
        out.insert("seeds_per_failure".into(), rate.into());
    }
    out.into()
}

/// How the sessions whose lines [`add`] combines ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sessions {
    /// One after the other: a sweep and its resumption.
    Sequential,
    /// At the same time: the shards of a sweep.
    Parallel,
}

fn add_counts(a: &Value, b: &Value) -> Value {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_u64(), y.as_u64()) {
            (Some(x), Some(y)) => (x + y).into(),
            _ => b.clone(),
        },
        (Value::Object(x), Value::Object(y)) => {
            let mut out = x.clone();
            for (k, vy) in y {
                let merged = match x.get(k) {
                    Some(vx) => add_counts(vx, vy),
                    None => vy.clone(),
                };
                out.insert(k.clone(), merged);
            }
            out.into()
        }
        _ => b.clone(),
    }
}
