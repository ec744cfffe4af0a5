//! `fencesim report`: the files, the index, byte-determinism.

use crate::{fencesim, TempDir};

/// The bundled scenarios' file stems (each scenario is named after its file).
fn bundled() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir("scenarios")
        .unwrap()
        .filter_map(|e| {
            let path = e.unwrap().path();
            (path.extension()? == "toml").then(|| path.file_stem()?.to_str().map(String::from))?
        })
        .collect();
    names.sort();
    names
}

/// Every file of a directory, sorted, with its bytes.
fn files(dir: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().into_string().unwrap(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn report_writes_four_files_per_scenario_and_an_index_byte_for_byte_twice() {
    let (a, b) = (TempDir::new(), TempDir::new());
    for dir in [&a, &b] {
        let out = dir.path().to_str().unwrap();
        let (code, stdout, stderr) = fencesim(&["report", "scenarios", "--out", out]);
        assert_eq!(code, 0, "{stdout}{stderr}");
    }
    let (fa, fb) = (files(a.path()), files(b.path()));
    // Five files per scenario, the index (md, html) and the manifest.
    assert_eq!(fa.len(), bundled().len() * 5 + 3);
    for ((na, ba), (nb, bb)) in fa.iter().zip(&fb) {
        assert_eq!(na, nb);
        assert!(ba == bb, "{na} differs between two generations");
    }
    let index_html =
        String::from_utf8(std::fs::read(a.path().join("index.html")).unwrap()).unwrap();
    let index_md = String::from_utf8(std::fs::read(a.path().join("index.md")).unwrap()).unwrap();
    for name in bundled() {
        for ext in ["md", "html", "trace.json", "jsonl"] {
            let file = format!("{name}.{ext}");
            assert!(a.path().join(&file).is_file(), "{file}");
            assert!(
                index_html.contains(&format!("href=\"{file}\"")),
                "index.html lacks {file}"
            );
            assert!(
                index_md.contains(&format!("({file})")),
                "index.md lacks {file}"
            );
        }
        let figure = format!("{name}.svg");
        assert!(a.path().join(&figure).is_file(), "{figure}");
        let repro = format!("fencesim run scenarios/{name}.toml --seed ");
        assert!(index_md.contains(&repro), "{repro}");
    }
    // Nothing from the machine leaks in: no temp paths, no absolute paths.
    for (name, bytes) in &fa {
        let text = String::from_utf8_lossy(bytes);
        assert!(!text.contains(a.path().to_str().unwrap()), "{name}");
        assert!(!text.contains(env!("CARGO_MANIFEST_DIR")), "{name}");
        assert!(
            !text.contains("cargo run --release -- run"),
            "{name}: repro depends on CARGO"
        );
    }
}

#[test]
fn the_journal_file_is_the_run_trace() {
    let dir = TempDir::new();
    let out = dir.path().to_str().unwrap();
    let trace = dir.path().join("run-trace.jsonl");
    let (code, _, _) = fencesim(&["report", "scenarios/figure-9-6.toml", "--out", out]);
    assert_eq!(code, 0);
    let (code, _, _) = fencesim(&[
        "run",
        "scenarios/figure-9-6.toml",
        "--trace",
        trace.to_str().unwrap(),
    ]);
    assert_eq!(code, 0);
    assert_eq!(
        std::fs::read(dir.path().join("figure-9-6.jsonl")).unwrap(),
        std::fs::read(trace).unwrap()
    );
}

#[test]
fn report_exit_codes_follow_the_contract() {
    let dir = TempDir::new();
    let out = dir.path().to_str().unwrap();
    let (code, _, stderr) = fencesim(&["report", "scenarios/nope.toml", "--out", out]);
    assert_eq!(code, 2, "{stderr}");
    let (code, _, _) = fencesim(&["report", "scenarios"]);
    assert_eq!(code, 2, "--out is required");
}
