//! A lock design that names its node: scenario files, faults, the journal
//! and the lanes call it by that name, and a client may not take it.

use fencesim::design::catalog::{DesignInfo, Registry};
use fencesim::design::lease::{Lease, LeaseConfig};
use fencesim::design::lock_client::AnyLockClient;
use fencesim::design::{DesignConfig, LockDesign};
use fencesim::oracle::Verdict;
use fencesim::protocol::Msg;
use fencesim::report::lanes::{lanes, LanesOptions};
use fencesim::testkit::ScenarioBuilder;
use sim::Actor;

/// The bundled `lease`, on a node called `apiserver`.
struct ApiLease;

impl LockDesign for ApiLease {
    type Config = LeaseConfig;

    fn info(&self) -> DesignInfo {
        DesignInfo::lock(
            "api_lease",
            "a TTL lease served by an API server",
            LeaseConfig::KEYS,
        )
        .on_node("apiserver")
    }
    fn server(&self, config: &LeaseConfig, index: usize) -> Box<dyn Actor<Msg>> {
        Lease.server(config, index)
    }
    fn client(&self, config: &LeaseConfig, lock_nodes: &[String]) -> Box<dyn AnyLockClient> {
        Lease.client(config, lock_nodes)
    }
}

fn registry() -> Registry {
    let mut registry = Registry::builtin();
    registry.add_lock(ApiLease);
    registry
}

/// Figure 9-6 on `apiserver`: client1 pauses after its grant, and the
/// link from the API server to client2 is slowed, both named by the node.
fn figure() -> ScenarioBuilder {
    ScenarioBuilder::new("api-lease")
        .registry(registry())
        .lock("api_lease", |t| t.set("ttl", "10s"))
        .storage("unchecked", |t| t)
        .client("client1", |t| t)
        .client("client2", |t| t.set("start", "11s"))
        .fault("pause", |t| {
            t.set("node", "client1")
                .set("after", "apiserver:granted")
                .set("duration", "15s")
        })
}

#[test]
fn a_design_s_node_is_named_in_faults_the_journal_and_the_lanes() {
    let run = figure().run(1);
    assert_eq!(
        run.report.verdict,
        Verdict::Violation,
        "the unfenced figure"
    );
    let events = run.result.journal.events();
    assert!(events
        .iter()
        .any(|e| e.node == "apiserver" && e.kind == "granted"));
    assert!(
        events.iter().all(|e| e.node != "lock"),
        "no node is called lock"
    );
    let pause = events
        .iter()
        .find(|e| e.kind == "pause")
        .expect("the pause fired");
    assert_eq!(pause.node, "client1");
    let nodes = figure().build().unwrap().node_names();
    assert_eq!(nodes, ["client1", "client2", "apiserver", "storage"]);
    let lanes = lanes(&run.result.journal, &nodes, &LanesOptions::default());
    assert!(lanes.contains("apiserver"), "{lanes}");
}

#[test]
fn a_client_may_not_take_the_design_s_node_name_and_lock_names_no_node() {
    let taken = figure().client("apiserver", |t| t).build().unwrap_err();
    let message = taken.to_string();
    assert!(
        message.contains("client name `apiserver` is reserved for a server node (apiserver, apiserverN, storage)"),
        "{message}"
    );
    // `lock` is a client name like any other here, and no node of a fault.
    figure()
        .client("lock", |t| t)
        .build()
        .expect("`lock` may name a client");
    let unknown = figure()
        .fault("crash", |t| t.set("node", "lock3").set("at", "1s"))
        .build()
        .unwrap_err()
        .to_string();
    assert!(unknown.contains("lock3"), "{unknown}");
}

#[test]
#[should_panic(expected = "invalid lock node name \"9s\"")]
fn a_design_whose_node_is_no_name_is_refused_when_registered() {
    Registry::builtin().add(DesignInfo::lock("bad", "", &[]).on_node("9s"));
}
