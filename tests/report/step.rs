//! `fencesim step`: the piped listing and the interactive walk.

use std::io::Cursor;

use fencesim::report::lanes::LanesOptions;
use fencesim::report::step::{lane_width, Walk};

use crate::{bundled, fencesim, walk};

#[test]
fn piped_step_lists_every_event_of_figure_9_6_then_the_verdict() {
    let (code, stdout, stderr) = fencesim(&["step", "scenarios/figure-9-6.toml"]).into_parts();
    assert_eq!(code, 0, "stderr: {stderr}");
    insta::assert_snapshot!("figure_9_6_piped", stdout);
    // One numbered line per event, between the title and the verdict.
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines[0], "figure-9-6: 40 events, #0 to #39");
    for (i, line) in lines[1..41].iter().enumerate() {
        assert!(line.trim_start().starts_with(&format!("{i} ")), "{line}");
    }
    assert!(lines[41].starts_with("verdict  SAFE"));
}

#[test]
fn a_slow_clock_resumes_with_time_left_on_its_lease() {
    // client1's clock runs slow: after a 12 s pause it reads 7 s, and the
    // lease it believes in has time left by that clock.
    let w = walk("epoch-slow-clock-lease-read");
    let resume = w.steps.iter().find(|s| s.phrase == "▶ resumed").unwrap();
    assert!(
        resume.sentence.starts_with(
            "client1 resumes after 12.000s; it still holds lease 1, which by its own clock has \
             2.892s left, until 9.899s (the clock reads 7.006s now), but the lock service \
             expired it at 10.003s"
        ),
        "{}",
        resume.sentence
    );
}

#[test]
fn the_resume_step_says_what_client1_believes_and_what_is_true() {
    let w = walk("figure-9-6");
    let resume = w.steps.iter().find(|s| s.phrase == "▶ resumed").unwrap();
    assert!(
        resume.sentence.starts_with(
            "client1 resumes after 15.000s; it still acts on lease 1 (token 33), which by its \
             own clock ran out 5.000s ago, at 10.005s (the clock reads 15.005s now)"
        ),
        "{}",
        resume.sentence
    );
    assert!(
        resume.sentence.ends_with(
            "but the lock service expired it at 10.002s and granted token 34 to client2."
        ),
        "{}",
        resume.sentence
    );
    assert!(resume
        .beliefs
        .contains("client1 believes lease 1 (token 33)"));
    assert!(resume.beliefs.contains("lock: free"));
}

#[test]
fn piped_step_of_a_violation_marks_the_event() {
    // The file expects the violation: expectations met, exit 0.
    let (code, stdout, _) = fencesim(&["step", "scenarios/figure-9-6-unfenced.toml"]).into_parts();
    assert_eq!(code, 0);
    let marked: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains("⚠ stale_write"))
        .collect();
    assert_eq!(marked.len(), 1, "{stdout}");
    assert!(stdout.contains("verdict  VIOLATION"));
}

#[test]
fn a_lock_crash_ends_only_the_grants_its_restart_says_it_lost() {
    // Persistence: client1's key survives the crash, so client1 still holds
    // the lock while it is down and after it is back.
    let (_, durable, _) =
        fencesim(&["step", "scenarios/redis-restart-with-persistence.toml"]).into_parts();
    let line = |out: &str, what: &str| {
        out.lines()
            .find(|l| l.contains(what))
            .unwrap_or_else(|| panic!("no line with {what:?}:\n{out}"))
            .to_owned()
    };
    let crash = line(&durable, "lock crashes");
    assert!(crash.contains("its restart tells"), "{crash}");
    assert!(
        crash.ends_with("lock: client1 holds lease 1 (token 1) · lock down"),
        "{crash}"
    );
    let back = line(&durable, "lock restarts");
    assert!(
        back.ends_with("lock: client1 holds lease 1 (token 1)"),
        "{back}"
    );
    assert!(!durable.contains("back without"), "{durable}");
    // Without persistence the restart journals the lost grant, and from
    // there the lock is free while client1 still believes.
    let (_, volatile, _) =
        fencesim(&["step", "scenarios/redis-restart-without-persistence.toml"]).into_parts();
    let lost = line(&volatile, "back without lease 1 of client1");
    assert!(lost.ends_with("lock: free"), "{lost}");
    assert!(lost.contains("client1 believes lease 1"), "{lost}");
}

#[test]
fn step_with_a_bad_file_exits_2() {
    let (code, _, stderr) = fencesim(&["step", "scenarios/no-such-file.toml"]).into_parts();
    assert_eq!(code, 2);
    assert!(stderr.contains("no-such-file.toml"), "{stderr}");
}

/// Drives the interactive loop with `input` and returns the journal event
/// numbers of the screens it showed and the whole output.
fn drive(name: &str, input: &str) -> (Vec<u64>, String) {
    let w = walk(name);
    let mut out = Vec::new();
    w.interact(Cursor::new(input), &mut out, false).unwrap();
    let out = String::from_utf8(out).unwrap();
    let last = w.steps.last().unwrap().seq;
    let positions = out
        .lines()
        .filter_map(|l| {
            let rest = l.split(" — event #").nth(1)?;
            let n = rest.split(" of ").next()?;
            assert!(rest.contains(&format!(" of #0–#{last}, at ")), "{l}");
            n.parse().ok()
        })
        .collect();
    (positions, out)
}

#[test]
fn interactive_walk_moves_next_back_to_the_violation_and_quits() {
    let (positions, out) = drive("figure-9-6-unfenced", "n\n\nb\nv\nv\nq\nn\n");
    // next, Enter (next), back, violation (event #31, the number the
    // oracle's finding gives), no further violation (stays), quit: the
    // last `n` is never read.
    assert_eq!(positions, [0, 1, 2, 1, 31, 31]);
    let screen31 = out.split("— event #31 of").nth(1).unwrap();
    assert!(screen31.contains("#31 storage: "), "{screen31}");
    assert!(out.contains("(no violation after this event)"));
    assert!(out.contains("⚠ stale_write"));
    assert!(out
        .trim_end()
        .ends_with("repro: fencesim run scenarios/figure-9-6-unfenced.toml --seed 1"));
}

#[test]
fn interactive_walk_stops_at_both_ends_and_at_the_end_of_input() {
    let (positions, out) = drive("figure-9-6", "b\nx\n");
    assert_eq!(positions, [0, 0, 0]);
    assert!(out.contains("(this is the first event)"));
    assert!(out.contains("(unknown command \"x\"; ? shows the keys)"));
    let forward = "\n".repeat(45);
    let (positions, out) = drive("figure-9-6", &forward);
    assert_eq!(*positions.last().unwrap(), 39);
    assert!(out.contains("(this is the last event)"));
    // The last step shows the verdict; every screen shows the lanes with
    // the current row marked and the beliefs.
    assert!(out.contains("verdict: SAFE"));
    assert!(out.contains("▸ 16.013s"));
    assert!(out.contains("beliefs: client1 holds nothing"));
}

#[test]
fn g_n_and_a_bare_n_jump_to_the_journal_event_the_listing_numbers() {
    // `g 27`, then `5`, then `#31`, then an event that does not exist.
    let (positions, out) = drive("figure-9-6", "g 27\n5\n#31\n99\n");
    assert_eq!(positions, [0, 27, 5, 31, 31]);
    assert!(out.contains("(no event #99: events are #0–#39)"), "{out}");
    // Event #27 is the resume: the same event the piped listing numbers 27.
    let (_, piped, _) = fencesim(&["step", "scenarios/figure-9-6.toml"]).into_parts();
    let line27 = piped.lines().find(|l| l.starts_with("27 ")).unwrap();
    assert!(line27.contains("client1 resumes after 15.000s"), "{line27}");
    let screen27 = out.split("— event #27 of").nth(1).unwrap();
    assert!(screen27.contains("#27 client1: ▶ resumed"), "{screen27}");
}

#[test]
fn slash_searches_forward_and_n_repeats_the_search() {
    // "token 34" first appears at the lock's grant (#10), then in the
    // lanes of its message (#11) and client2's acquisition.
    let w = walk("figure-9-6");
    let hits: Vec<u64> = w
        .steps
        .iter()
        .filter(|s| {
            [&s.node, &s.phrase, &s.sentence, &s.beliefs]
                .iter()
                .any(|t| t.to_lowercase().contains("token 34"))
        })
        .map(|s| s.seq)
        .collect();
    assert!(hits.len() >= 3, "{hits:?}");
    let (positions, out) = drive("figure-9-6", "/Token 34\nn\n/\n/no such text\n");
    assert_eq!(positions, [0, hits[0], hits[1], hits[2], hits[2]]);
    assert!(out.contains("(no event after this one mentions \"no such text\")"));
    // Before any search, `n` is the next event.
    let (positions, _) = drive("figure-9-6", "n\n");
    assert_eq!(positions, [0, 1]);
}

#[test]
fn f_jumps_from_fault_to_fault() {
    // figure 9-6 has one fault, client1's pause (event #6).
    let (positions, out) = drive("figure-9-6", "f\nf\n");
    assert_eq!(positions, [0, 6, 6]);
    assert!(out.contains("#6 client1: ⏸ paused 15.000s"), "{out}");
    assert!(out.contains("(no fault after this event)"));
    // A partition, then its link rules, in order of the journal.
    let w = walk("partitioned-holder");
    let faults: Vec<u64> = w.steps.iter().filter(|s| s.fault).map(|s| s.seq).collect();
    assert!(!faults.is_empty());
    let input = "f\n".repeat(faults.len());
    let (positions, _) = drive("partitioned-holder", &input);
    assert_eq!(positions[1..], faults[..]);
}

#[test]
fn the_help_screen_lists_every_key() {
    let (_, out) = drive("figure-9-6", "?\n");
    let keys = out.split("  keys:\n").nth(1).expect("the help screen");
    for key in [
        "Enter",
        "g N, or N",
        "/text",
        "n ",
        "f ",
        "v ",
        "b ",
        "? ",
        "q ",
    ] {
        assert!(
            keys.contains(&format!("\n    {key}")) || keys.starts_with(&format!("    {key}")),
            "{key}: {keys}"
        );
    }
}

/// The step screens of a bundled scenario, its lanes sized for 80 columns.
fn screens_at_80(name: &str) -> Vec<String> {
    let (s, run) = bundled(name);
    let journal = &run.result.journal;
    let width = lane_width(journal, &run.nodes, 80);
    let options = LanesOptions {
        width,
        deliveries: true,
        color: false,
    };
    let mut w = Walk::new(&s.name, journal, &run.report, &run.nodes, &options, "repro");
    w.columns = Some(80);
    (0..w.steps.len()).map(|i| w.screen(i)).collect()
}

#[test]
fn at_80_columns_no_lane_and_no_sentence_wraps() {
    for name in [
        "figure-9-6",
        "partitioned-holder",
        "jepsen-etcd-lock",
        "redlock-gc-pause-during-acquisition",
        "renewal-outlived-by-a-pause",
    ] {
        let screens = screens_at_80(name);
        // The last screen adds the verdict and notes, which are not lanes.
        for screen in &screens[..screens.len() - 1] {
            for line in screen.lines().skip(1) {
                assert!(
                    line.chars().count() <= 80,
                    "{name}: {} chars: {line}",
                    line.chars().count()
                );
            }
            // Every lane is there, none cut to nothing.
            assert!(screen.contains("▸ "), "{name}");
        }
    }
}

#[test]
fn the_lane_width_follows_the_terminal() {
    let (_, run) = bundled("figure-9-6");
    let journal = &run.result.journal;
    // Four lanes (client1, client2, lock, storage) after "▸ " and a
    // 7-char time: (80 − 9) / 4 − 2 = 15; wider terminals, wider lanes.
    assert_eq!(lane_width(journal, &run.nodes, 80), 15);
    assert_eq!(lane_width(journal, &run.nodes, 160), 35);
    // Never below 4, however narrow.
    assert_eq!(lane_width(journal, &run.nodes, 10), 4);
}

#[test]
fn step_beliefs_follow_each_renewal() {
    let w = walk("renewal-outlived-by-a-pause");
    let (_, run) = bundled("renewal-outlived-by-a-pause");
    let events = run.result.journal.events();
    // Where client1 asked: its sends of "renew", on its own clock.
    let asked: Vec<i64> = events
        .iter()
        .filter(|e| e.is("client1", "send") && e.str("msg").is_some_and(|m| m.starts_with("renew")))
        .map(|e| e.local_ns)
        .collect();
    let renewed: Vec<usize> = events
        .iter()
        .enumerate()
        .filter(|(_, e)| e.is("client1", "renewed"))
        .map(|(i, _)| i)
        .collect();
    assert_eq!(renewed.len(), 2, "two renewals before the pause");
    let mut believed_before = "6.005s".to_owned(); // acquired at 0.005s + 6 s
    for (n, &i) in renewed.iter().enumerate() {
        // Asked at `asked[n]`, granted 6 s more: that is the end believed.
        let until = fencesim::report::belief::local_seconds(asked[n] + 6_000_000_000);
        let step = &w.steps[i];
        assert!(
            step.sentence
                .contains(&format!("until {until} on its own clock"))
                && step
                    .sentence
                    .ends_with(&format!("no longer until {believed_before}.")),
            "{}",
            step.sentence
        );
        assert!(
            step.beliefs
                .contains(&format!("client1 believes lease 1 (token 1) until {until}")),
            "{}",
            step.beliefs
        );
        // From this renewal on, no step says the old end any more.
        let next = renewed.get(n + 1).copied().unwrap_or(w.steps.len());
        for later in &w.steps[i..next] {
            assert!(
                !later.beliefs.contains(&format!("until {believed_before}")),
                "{later:?}"
            );
        }
        believed_before = until;
    }
    assert_eq!(believed_before, "12.005s");
    // The lock expires the renewed lease, and says what client1 still
    // believes: the end of its last renewal.
    let expired = w
        .steps
        .iter()
        .find(|s| s.phrase.ends_with("expired"))
        .unwrap();
    assert!(
        expired
            .sentence
            .contains("client1 still believes it holds it until 12.005s"),
        "{}",
        expired.sentence
    );
    // The piped listing says the same.
    let (code, stdout, _) =
        fencesim(&["step", "scenarios/renewal-outlived-by-a-pause.toml"]).into_parts();
    assert_eq!(code, 0);
    let line = stdout
        .lines()
        .find(|l| l.contains("is renewed") && l.contains("until 12.005s"))
        .expect("the second renewal");
    assert!(line.contains("no longer until 9.005s"), "{line}");
}

#[test]
fn step_help_lists_the_walks_keys() {
    let (code, stdout, _) = fencesim(&["step", "--help"]).into_parts();
    assert_eq!(code, 0);
    let keys = stdout
        .split("Keys on a terminal")
        .nth(1)
        .expect("the keys after the options");
    for line in fencesim::report::step::HELP.lines() {
        assert!(keys.contains(line), "{line}");
    }
    assert!(stdout.contains("--width <WIDTH>"));
}

/// `fencesim step FILE | head -1`: when the reader goes away, the program
/// ends quietly (by SIGPIPE, as Unix filters do), never with a panic.
#[test]
#[cfg(unix)]
fn a_closed_pipe_ends_step_quietly() {
    use std::io::{BufRead, BufReader};
    use std::os::unix::process::ExitStatusExt;
    use std::process::Stdio;

    let mut child = crate::support::command(crate::crate_root())
        .args(["step", "scenarios/jepsen-etcd-lock.toml"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run fencesim");
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(!first.is_empty());
    // The reader is dropped here: the rest of the 324 steps meet a closed pipe.
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        out.status.signal() == Some(libc::SIGPIPE),
        "{:?}: {stderr}",
        out.status
    );
}

#[test]
fn a_delay_without_a_sender_reads_as_any_nodes_messages_to_its_receiver() {
    // Journaled on its receiver, a rule with no sender once read as "every
    // message from lock to lock".
    let text = r#"
name = "delay-any-sender"
[lock]
design = "lease"
ttl = "10s"
[storage]
design = "fenced"
[[clients]]
name = "client1"
[[faults]]
kind = "delay"
to = "lock"
extra = "2s"
duration = "5s"
at = "0s"
"#;
    let s = fencesim::scenario::load_str(
        &fencesim::design::catalog::Registry::builtin(),
        "delay-any-sender.toml",
        text,
    )
    .unwrap();
    let run = fencesim::runner::run(&s, 1);
    let steps = fencesim::report::step::steps(&run.result.journal, &run.report);
    let armed: Vec<&str> = steps
        .iter()
        .map(|s| s.sentence.as_str())
        .filter(|s| s.starts_with("A network fault is armed"))
        .collect();
    assert_eq!(
        armed,
        [
            "A network fault is armed: every message from any node to lock for the next 5.000s \
          will be held 2.000s longer in the network."
        ]
    );
}

/// A lock that frees a lease its holder did not give back (a stray or
/// retried release, such as etcd's `Unlock` retried after its delete had
/// committed) says that the holder still believes it holds it.
#[test]
fn a_lease_freed_behind_its_holder_s_back_says_who_still_believes() {
    use fencesim::oracle::{check, OracleConfig};
    use sim::journal::{Event, Journal};
    const MS: u64 = 1_000_000;
    let ev = |seq: u64, t_ms: u64, node: &str, kind: &str| {
        Event::new(seq, t_ms * MS, node, (t_ms * MS) as i64, kind)
    };
    let lease = |e: Event| e.with("lease", 1u64).with("token", 7u64);
    let journal = Journal::from_events(vec![
        lease(ev(0, 0, "lock", "granted").with("client", "client1")),
        lease(ev(1, 2, "client1", "acquired")).with("ttl_ms", 10_000u64),
        ev(2, 3_000, "lock", "released")
            .with("client", "client1")
            .with("lease", 1u64),
    ]);
    let steps = fencesim::report::step::steps(&journal, &check(&journal, &OracleConfig::default()));
    assert_eq!(
        steps[2].sentence,
        "lock frees lease 1 of client1: the lock is free; but client1 still believes it holds \
         it until 10.002s on its own clock."
    );
    // A release the holder sent says nothing more: it stopped believing first.
    let journal = Journal::from_events(vec![
        lease(ev(0, 0, "lock", "granted").with("client", "client1")),
        lease(ev(1, 2, "client1", "acquired")).with("ttl_ms", 10_000u64),
        ev(2, 1_000, "client1", "released").with("lease", 1u64),
        ev(3, 1_002, "lock", "released")
            .with("client", "client1")
            .with("lease", 1u64),
    ]);
    let steps = fencesim::report::step::steps(&journal, &check(&journal, &OracleConfig::default()));
    assert_eq!(
        steps[3].sentence,
        "lock frees lease 1 of client1: the lock is free."
    );
}
