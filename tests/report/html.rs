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
        milestones: &run.milestones,
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

/// The embedded data of a page.
fn data(page: &str) -> serde_json::Value {
    let open = "<script id=\"journal\" type=\"application/json\">";
    let start = page.find(open).unwrap() + open.len();
    let len = page[start..].find("</script>").unwrap();
    serde_json::from_str(&page[start..start + len]).unwrap()
}

/// The value of attribute `name` in a tag's text.
fn attr(tag: &str, name: &str) -> Option<f64> {
    let at = tag.find(&format!(" {name}=\""))? + name.len() + 3;
    tag[at..at + tag[at..].find('"')?].parse().ok()
}

/// The lanes' names, top to bottom.
fn lanes(page: &str) -> Vec<String> {
    let names = &page[page.find("<div id=\"names\"").unwrap()..];
    let names = &names[..names.find("<div id=\"timeline\">").unwrap()];
    names
        .split("<div class=\"node")
        .skip(1)
        .map(|t| t[t.find('>').unwrap() + 1..t.find("</div>").unwrap()].to_owned())
        .collect()
}

#[test]
fn the_beliefs_table_lists_nodes_in_the_lanes_order() {
    let (page, _) = page("redlock-gc-pause-during-acquisition");
    let lanes = lanes(&page);
    assert_eq!(
        lanes,
        ["client1", "client2", "lock1", "lock2", "lock3", "lock4", "lock5", "storage"]
    );
    let data = data(&page);
    let mut seen_locks = false;
    for step in data["steps"].as_array().unwrap() {
        let rows: Vec<&str> = step["beliefs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r[0].as_str().unwrap())
            .collect();
        let at: Vec<usize> = rows
            .iter()
            .map(|n| lanes.iter().position(|l| l == n).expect("a lane"))
            .collect();
        assert!(at.windows(2).all(|w| w[0] < w[1]), "{rows:?}");
        // A client holding leases at several lock nodes lists them in the
        // lanes' order too.
        for row in step["beliefs"].as_array().unwrap() {
            let truly = row[2].as_str().unwrap();
            let locks: Vec<usize> = lanes
                .iter()
                .filter_map(|l| truly.find(&format!(" at {l}")))
                .collect();
            seen_locks |= locks.len() > 1;
            assert!(locks.windows(2).all(|w| w[0] < w[1]), "{truly}");
        }
    }
    assert!(
        seen_locks,
        "no client ever held leases at several lock nodes"
    );
}

#[test]
fn lease_bars_never_overlap_redlocks_five_grants_stack_per_lock_node() {
    for name in [
        "redlock-gc-pause-during-acquisition",
        "figure-9-6",
        "jepsen-etcd-lock",
    ] {
        let (page, _) = page(name);
        // Every bar: (x0, x1, y).
        let bars: Vec<(f64, f64, f64, &str)> = page
            .split("<g class=\"")
            .skip(1)
            .filter(|g| g.starts_with("held\"") || g.starts_with("believed\""))
            .map(|g| {
                let rect = &g[g.find("<rect ").unwrap()..];
                let rect = &rect[..rect.find("/>").unwrap()];
                let (x, w, y) = (
                    attr(rect, "x").unwrap(),
                    attr(rect, "width").unwrap(),
                    attr(rect, "y").unwrap(),
                );
                let title = &g[g.find("<title>").unwrap() + 7..g.find("</title>").unwrap()];
                (x, x + w, y, title)
            })
            .collect();
        assert!(!bars.is_empty());
        for (i, a) in bars.iter().enumerate() {
            for b in &bars[i + 1..] {
                let overlap = a.0 < b.1 - 0.5 && b.0 < a.1 - 0.5;
                assert!(!(overlap && a.2 == b.2), "{name}: {} overlaps {}", a.3, b.3);
            }
        }
        if name.starts_with("redlock") {
            // client2's grants from five lock nodes, each in its own row.
            let rows: std::collections::BTreeSet<i64> = bars
                .iter()
                .filter(|b| b.3.contains("grants client2"))
                .map(|b| b.2 as i64)
                .collect();
            assert_eq!(rows.len(), 5, "{rows:?}");
        }
    }
}

#[test]
fn the_time_axis_is_to_scale_and_says_where_it_is_cut() {
    let (page, _) = page("figure-9-6");
    let data = data(&page);
    let journal = data["journal"].as_array().unwrap();
    let steps = data["steps"].as_array().unwrap();
    let scale = &page[page.find("<p id=\"scale\">").unwrap()..];
    let scale = &scale[..scale.find("</p>").unwrap()];
    assert!(scale.contains("time axis to scale: 1 px = "), "{scale}");
    assert!(scale.contains("quiet stretches over"), "{scale}");
    let svg = &page[page.find("<svg ").unwrap()..];
    let px_per_ms = attr(svg, "data-px-per-ms").unwrap();
    let cut_px = attr(svg, "data-cut-px").unwrap();
    let break_px = attr(svg, "data-break-px").unwrap();
    // Between two events, x grows with time at the scale, or by exactly a
    // cut's width where the stretch is too long; every cut is labelled
    // with its length.
    let mut cuts = 0;
    for (i, w) in steps.windows(2).enumerate() {
        let dt_ms = (journal[i + 1]["t_ns"].as_u64().unwrap()
            - journal[i]["t_ns"].as_u64().unwrap()) as f64
            / 1e6;
        let dx = (w[1]["x"].as_i64().unwrap() - w[0]["x"].as_i64().unwrap()) as f64;
        if dt_ms * px_per_ms > cut_px {
            cuts += 1;
            assert!((dx - break_px).abs() <= 1.0, "step {i}: {dx}");
        } else {
            assert!(
                (dx - dt_ms * px_per_ms).abs() <= 1.0,
                "step {i}: {dx} for {dt_ms} ms"
            );
        }
    }
    assert!(cuts > 0);
    assert_eq!(page.matches("<rect class=\"cut\"").count(), cuts);
    // The pause of 15 s is cut; its label says how long the quiet was.
    assert!(page.contains("<text class=\"cutlabel\""));
    assert!(
        page.contains(">// 9.997s</text>"),
        "the quiet after the grant"
    );
    for id in ["zoom-in", "zoom-out", "zoom-whole", "zoom-cuts", "legend"] {
        assert!(page.contains(&format!("id=\"{id}\"")), "{id}");
    }
}

/// The beliefs the page shows at each step follow the client's renewals:
/// client1 renews its 6 s lease twice, so the lease end it believes moves
/// from 6.005 s to 9.005 s to 12.005 s, in that order.
#[test]
fn beliefs_follow_each_renewal() {
    let (page, _) = page("renewal-outlived-by-a-pause");
    let marker = "[[\"client1\",\"lease 1 (token 1) until ";
    let mut ends: Vec<&str> = Vec::new();
    for (at, _) in page.match_indices(marker) {
        let rest = &page[at + marker.len()..];
        let end = &rest[..rest.find(' ').unwrap()];
        if ends.last() != Some(&end) {
            ends.push(end);
        }
    }
    assert_eq!(ends, ["6.005s", "9.005s", "12.005s"], "{ends:?}");
}
