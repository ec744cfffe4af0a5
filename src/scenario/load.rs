//! From a parsed document to a [`Scenario`]: every table except `[[faults]]`.

use std::time::Duration;

use super::faults;
use super::model::{
    ClientSpec, DesignSpec, Expect, LinkSpec, NetworkSpec, ParamValue, Params, Scenario, Verdict,
    EXPECT_OUTCOMES,
};
use super::reader::{did_you_mean, Field, Result, Source, Table};
use crate::design::catalog::{show_duration, KeyKind, KeySpec, Registry, Role, CLIENT_KEYS};
use crate::design::client::{ClientKeys, Precondition};
use crate::design::DesignConfig as _;
use crate::oracle::{Counter, Counts};

const TOP_KEYS: &[&str] = &[
    "name",
    "description",
    "seed",
    "duration",
    "max_events",
    "strict",
    "lock",
    "storage",
    "network",
    "clients",
    "faults",
    "expect",
    "explore",
];
const NETWORK_KEYS: &[&str] = &["latency", "loss", "duplicate", "links"];
const LINK_KEYS: &[&str] = &["from", "to", "latency", "loss", "duplicate"];
/// `[expect]`'s keys after its counters (see [`expect_keys`]).
const EXPECT_KEYS: &[&str] = &[
    "false_rejections",
    "unfired_faults",
    "outcome",
    "mechanism",
    "always",
    "idle_clients",
];
/// The most `[[clients]]` a scenario may have. Waiting clients cost
/// nothing where the lock queues them; polling ones and heartbeats cost
/// events, which `max_events` bounds.
pub(crate) const MAX_CLIENTS: usize = 1000;
/// The largest `max_events`. A journal event costs about 400 bytes in a run
/// (the journal and the oracle's indexes), so one run stays under half a
/// gigabyte; `explore --jobs N` holds up to N runs at once.
pub(crate) const MAX_EVENTS: u64 = 1_000_000;
/// The default `max_events`.
pub(crate) const DEFAULT_MAX_EVENTS: u64 = 100_000;

/// `[expect]`'s keys: `verdict`, the counters ([`Counter::all`]'s names),
/// then the rest.
fn expect_keys() -> Vec<&'static str> {
    std::iter::once("verdict")
        .chain(Counter::all().map(Counter::name))
        .chain(EXPECT_KEYS.iter().copied())
        .collect()
}

/// The keys of the tables read here, for [`super::accepted_keys`].
pub(crate) fn table_keys() -> Vec<(String, Vec<&'static str>)> {
    let mut client = vec!["name", "process"];
    client.extend(CLIENT_KEYS.iter().map(|k| k.name));
    vec![
        ("the top level".to_owned(), TOP_KEYS.to_vec()),
        ("[network]".to_owned(), NETWORK_KEYS.to_vec()),
        ("[[network.links]]".to_owned(), LINK_KEYS.to_vec()),
        ("[[clients]]".to_owned(), client),
        ("[expect]".to_owned(), expect_keys()),
    ]
}

pub(crate) fn scenario(registry: &Registry, src: Source<'_>) -> Result<Scenario> {
    let doc = src.parse()?;
    let mut top = Table::root(src, &doc);
    top.accept(TOP_KEYS)?;

    let name_field = top.require("name")?;
    let name = name_field.str()?;
    if name.trim().is_empty() {
        return Err(name_field.error("`name` must not be empty"));
    }
    let description = optional(top.get("description"), |f| f.str())?.unwrap_or("");
    let seed = optional(top.get("seed"), Field::u64)?.unwrap_or(1);
    let duration = optional(top.get("duration"), |f| f.positive_duration("`duration`"))?
        .unwrap_or(Duration::from_secs(60));
    let max_events =
        optional(top.get("max_events"), |f| f.u64_in(1, MAX_EVENTS))?.unwrap_or(DEFAULT_MAX_EVENTS);
    let strict = optional(top.get("strict"), Field::bool)?.unwrap_or(false);

    let lock_field = required_table(&mut top, "lock")?;
    let lock = design(registry, Role::Lock, &lock_field)?;
    let storage_field = required_table(&mut top, "storage")?;
    let storage = design(registry, Role::Storage, &storage_field)?;
    let clients = clients(registry, &mut top, &lock)?;

    let mut scenario = Scenario {
        file: src.file.to_string(),
        name: name.to_string(),
        description: description.to_string(),
        seed,
        duration,
        max_events,
        strict,
        lock,
        storage,
        network: NetworkSpec::default(),
        clients,
        faults: Vec::new(),
        expect: Expect::default(),
        explore: None,
    };
    // Links and faults name nodes, so they are read once every node is known.
    let nodes = scenario.node_names();
    if let Some(field) = top.get("network") {
        scenario.network = network(&field, &nodes)?;
    }
    if let Some(field) = top.get("faults") {
        scenario.faults = faults::faults(&field, &nodes)?;
    }
    if let Some(field) = top.get("expect") {
        scenario.expect = expect(&field)?;
    }
    if let Some(field) = top.get("explore") {
        let defaults = super::model::ExploreSpec::scaled(&scenario);
        scenario.explore = Some(super::explore::explore(&field, &nodes, defaults)?);
    }
    top.finish()?;
    Ok(scenario)
}

pub(crate) fn optional<'a, T>(
    field: Option<Field<'a>>,
    read: impl FnOnce(&Field<'a>) -> Result<T>,
) -> Result<Option<T>> {
    field.as_ref().map(read).transpose()
}

fn required_table<'a>(top: &mut Table<'a>, key: &'static str) -> Result<Field<'a>> {
    top.get(key).ok_or_else(|| {
        top.error(format!(
            "missing required table [{key}] (with at least `design = \"…\"`)"
        ))
    })
}

fn design(registry: &Registry, role: Role, field: &Field<'_>) -> Result<DesignSpec> {
    let mut table = field.table(&format!("[{role}]"))?;
    let known = registry.names(role);
    let Some(design_field) = table.get("design") else {
        // A misspelt `design` reads better as an unknown key than as a
        // missing one, so check keys against every design of the role first.
        let mut any_key = vec!["design"];
        let role_keys = registry
            .designs()
            .iter()
            .filter(|d| d.role == role)
            .flat_map(|d| d.keys);
        for key in role_keys {
            if !any_key.contains(&key.name) {
                any_key.push(key.name);
            }
        }
        table.accept(&any_key)?;
        return Err(table.error(format!(
            "missing required key `design` in [{role}]; known {role} designs: {}",
            known.join(", ")
        )));
    };
    let name = design_field.str()?;
    let Some(resolved) = registry.resolve(role, name) else {
        if let Some(feature) = crate::design::missing_feature(role, name) {
            return Err(design_field.error(format!(
                "the {role} design `{name}` is in fencesim's `{feature}` cargo feature, which \
                 this build leaves out: build with it (`features = [\"{feature}\"]` on the \
                 fencesim dependency, or `cargo build --features {feature}`)"
            )));
        }
        return Err(design_field.error(format!(
            "unknown {role} design `{name}`{}; known {role} designs: {}",
            did_you_mean(name, &known),
            known.join(", ")
        )));
    };
    let info = resolved.info();
    let mut accepted = vec!["design"];
    accepted.extend(info.keys.iter().map(|k| k.name));
    table.what = format!("[{role}] for design `{name}`");
    table.accept(&accepted)?;

    let whose = format!("in {}", table.what);
    let params = key_values(info.keys, &mut table, &whose)?;
    // A design may check its keys further (the `sql` storage prepares its
    // statement, Redlock's quorum must be reachable): its objection is
    // reported at the key.
    let objection = match (resolved.lock(), resolved.storage()) {
        (Some(lock), _) => lock.validate(&params).err(),
        (_, Some(storage)) => storage.validate(&params).err(),
        _ => None,
    };
    if let Some(e) = objection {
        let message = format!("{}: {}", e.key, e.message);
        return Err(match table.get(e.key) {
            Some(field) => field.error(message),
            None => table.error(message),
        });
    }
    table.finish()?;
    Ok(DesignSpec {
        design: name.to_string(),
        params,
        resolved,
    })
}

/// Each duration key declared `below` another is shorter than it, defaults
/// included. The error points at the key if the file sets it, else at the
/// key it must stay below, else at the table.
/// The values of `keys` in `table` (a missing key takes its default; one
/// without a default is an error naming it `whose`, as in "in [lock] for
/// design `x`"), checked against each other.
fn key_values(keys: &[KeySpec], table: &mut Table<'_>, whose: &str) -> Result<Params> {
    let mut params = Vec::new();
    for key in keys {
        let value = match (table.get(key.name), &key.default) {
            (Some(field), _) => param_value(&key.kind, &field)?,
            (None, Some(default)) => default.clone(),
            (None, None) => {
                return Err(table.error(format!(
                    "missing required key `{}` {whose} ({}, {})",
                    key.name, key.kind, key.doc
                )))
            }
        };
        params.push((key.name.to_string(), value));
    }
    let params = Params::new(params);
    relations(keys, &params, table)?;
    Ok(params)
}

fn relations(keys: &[KeySpec], params: &Params, table: &mut Table<'_>) -> Result<()> {
    for key in keys {
        let KeyKind::DurationIn {
            below: Some(other), ..
        } = key.kind
        else {
            continue;
        };
        let (value, limit) = match (params.get(key.name), params.get(other)) {
            (Some(ParamValue::Duration(v)), Some(ParamValue::Duration(l))) => (*v, *l),
            _ => continue,
        };
        if value.is_zero() || value < limit {
            continue;
        }
        let (own, theirs) = (table.get(key.name), table.get(other));
        let shown = |d, field: &Option<Field<'_>>| {
            let default = if field.is_none() {
                " (the default)"
            } else {
                ""
            };
            format!("{}{default}", show_duration(d))
        };
        let message = format!(
            "`{}` = {} must be shorter than `{other}` = {}",
            key.name,
            shown(value, &own),
            shown(limit, &theirs),
        );
        return Err(match own.or(theirs) {
            Some(field) => field.error(message),
            None => table.error(message),
        });
    }
    Ok(())
}

fn param_value(kind: &KeyKind, field: &Field<'_>) -> Result<ParamValue> {
    Ok(match *kind {
        KeyKind::Duration => ParamValue::Duration(field.duration()?),
        KeyKind::DurationIn { .. } => {
            in_range(kind, field, ParamValue::Duration(field.duration()?))?
        }
        KeyKind::Bool => ParamValue::Bool(field.bool()?),
        KeyKind::U64 { min, max } => ParamValue::U64(field.u64_in(min, max)?),
        KeyKind::F64 { .. } => in_range(kind, field, ParamValue::F64(field.f64()?))?,
        KeyKind::Choice(choices) => ParamValue::Str(choice(field, choices)?.to_string().into()),
        KeyKind::Text => ParamValue::Str(field.str()?.to_string().into()),
    })
}

/// `value`, read from `field`, if it is within `kind`'s bounds; else an
/// error at the field saying which bounds.
fn in_range(kind: &KeyKind, field: &Field<'_>, value: ParamValue) -> Result<ParamValue> {
    match kind.check(&value) {
        Ok(()) => Ok(value),
        Err(message) => Err(field.error(field.named(message))),
    }
}

fn choice<'a>(field: &Field<'a>, choices: &[&str]) -> Result<&'a str> {
    let value = field.str()?;
    if choices.contains(&value) {
        return Ok(value);
    }
    Err(field.error(field.named(format_args!(
        "unknown value \"{value}\"{}; expected one of: {}",
        did_you_mean(value, choices),
        choices.join(", ")
    ))))
}

/// A node name that must be one of `nodes`.
pub(crate) fn node(field: &Field<'_>, nodes: &[String]) -> Result<String> {
    let name = field.str()?;
    if nodes.iter().any(|n| n == name) {
        return Ok(name.to_string());
    }
    let names: Vec<&str> = nodes.iter().map(String::as_str).collect();
    Err(field.error(format!(
        "unknown node `{name}`{}; known nodes: {}",
        did_you_mean(name, &names),
        names.join(", ")
    )))
}

fn network(field: &Field<'_>, nodes: &[String]) -> Result<NetworkSpec> {
    let mut table = field.table("[network]")?;
    table.accept(NETWORK_KEYS)?;
    let mut spec = NetworkSpec::default();
    if let Some(latency) = optional(table.get("latency"), latency)? {
        spec.latency = latency;
    }
    spec.loss = optional(table.get("loss"), |f| probability(f, "loss"))?.unwrap_or(0.0);
    spec.duplicate =
        optional(table.get("duplicate"), |f| probability(f, "duplicate"))?.unwrap_or(0.0);
    if let Some(links) = table.get("links") {
        for link_table in links.tables("network.links")? {
            spec.links.push(link(link_table, nodes)?);
        }
    }
    table.finish()?;
    Ok(spec)
}

fn link(mut table: Table<'_>, nodes: &[String]) -> Result<LinkSpec> {
    table.accept(LINK_KEYS)?;
    let (from, to) = faults::link(&mut table, nodes)?;
    let spec = LinkSpec {
        from,
        to,
        latency: optional(table.get("latency"), latency)?,
        loss: optional(table.get("loss"), |f| probability(f, "loss"))?,
        duplicate: optional(table.get("duplicate"), |f| probability(f, "duplicate"))?,
    };
    table.finish()?;
    Ok(spec)
}

fn latency(field: &Field<'_>) -> Result<(Duration, Duration)> {
    let bounds = field.array()?;
    let [min, max] = bounds.as_slice() else {
        return Err(field.error(format!(
            "expected [min, max], two durations such as [\"1ms\", \"5ms\"], found {} values",
            bounds.len()
        )));
    };
    let (min, max) = (min.duration()?, max.duration()?);
    if min > max {
        return Err(field.error(format!("latency min {min:?} is greater than max {max:?}")));
    }
    Ok((min, max))
}

fn probability(field: &Field<'_>, what: &str) -> Result<f64> {
    let p = field.f64()?;
    if !(0.0..1.0).contains(&p) {
        return Err(field.error(format!("`{what}` is a probability in [0, 1), found {p}")));
    }
    Ok(p)
}

fn clients(registry: &Registry, top: &mut Table<'_>, lock: &DesignSpec) -> Result<Vec<ClientSpec>> {
    let field = top
        .get("clients")
        .ok_or_else(|| top.error("missing [[clients]]: a scenario needs at least one client"))?;
    let tables = field.tables("clients")?;
    if tables.is_empty() {
        return Err(field.error("a scenario needs at least one client"));
    }
    if let Some(extra) = tables.get(MAX_CLIENTS) {
        let n = tables.len();
        return Err(extra.error(format!("too many clients: {n}, at most {MAX_CLIENTS}")));
    }
    let mut clients = Vec::with_capacity(tables.len());
    for table in tables {
        let node = lock.resolved.info().node;
        let client = client(registry, table, &clients, &lock.design, node)?;
        clients.push(client);
    }
    Ok(clients)
}

/// One `[[clients]]` table; `lock` is the scenario's lock design, which a
/// process may not speak to.
fn client(
    registry: &Registry,
    mut table: Table<'_>,
    earlier: &[ClientSpec],
    lock: &str,
    lock_node: &str,
) -> Result<ClientSpec> {
    // The process first: its own keys are keys of this table too.
    let process = match table.get("process") {
        None => None,
        Some(field) => {
            let name = field.str()?;
            let Some(process) = registry.process(name) else {
                let known: Vec<&str> = registry.processes().iter().map(|p| p.name).collect();
                return Err(field.error(format!(
                    "unknown process `{name}`: the processes are {}",
                    if known.is_empty() {
                        "none".to_owned()
                    } else {
                        known.join(", ")
                    }
                )));
            };
            Some((process, field))
        }
    };
    let mut accepted = vec!["name", "process"];
    accepted.extend(CLIENT_KEYS.iter().map(|k| k.name));
    if let Some((process, _)) = &process {
        accepted.extend(process.keys.iter().map(|k| k.name));
    }
    table.accept(&accepted)?;
    let name_field = table.require("name")?;
    let name = name_field.str()?;
    if let Some(problem) = client_name_problem(name, lock_node) {
        return Err(name_field.error(problem));
    }
    if earlier.iter().any(|c| c.name == name) {
        return Err(name_field.error(format!(
            "duplicate client name `{name}`: client names must be unique"
        )));
    }
    // Every key comes from the catalog's table, with its kind and default.
    let mut p = Params::defaults(CLIENT_KEYS);
    for key in CLIENT_KEYS {
        if let Some(field) = table.get(key.name) {
            p = p.with(key.name, param_value(&key.kind, &field)?);
        }
    }
    let keys = ClientKeys::from_params(&p);
    let mut spec = ClientSpec {
        name: name.to_string(),
        start: keys.start,
        rounds: keys.rounds,
        work: keys.work,
        workload: keys.workload,
        retry: keys.retry,
        timeout: keys.timeout,
        check_lease: keys.check_lease,
        renew: keys.renew,
        fence_on_acquire: keys.fence_on_acquire,
        conditional: keys.precondition == Precondition::Read,
        process: None,
        process_params: Params::default(),
    };
    if let Some((process, field)) = process {
        let name = process.name;
        if let Some(refused) = (process.refuses)(&spec.config()) {
            return Err(field.error(refused));
        }
        if let Some(locks) = process.locks.filter(|locks| !locks.contains(&lock)) {
            return Err(field.error(format!(
                "process `{name}` speaks to the lock designs {}, not to `{lock}`",
                locks.join(", ")
            )));
        }
        spec.process_params =
            key_values(process.keys, &mut table, &format!("of process `{name}`"))?;
        spec.process = Some(process.clone());
    }
    table.finish()?;
    Ok(spec)
}

/// Why `name` cannot name a client of a lock whose nodes are called
/// `lock_node` (and `lock_node` with a number), if it cannot.
fn client_name_problem(name: &str, lock_node: &str) -> Option<String> {
    if let Some(problem) = node_name_problem(name, "client") {
        return Some(problem);
    }
    let numbered = name
        .strip_prefix(lock_node)
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    if name == lock_node || name == "storage" || numbered {
        return Some(format!(
            "client name `{name}` is reserved for a server node ({lock_node}, {lock_node}N, storage)"
        ));
    }
    None
}

/// Why `name` cannot name a node (`what`: a client, a lock), if it cannot:
/// a name starts with a letter and continues with letters, digits, `_` or
/// `-`, and is not the world's.
pub(crate) fn node_name_problem(name: &str, what: &str) -> Option<String> {
    let mut chars = name.chars();
    let well_formed = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !well_formed {
        return Some(format!(
            "invalid {what} name \"{name}\": a name starts with a letter and continues with letters, \
             digits, `_` or `-`"
        ));
    }
    // The journal's own events (partition, heal) are the world's.
    if name == sim::world::WORLD_NODE {
        return Some(format!(
            "{what} name `{name}` is reserved: the journal names the simulated world `{name}`"
        ));
    }
    if what != "client" && name == "storage" {
        return Some(format!("{what} name `storage` is the storage's"));
    }
    None
}

fn expect(field: &Field<'_>) -> Result<Expect> {
    let mut table = field.table("[expect]")?;
    table.accept(&expect_keys())?;
    let mut count = |key| optional(table.get(key), Field::u64);
    let expect = Expect {
        verdict: None,
        counts: Counts::try_from_fn(|c| count(c.name()))?,
        false_rejections: count("false_rejections")?,
        unfired_faults: count("unfired_faults")?,
        outcome: None,
        mechanism: Vec::new(),
        always: Vec::new(),
        idle_clients: Vec::new(),
    };
    let verdicts = ["safe", "violation", "inconclusive"];
    let verdict = match optional(table.get("verdict"), |f| choice(f, &verdicts))? {
        Some("safe") => Some(Verdict::Safe),
        Some("violation") => Some(Verdict::Violation),
        Some(_) => Some(Verdict::Inconclusive),
        None => None,
    };
    let outcome = optional(table.get("outcome"), |f| choice(f, EXPECT_OUTCOMES))?;
    let listed = optional(table.get("mechanism"), mechanism)?;
    let always = optional(table.get("always"), always)?;
    let idle = optional(table.get("idle_clients"), idle_clients)?;
    table.finish()?;
    Ok(Expect {
        verdict,
        outcome: outcome.map(str::to_owned),
        mechanism: listed.unwrap_or_default(),
        always: always.unwrap_or_default(),
        idle_clients: idle.unwrap_or_default(),
        ..expect
    })
}

/// `idle_clients = ["client2"]`: client names, each once.
fn idle_clients(field: &Field<'_>) -> Result<Vec<String>> {
    let mut out: Vec<String> = Vec::new();
    for f in field.array()? {
        let name = f.str()?;
        if out.iter().any(|n| n == name) {
            return Err(f.error(format!("`idle_clients` names `{name}` twice")));
        }
        out.push(name.to_owned());
    }
    Ok(out)
}

/// `always = ["no_false_rejections", "completes"]`: property names, at least
/// one, each once.
fn always(field: &Field<'_>) -> Result<Vec<String>> {
    let known = super::model::ALWAYS;
    distinct_names(field, &known, "always", "property", "`always` takes")
}

/// `mechanism = ["lock_restarted", "two_believers"]`: milestone names,
/// at least one, each once.
fn mechanism(field: &Field<'_>) -> Result<Vec<String>> {
    let known = crate::oracle::milestones::NAMES;
    distinct_names(field, &known, "mechanism", "milestone", "milestones")
}

/// The array `key = [...]` of names from `known`, at least one, each once:
/// an unknown one is an error saying what it is (`what`) and listing
/// `known` after `listed`.
fn distinct_names(
    field: &Field<'_>,
    known: &[&str],
    key: &str,
    what: &str,
    listed: &str,
) -> Result<Vec<String>> {
    let mut out: Vec<String> = Vec::new();
    for f in field.array()? {
        let name = f.str()?;
        if !known.contains(&name) {
            return Err(f.error(format!(
                "unknown {what} `{name}`{}; {listed}: {}",
                did_you_mean(name, known),
                known.join(", ")
            )));
        }
        if out.iter().any(|n| n == name) {
            return Err(f.error(format!("{what} `{name}` is listed twice")));
        }
        out.push(name.to_owned());
    }
    if out.is_empty() {
        return Err(field.error(format!("`{key}` must name at least one {what}")));
    }
    Ok(out)
}
