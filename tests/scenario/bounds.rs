//! Every number and duration a design, a client or the scenario takes has a
//! range, checked at load: a value outside it is an error at its
//! `file:line:col`, never a run that panics, hangs or quietly misbehaves.

use fencesim::design::catalog::{Registry, Role};

use super::{assert_error, fencesim, load, TempDir, BASE};

/// BASE with the lock's `design = "lease"` line replaced by `lock` (the
/// lines of the `[lock]` table from line 3 on).
fn with_lock(lock: &str) -> String {
    BASE.replace("design = \"lease\"\n", &format!("{lock}\n"))
}

#[test]
fn a_zero_or_nanosecond_ttl_is_refused_by_every_lock_design() {
    let registry = Registry::builtin();
    let designs = registry.names(Role::Lock);
    assert_eq!(designs.len(), 10, "{designs:?}");
    // `postgres` has no ttl: its sessions end on its own timeouts.
    let with_ttl = designs
        .into_iter()
        .filter(|&d| registry.get(Role::Lock, d).unwrap().key("ttl").is_some());
    for design in with_ttl {
        for ttl in ["0s", "1ns", "9ms"] {
            let text = with_lock(&format!("design = \"{design}\"\nttl = \"{ttl}\""));
            assert_error(
                &text,
                "t.toml:4:7",
                &format!("`ttl`: {ttl} is out of range: expected 10ms..=24h"),
            );
        }
        // Redlock's and epoch's default 50 ms timeout must stay below the ttl.
        let timeout = if design == "redlock" || design == "epoch" {
            "\ntimeout = \"5ms\""
        } else {
            ""
        };
        let text = with_lock(&format!("design = \"{design}\"\nttl = \"10ms\"{timeout}"));
        load(&text).unwrap_or_else(|e| panic!("{design}: the shortest ttl loads: {e}"));
    }
}

#[test]
fn heartbeats_are_at_least_a_millisecond_and_shorter_than_the_session() {
    for (design, key) in [
        ("zookeeper", "heartbeat"),
        ("chubby", "heartbeat"),
        ("hazelcast", "heartbeat"),
        ("etcd", "keepalive"),
    ] {
        let lock = |value: &str| with_lock(&format!("design = \"{design}\"\n{key} = \"{value}\""));
        let col = key.len() + 4;
        for short in ["1ns", "999us"] {
            assert_error(
                &lock(short),
                &format!("t.toml:4:{col}"),
                &format!("`{key}`: {short} is out of range: expected 1ms..=24h, or 0s for ttl /"),
            );
        }
        // The session is the default 10 s.
        assert_error(
            &lock("10s"),
            &format!("t.toml:4:{col}"),
            &format!("`{key}` = 10s must be shorter than `ttl` = 10s (the default)"),
        );
        // 0s is the design's own default (a third or a fifth of the ttl).
        load(&lock("0s")).unwrap_or_else(|e| panic!("{design}: {e}"));
        load(&lock("1ms")).unwrap_or_else(|e| panic!("{design}: {e}"));
        // A short ttl set later in the table is still compared.
        let text = with_lock(&format!(
            "design = \"{design}\"\n{key} = \"2s\"\nttl = \"1s\""
        ));
        assert_error(
            &text,
            &format!("t.toml:4:{col}"),
            &format!("`{key}` = 2s must be shorter than `ttl` = 1s"),
        );
    }
}

#[test]
fn redlock_waits_less_than_its_ttl_and_keeps_some_validity() {
    // The default 50 ms timeout does not fit a 20 ms ttl: the error points
    // at the ttl, the key the file sets.
    let text = with_lock("design = \"redlock\"\nttl = \"20ms\"");
    assert_error(
        &text,
        "t.toml:4:7",
        "`timeout` = 50ms (the default) must be shorter than `ttl` = 20ms",
    );
    let text = with_lock("design = \"redlock\"\nttl = \"20ms\"\ntimeout = \"5ms\"");
    load(&text).unwrap();
    let text = with_lock("design = \"redlock\"\ndrift_factor = 1.0");
    assert_error(
        &text,
        "t.toml:4:16",
        "`drift_factor`: 1 is out of range: expected 0..=0.5",
    );
    let text = with_lock("design = \"redlock\"\nnodes = 0");
    assert_error(&text, "t.toml:4:9", "out of range: expected 1..=15");
}

#[test]
fn a_redlock_quorum_must_be_reachable_with_its_nodes() {
    let text = with_lock("design = \"redlock\"\nnodes = 3\nquorum = 4");
    assert_error(
        &text,
        "t.toml:5:10",
        "quorum: a quorum of 4 cannot be reached with 3 nodes",
    );
    // With the default five nodes, a quorum of five is every node.
    load(&with_lock("design = \"redlock\"\nquorum = 5")).unwrap();
    load(&with_lock("design = \"redlock\"\nquorum = 0")).unwrap();
}

#[test]
fn chubby_lock_delay_is_capped_at_a_minute_as_in_chubby() {
    let text = with_lock("design = \"chubby\"\nlock_delay = \"61s\"");
    assert_error(
        &text,
        "t.toml:4:14",
        "`lock_delay`: 61s is out of range: expected 0s..=1m",
    );
    load(&with_lock("design = \"chubby\"\nlock_delay = \"1m\"")).unwrap();
}

#[test]
fn first_tokens_leave_room_below_i64_max() {
    for design in ["lease", "redis"] {
        let lock =
            |token: &str| with_lock(&format!("design = \"{design}\"\nfirst_token = {token}"));
        assert_error(
            &lock("9223372036854775807"),
            "t.toml:4:15",
            "`first_token`: 9223372036854775807 is out of range: expected 0..=1000000000000000000",
        );
        // TOML itself has no integer above i64::MAX.
        assert_error(&lock("9223372036854775808"), "t.toml:4:15", "invalid TOML");
        load(&lock("1000000000000000000")).unwrap();
    }
}

#[test]
fn scenario_limits_have_ceilings() {
    let top = |line: &str| BASE.replace("name = \"t\"\n", &format!("name = \"t\"\n{line}\n"));
    assert_error(
        &top("max_events = 1000001"),
        "t.toml:2:14",
        "`max_events`: 1000001 is out of range: expected 1..=1000000",
    );
    assert_eq!(
        load(&top("max_events = 1000000")).unwrap().max_events,
        1_000_000
    );
    assert_eq!(load(BASE).unwrap().max_events, 100_000);
    assert_error(&top("duration = \"25h\""), "t.toml:2:12", "at most 24h");
}

#[test]
fn client_timers_are_at_least_a_millisecond() {
    for key in ["retry", "timeout"] {
        let text = BASE.replace(
            "name = \"client2\"",
            &format!("name = \"client2\"\n{key} = \"500us\""),
        );
        assert_error(
            &text,
            &format!("t.toml:10:{}", key.len() + 4),
            &format!("`{key}`: 500us is out of range: expected 1ms..=24h"),
        );
    }
    let text = BASE.replace(
        "name = \"client2\"",
        "name = \"client2\"\nwork = \"0s\"\nstart = \"24h\"",
    );
    load(&text).unwrap();
}

#[test]
fn a_key_without_a_value_says_so_at_the_key() {
    let text = BASE.replace("name = \"client2\"", "name = \"client2\"\nwork =");
    assert_error(&text, "t.toml:10:1", "invalid TOML: `work =` has no value");
    let text = format!("{BASE}seed =");
    assert_error(&text, "t.toml:10:1", "invalid TOML: `seed =` has no value");
}

/// `ttl = "0s"` once crashed the etcd and zookeeper runs (exit 3, after
/// printing SAFE) and gave `lease` a zombie write; now `run` refuses it.
#[test]
fn run_refuses_a_zero_ttl_with_exit_2_and_the_location() {
    let dir = TempDir::new("zero-ttl");
    for design in ["lease", "etcd", "zookeeper"] {
        let file = dir.write(
            &format!("{design}.toml"),
            with_lock(&format!("design = \"{design}\"\nttl = \"0s\"")),
        );
        let file = file.to_str().unwrap();
        for json in [false, true] {
            let mut args = vec!["run", file];
            if json {
                args.push("--json");
            }
            let (code, stdout, stderr) = fencesim(&args).into_parts();
            assert_eq!(code, 2, "{design}: {stdout}{stderr}");
            assert!(stderr.contains(&format!("{file}:4:7")), "{stderr}");
            assert!(stderr.contains("`ttl`: 0s is out of range"), "{stderr}");
            assert_eq!(stdout, "", "{design}: nothing on stdout");
        }
    }
}

#[test]
fn designs_shows_the_ranges() {
    let (code, stdout, _) = fencesim(&["designs"]).into_parts();
    assert_eq!(code, 0);
    let line = |key: &str, design: &str| {
        let header = match design {
            "client" => "client keys".to_string(),
            _ => format!("\n  {design} "),
        };
        let entry = stdout
            .split(&header)
            .nth(1)
            .unwrap_or_else(|| panic!("{design} listed:\n{stdout}"));
        entry
            .lines()
            .find(|l| l.split_whitespace().next() == Some(key))
            .unwrap_or_else(|| panic!("{design} lists {key}:\n{stdout}"))
            .to_string()
    };
    assert!(line("ttl", "lease").contains("duration 10ms..=24h"));
    assert!(line("heartbeat", "zookeeper").contains("duration 0s | 1ms..<ttl"));
    assert!(line("timeout", "redlock").contains("duration 1ms..<ttl"));
    assert!(line("first_token", "redis").contains("integer 0..=10^18"));
    assert!(
        line("retry", "client").contains("duration 1ms..=24h"),
        "{stdout}"
    );
}
