//! `fencesim step`: the piped listing and the interactive walk.

use std::io::Cursor;

use crate::{fencesim, walk};

#[test]
fn piped_step_lists_every_event_of_figure_9_6_then_the_verdict() {
    let (code, stdout, stderr) = fencesim(&["step", "scenarios/figure-9-6.toml"]);
    assert_eq!(code, 0, "stderr: {stderr}");
    insta::assert_snapshot!("figure_9_6_piped", stdout);
    // One numbered line per event, between the title and the verdict.
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines[0], "figure-9-6: 40 steps");
    for (i, line) in lines[1..41].iter().enumerate() {
        assert!(line.trim_start().starts_with(&format!("{i} ")), "{line}");
    }
    assert!(lines[41].starts_with("verdict  SAFE"));
}

#[test]
fn the_resume_step_says_what_client1_believes_and_what_is_true() {
    let w = walk("figure-9-6");
    let resume = w.steps.iter().find(|s| s.phrase == "▶ resumed").unwrap();
    assert!(
        resume.sentence.starts_with(
            "client1 resumes after 15.000s; it still believes its lease 1 (token 33) runs until \
             10.005s on its own clock"
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
    let (code, stdout, _) = fencesim(&["step", "scenarios/figure-9-6-unfenced.toml"]);
    assert_eq!(code, 0);
    let marked: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains("⚠ stale_write"))
        .collect();
    assert_eq!(marked.len(), 1, "{stdout}");
    assert!(stdout.contains("verdict  VIOLATION"));
}

#[test]
fn step_with_a_bad_file_exits_2() {
    let (code, _, stderr) = fencesim(&["step", "scenarios/no-such-file.toml"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("no-such-file.toml"), "{stderr}");
}

/// Drives the interactive loop with `input` and returns the positions of
/// the screens it showed (1-based step numbers) and the whole output.
fn drive(name: &str, input: &str) -> (Vec<usize>, String) {
    let w = walk(name);
    let mut out = Vec::new();
    w.interact(Cursor::new(input), &mut out, false).unwrap();
    let out = String::from_utf8(out).unwrap();
    let total = w.steps.len();
    let positions = out
        .lines()
        .filter_map(|l| {
            let rest = l.split(" — step ").nth(1)?;
            let n = rest.split(" of ").next()?;
            assert!(rest.contains(&format!(" of {total}, event #")));
            n.parse().ok()
        })
        .collect();
    (positions, out)
}

#[test]
fn interactive_walk_moves_next_back_to_the_violation_and_quits() {
    let (positions, out) = drive("figure-9-6-unfenced", "n\n\nb\nv\nv\nq\nn\n");
    // next, Enter (next), back, violation (event 31 = step 32), no further
    // violation (stays), quit: the last `n` is never read.
    assert_eq!(positions, [1, 2, 3, 2, 32, 32]);
    assert!(out.contains("(no violation after this step)"));
    assert!(out.contains("⚠ stale_write"));
    assert!(out
        .trim_end()
        .ends_with("repro: fencesim run scenarios/figure-9-6-unfenced.toml --seed 1"));
}

#[test]
fn interactive_walk_stops_at_both_ends_and_at_the_end_of_input() {
    let (positions, out) = drive("figure-9-6", "b\nx\n");
    assert_eq!(positions, [1, 1, 1]);
    assert!(out.contains("(this is the first step)"));
    assert!(out.contains("(unknown command \"x\")"));
    let forward = "n\n".repeat(45);
    let (positions, out) = drive("figure-9-6", &forward);
    assert_eq!(*positions.last().unwrap(), 40);
    assert!(out.contains("(this is the last step)"));
    // The last step shows the verdict; every screen shows the lanes with
    // the current row marked and the beliefs.
    assert!(out.contains("verdict: SAFE"));
    assert!(out.contains("▸ 16.013s"));
    assert!(out.contains("beliefs: client1 holds nothing"));
}
