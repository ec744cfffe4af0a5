//! The lanes view of the bundled figure 9-6, as `run` draws it (a snapshot,
//! reviewed by eye against DDIA's figure).

use fencesim::design::catalog::Registry;
use fencesim::report::lanes::{lanes, LanesOptions};
use fencesim::{runner, scenario};
use insta::assert_snapshot;

use crate::crate_root;

#[test]
fn figure_9_6() {
    let path = crate_root().join("scenarios/figure-9-6.toml");
    let scenario = scenario::load_file(&Registry::builtin(), &path).unwrap();
    let run = runner::run(&scenario, 1);
    let options = LanesOptions {
        width: 36,
        deliveries: false,
        color: false,
    };
    let view = lanes(&run.result.journal, &run.nodes, &options);

    // What the snapshot must show, checked in words too, so a careless
    // `cargo insta accept` cannot lose the story.
    let row = |needle: &str| {
        view.lines()
            .position(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("lanes show {needle:?}:\n{view}"))
    };
    let paused = row("⏸ paused 15.000s");
    let accepted_34 = row("accepted client2/1 (token 34)");
    let rejected_33 = row("REJECTED client1/1 (token 33 < 34)");
    assert!(row("acquired lease 1, token 33") < paused);
    assert!(paused < row("acquired lease 2, token 34"));
    assert!(accepted_34 < row("▶ resumed") && row("▶ resumed") < rejected_33);

    assert_snapshot!("figure_9_6", view);
}
