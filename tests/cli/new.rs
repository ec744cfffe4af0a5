//! `fencesim new PATH` and `fencesim new PATH --async`: the crates they
//! write, and what they refuse. (That the crates build and their tests pass,
//! outside the repository, is `.ci/new-crate.sh`: it takes a build of its
//! own.)

use std::fs;

use crate::{arg, crate_root, fencesim, TempDir};

#[test]
fn writes_a_crate_that_depends_on_this_checkout() {
    let dir = TempDir::new("new");
    let target = dir.path().join("k8s-lease");
    let out = fencesim(&["new", arg(&target), "--design", "k8s_lease"]);
    out.expect_code(0);
    for file in [
        "Cargo.toml",
        "Cargo.lock",
        ".cargo/config.toml",
        ".gitignore",
        "README.md",
        "src/lib.rs",
        "src/main.rs",
        "scenarios/paused-holder.toml",
        "scenarios/unfenced.toml",
        "tests/scenarios.rs",
    ] {
        assert!(
            target.join(file).is_file(),
            "{file} written:\n{}",
            out.stdout
        );
        assert!(
            out.stdout.contains(&format!("  {file}\n")),
            "{file} listed:\n{}",
            out.stdout
        );
    }
    let manifest: toml::Table = fs::read_to_string(target.join("Cargo.toml"))
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(manifest["package"]["name"].as_str(), Some("k8s-lease"));
    let checkout = fs::canonicalize(crate_root()).unwrap();
    assert_eq!(
        manifest["dependencies"]["fencesim"]["path"].as_str(),
        checkout.to_str()
    );
    assert!(manifest.contains_key("workspace"), "a workspace of its own");
    // fencesim's patched madsim: a [patch] of the checkout's workspace does
    // not reach a crate outside it.
    assert_eq!(
        manifest["patch"]["crates-io"]["madsim"]["path"].as_str(),
        checkout.join("sim/madsim").to_str()
    );
    let config = fs::read_to_string(target.join(".cargo/config.toml")).unwrap();
    assert!(
        config.contains(r#"rustflags = ["--cfg", "madsim"]"#),
        "{config}"
    );
    // Every placeholder is filled: the design's name, the crate's identifier.
    let lib = fs::read_to_string(target.join("src/lib.rs")).unwrap();
    assert!(lib.contains(r#"as DESIGN = "k8s_lease","#), "{lib}");
    let main = fs::read_to_string(target.join("src/main.rs")).unwrap();
    assert!(main.contains("k8s_lease::registry()"), "{main}");
    let scenario = fs::read_to_string(target.join("scenarios/paused-holder.toml")).unwrap();
    assert!(scenario.contains(r#"design = "k8s_lease""#), "{scenario}");
    for file in [
        "Cargo.toml",
        "README.md",
        "src/lib.rs",
        "src/main.rs",
        "tests/scenarios.rs",
    ] {
        let text = fs::read_to_string(target.join(file)).unwrap();
        assert!(
            !text.contains("{{"),
            "{file} has an unfilled placeholder:\n{text}"
        );
    }
    // The lock file is the checkout's, so the tested versions are used.
    assert_eq!(
        fs::read(target.join("Cargo.lock")).unwrap(),
        fs::read(crate_root().join("Cargo.lock")).unwrap()
    );
}

#[test]
fn an_empty_directory_is_filled_a_used_one_is_left_alone() {
    let dir = TempDir::new("new-used");
    let empty = dir.path().join("empty");
    fs::create_dir(&empty).unwrap();
    fencesim(&["new", arg(&empty)]).expect_code(0);

    let used = dir.path().join("used");
    dir.write("used/notes.txt", "mine");
    let out = fencesim(&["new", arg(&used)]);
    out.expect_code(2);
    assert!(
        out.stderr
            .contains("exists and is not empty: nothing was written"),
        "{}",
        out.stderr
    );
    let left: Vec<_> = fs::read_dir(&used)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["notes.txt"]);

    let file = dir.write("plain", "");
    let out = fencesim(&["new", arg(&file)]);
    out.expect_code(2);
    assert!(out.stderr.contains("is not a directory"), "{}", out.stderr);
}

#[cfg(unix)]
#[test]
fn a_link_is_not_followed() {
    let dir = TempDir::new("new-link");
    let elsewhere = dir.path().join("elsewhere");
    fs::create_dir(&elsewhere).unwrap();
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&elsewhere, &link).unwrap();
    let out = fencesim(&["new", arg(&link)]);
    out.expect_code(2);
    assert!(out.stderr.contains("is not a directory"), "{}", out.stderr);
    assert_eq!(
        fs::read_dir(&elsewhere).unwrap().count(),
        0,
        "nothing written through the link"
    );
}

#[test]
fn names_that_cannot_be_a_crate_or_a_new_design_are_refused() {
    let dir = TempDir::new("new-names");
    let out = fencesim(&["new", arg(&dir.path().join("My Lock"))]);
    out.expect_code(2);
    assert!(
        out.stderr.contains("is not one: use lowercase letters"),
        "{}",
        out.stderr
    );

    let out = fencesim(&["new", arg(&dir.path().join("ok")), "--design", "lease"]);
    out.expect_code(2);
    assert!(
        out.stderr.contains("a bundled design has that name"),
        "{}",
        out.stderr
    );

    let out = fencesim(&["new", arg(&dir.path().join("ok")), "--design", "Lease-2"]);
    out.expect_code(2);
    assert!(
        out.stderr.contains("lowercase letters, digits and `_`"),
        "{}",
        out.stderr
    );
    assert!(
        !dir.path().join("ok").exists(),
        "nothing written for a refused name"
    );

    let out = fencesim(&[
        "new",
        arg(&dir.path().join("ok")),
        "--fencesim-path",
        arg(dir.path()),
    ]);
    out.expect_code(2);
    assert!(
        out.stderr.contains("is not a fencesim checkout"),
        "{}",
        out.stderr
    );
}

#[test]
fn async_writes_a_client_crate_whose_client_is_a_process() {
    let dir = TempDir::new("new-async");
    let target = dir.path().join("my-client");
    let checkout = fs::canonicalize(crate_root()).unwrap();
    let out = fencesim(&[
        "new",
        arg(&target),
        "--async",
        "--fencesim-path",
        arg(&checkout),
    ]);
    out.expect_code(0);
    for file in [
        "Cargo.toml",
        "Cargo.lock",
        ".cargo/config.toml",
        ".gitignore",
        "README.md",
        "src/lib.rs",
        "src/sim.rs",
        "src/main.rs",
        "examples/on_tokio.rs",
        "scenarios/paused-holder.toml",
        "scenarios/unfenced.toml",
        "tests/scenarios.rs",
    ] {
        assert!(
            target.join(file).is_file(),
            "{file} written:\n{}",
            out.stdout
        );
        assert!(
            out.stdout.contains(&format!("  {file}\n")),
            "{file} listed:\n{}",
            out.stdout
        );
        if file != "Cargo.lock" {
            let text = fs::read_to_string(target.join(file)).unwrap();
            assert!(
                !text.contains("{{"),
                "{file} has an unfilled placeholder:\n{text}"
            );
        }
    }
    assert!(
        out.stdout.contains("cargo run --example on_tokio"),
        "{}",
        out.stdout
    );

    // fencesim with its command line, the seam with tokio, and tokio.
    let manifest: toml::Table = fs::read_to_string(target.join("Cargo.toml"))
        .unwrap()
        .parse()
        .unwrap();
    let dependencies = manifest["dependencies"].as_table().unwrap();
    assert_eq!(dependencies["fencesim"]["path"].as_str(), checkout.to_str());
    assert_eq!(
        dependencies["fencesim"]["default-features"].as_bool(),
        Some(false)
    );
    assert_eq!(
        dependencies["fencesim-env"]["path"].as_str(),
        checkout.join("sim/env").to_str()
    );
    let features = dependencies["fencesim-env"]["features"].as_array().unwrap();
    assert!(features.iter().any(|f| f.as_str() == Some("tokio")));
    assert!(dependencies.contains_key("tokio"));
    assert!(manifest.contains_key("workspace"), "a workspace of its own");
    assert_eq!(
        manifest["patch"]["crates-io"]["madsim"]["path"].as_str(),
        checkout.join("sim/madsim").to_str()
    );

    // The client knows the seam only; the process is registered under the
    // crate's identifier, and both scenarios name it.
    let lib = fs::read_to_string(target.join("src/lib.rs")).unwrap();
    assert!(lib.contains("pub async fn lead<E, L, S>"), "{lib}");
    assert!(
        !lib.contains("fencesim::"),
        "the client uses fencesim:\n{lib}"
    );
    let sim = fs::read_to_string(target.join("src/sim.rs")).unwrap();
    assert!(
        sim.contains(r#"pub const PROCESS: &str = "my_client";"#),
        "{sim}"
    );
    assert!(sim.contains("add_process_refusing("), "{sim}");
    let main = fs::read_to_string(target.join("src/main.rs")).unwrap();
    assert!(main.contains("my_client::registry()"), "{main}");
    for (file, storage) in [
        ("scenarios/paused-holder.toml", "fenced"),
        ("scenarios/unfenced.toml", "unchecked"),
    ] {
        let scenario: toml::Table = fs::read_to_string(target.join(file))
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(scenario["storage"]["design"].as_str(), Some(storage));
        for client in scenario["clients"].as_array().unwrap() {
            assert_eq!(client["process"].as_str(), Some("my_client"), "{file}");
        }
        assert!(scenario.contains_key("expect"), "{file} has [expect]");
    }
    assert_eq!(
        fs::read(target.join("Cargo.lock")).unwrap(),
        fs::read(crate_root().join("Cargo.lock")).unwrap()
    );
}

#[test]
fn async_refuses_a_design_a_bundled_process_name_and_a_checkout_without_the_seam() {
    let dir = TempDir::new("new-async-refused");
    let out = fencesim(&[
        "new",
        arg(&dir.path().join("ok")),
        "--async",
        "--design",
        "mine",
    ]);
    out.expect_code(2);
    assert!(
        out.stderr
            .contains("the argument '--async' cannot be used with '--design <NAME>'"),
        "{}",
        out.stderr
    );

    // The client is registered under the crate's name, beside `rounds`.
    let out = fencesim(&["new", arg(&dir.path().join("rounds")), "--async"]);
    out.expect_code(2);
    assert!(
        out.stderr.contains("a bundled process is called `rounds`"),
        "{}",
        out.stderr
    );

    // A checkout without sim/env has no seam to depend on.
    let old = dir.path().join("old");
    dir.write("old/Cargo.toml", "[package]\n");
    fs::create_dir(old.join("sim")).unwrap();
    let out = fencesim(&[
        "new",
        arg(&dir.path().join("ok")),
        "--async",
        "--fencesim-path",
        arg(&old),
    ]);
    out.expect_code(2);
    assert!(
        out.stderr.contains(
            "is not a fencesim checkout (a directory with Cargo.toml, sim/ and sim/env/)"
        ),
        "{}",
        out.stderr
    );
    for name in ["ok", "rounds"] {
        assert!(
            !dir.path().join(name).exists(),
            "nothing written for a refused {name}"
        );
    }
    // The same checkout is enough without --async.
    fencesim(&[
        "new",
        arg(&dir.path().join("ok")),
        "--fencesim-path",
        arg(&old),
    ])
    .expect_code(0);
}
