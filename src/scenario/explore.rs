//! `[explore]`: how `fencesim explore` draws random faults for each seed.
//!
//! ```toml
//! [explore]
//! kinds = ["pause", "delay"]   # default: every fault kind, a swarm of them per seed
//! faults = [1, 3]              # random faults per seed, [min, max]
//! nodes = ["client1"]          # default: every node, a swarm of them per seed
//! swarm = true                 # false: every seed draws from every kind and node
//! max_pause = "30s"            # default: 3 × the scenario's longest timeout
//! max_delay = "30s"
//! max_jump = "30s"
//! max_partition = "30s"
//! max_restart = "10s"          # default: the scenario's longest timeout
//! workloads = true             # vary each seed's workload too (default false)
//! ```

use super::load::{node, optional};
use super::model::{ExploreSpec, FAULT_KINDS};
use super::reader::{did_you_mean, Field, Result};

pub(crate) const EXPLORE_KEYS: &[&str] = &[
    "kinds",
    "faults",
    "nodes",
    "swarm",
    "max_pause",
    "max_delay",
    "max_jump",
    "max_partition",
    "max_restart",
    "workloads",
];
/// More random faults than this per seed make a story nobody can read.
const MAX_FAULTS_PER_SEED: u64 = 16;

/// The `[explore]` table; keys it leaves out keep `defaults`' values (the
/// scenario's own [`ExploreSpec::scaled`]).
pub(crate) fn explore(
    field: &Field<'_>,
    nodes: &[String],
    defaults: ExploreSpec,
) -> Result<ExploreSpec> {
    let mut table = field.table("[explore]")?;
    table.accept(EXPLORE_KEYS)?;
    let mut spec = defaults;
    if let Some(kinds_field) = table.get("kinds") {
        spec.kinds = kinds(&kinds_field)?;
        spec.kinds_pinned = true;
    }
    if let Some(swarm) = table.get("swarm") {
        spec.swarm = swarm.bool()?;
    }
    if let Some(workloads) = table.get("workloads") {
        spec.workloads = workloads.bool()?;
    }
    if let Some(faults_field) = table.get("faults") {
        spec.faults = faults(&faults_field)?;
    }
    if let Some(nodes_field) = table.get("nodes") {
        let mut names = Vec::new();
        for f in nodes_field.array()? {
            let name = node(&f, nodes)?;
            if names.contains(&name) {
                return Err(f.error(format!("node `{name}` is listed twice")));
            }
            names.push(name);
        }
        if names.is_empty() {
            return Err(nodes_field.error("`nodes` must name at least one node"));
        }
        spec.nodes = names;
    }
    let mut positive =
        |key: &'static str| optional(table.get(key), |f| f.positive_duration(&format!("`{key}`")));
    spec.max_pause = positive("max_pause")?.unwrap_or(spec.max_pause);
    spec.max_delay = positive("max_delay")?.unwrap_or(spec.max_delay);
    spec.max_jump = positive("max_jump")?.unwrap_or(spec.max_jump);
    spec.max_partition = positive("max_partition")?.unwrap_or(spec.max_partition);
    spec.max_restart = positive("max_restart")?.unwrap_or(spec.max_restart);
    table.finish()?;
    Ok(spec)
}

fn kinds(field: &Field<'_>) -> Result<Vec<String>> {
    let mut kinds = Vec::new();
    for f in field.array()? {
        let name = f.str()?;
        if !FAULT_KINDS.contains(&name) {
            return Err(f.error(format!(
                "unknown fault kind `{name}`{}; kinds: {}",
                did_you_mean(name, FAULT_KINDS),
                FAULT_KINDS.join(", ")
            )));
        }
        if kinds.iter().any(|k| k == name) {
            return Err(f.error(format!("fault kind `{name}` is listed twice")));
        }
        kinds.push(name.to_string());
    }
    if kinds.is_empty() {
        return Err(field.error("`kinds` must name at least one fault kind"));
    }
    Ok(kinds)
}

fn faults(field: &Field<'_>) -> Result<(u32, u32)> {
    let bounds = field.array()?;
    let [min, max] = bounds.as_slice() else {
        return Err(field.error(format!(
            "expected [min, max], two whole numbers such as [1, 3], found {} values",
            bounds.len()
        )));
    };
    let min_n = min.u64_in(0, MAX_FAULTS_PER_SEED)?;
    let max_n = max.u64_in(0, MAX_FAULTS_PER_SEED)?;
    if min_n > max_n {
        return Err(field.error(format!("`faults` min {min_n} is greater than max {max_n}")));
    }
    Ok((min_n as u32, max_n as u32))
}
