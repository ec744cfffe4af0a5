//! `NAME.html`: self-contained, with the journal embedded.

use fencesim::report::{html, Subject};

use crate::bundled;

fn page(name: &str) -> (String, usize) {
    let (s, run) = bundled(name);
    let repro = format!("fencesim run {} --seed {}", s.file, s.seed);
    let page = html::page(&Subject {
        name: &s.name,
        description: &s.description,
        seed: s.seed,
        journal: &run.result.journal,
        report: &run.report,
        nodes: &run.nodes,
        repro: &repro,
        untested: &[],
    });
    (page, run.result.journal.len())
}

#[test]
fn the_page_fetches_nothing() {
    for name in ["figure-9-6", "partitioned-holder", "storage-forgets-token"] {
        let (page, _) = page(name);
        let lower = page.to_lowercase();
        for bad in [
            "http://",
            "https://",
            "src=\"",
            "@import",
            "url(\"http",
            "<link",
        ] {
            assert!(!lower.contains(bad), "{name}: {bad:?} in the page");
        }
        assert!(lower.contains("<style>") && lower.contains("<script>") && lower.contains("<svg "));
    }
}

#[test]
fn the_page_embeds_every_event_and_a_step_for_each() {
    let (page, events) = page("figure-9-6");
    let open = "<script id=\"journal\" type=\"application/json\">";
    let start = page.find(open).unwrap() + open.len();
    let len = page[start..].find("</script>").unwrap();
    let data: serde_json::Value = serde_json::from_str(&page[start..start + len]).unwrap();
    let journal = data["journal"].as_array().unwrap();
    assert_eq!(journal.len(), events);
    for (i, e) in journal.iter().enumerate() {
        assert_eq!(e["seq"].as_u64(), Some(i as u64));
    }
    let steps = data["steps"].as_array().unwrap();
    assert_eq!(steps.len(), events);
    // The cursor moves right (or stays) from step to step.
    let xs: Vec<i64> = steps.iter().map(|s| s["x"].as_i64().unwrap()).collect();
    assert!(xs.windows(2).all(|w| w[0] <= w[1]), "{xs:?}");
    assert!(steps[27]["sentence"]
        .as_str()
        .unwrap()
        .contains("granted token 34 to client2"));
    // One marker and one table row per event; the controls are there.
    assert_eq!(page.matches("<circle class=\"ev ").count(), events);
    assert_eq!(page.matches("<tr data-seq=").count(), events);
    for id in [
        "first",
        "back",
        "next",
        "last",
        "violation",
        "selftest-result",
    ] {
        assert!(page.contains(&format!("id=\"{id}\"")), "{id}");
    }
    // Believed and true lease bars, and the pause band.
    assert!(page.contains("believes token 33"));
    assert!(page.contains("<g class=\"held\">"));
    assert!(page.contains("class=\"band paused\""));
}
