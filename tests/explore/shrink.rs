use fencesim::design::catalog::Registry;
use fencesim::explore::shrink::{counted, shrink, words, Target};
use fencesim::explore::sweep::{run_seed, FaultMode};
use fencesim::oracle::Verdict;
use fencesim::scenario::{load_str, to_toml, Fault};

use crate::bundled;

#[test]
fn a_shrunk_failure_loads_back_still_fails_and_has_at_most_three_faults() {
    let s = bundled("explore-lease-unfenced");
    for seed in [7, 10] {
        let shrunk = shrink(&s, seed, FaultMode::Random).expect("the seed violates");
        assert!(shrunk.after.len() <= 3, "{:?}", shrunk.after);
        assert!(shrunk.after.len() <= shrunk.before.len());
        let text = to_toml(&shrunk.scenario);
        let loaded = load_str(&Registry::builtin(), "shrunk.toml", &text).unwrap();
        assert_eq!(loaded.seed, seed);
        assert!(loaded.expect.verdict.is_none());
        let run = fencesim::runner::run(&loaded, loaded.seed);
        assert_eq!(run.report.verdict, Verdict::Violation, "{text}");
        assert!(!run.expectations_met, "run exits 1 on it");
        // The finding shrink kept, at the same writes, replayed from the
        // file; and it is the seed's finding, by the same mechanism (its
        // grants may be numbered otherwise once faults are gone).
        let kept = shrunk.kept.as_ref().unwrap();
        assert!(counted(&run, loaded.strict).contains(kept));
        let seed_finding = shrunk.target.finding().unwrap();
        assert_eq!(
            (kept.kind, &kept.writer, &kept.newer_holder, kept.late_grant),
            (
                seed_finding.kind,
                &seed_finding.writer,
                &seed_finding.newer_holder,
                seed_finding.late_grant
            )
        );
    }
}

#[test]
fn a_safe_seed_cannot_be_shrunk() {
    let s = bundled("explore-lease-unfenced");
    assert!(shrink(&s, 0, FaultMode::Random).is_err());
}

/// Seed 72 of the late-grant scenario with random faults: client1's grant
/// reaches it late (the scenario's held lock replies) and its write lands
/// after client2's. A shrink that accepted any stale write could drop the
/// late grant's delay and keep a pause of client1 after it acquired: an
/// ordinary holder paused past expiry, another mechanism (seed 27 did so
/// under the random schedules drawn before swarm exploration). The shrunk
/// schedule must keep the late grant.
#[test]
fn shrinking_a_late_grant_keeps_it_late() {
    let s = bundled("etcd-11456-late-grant-writes-first");
    let (run, _) = run_seed(&s, 72, FaultMode::Random);
    let first = counted(&run, s.strict).into_iter().next().unwrap();
    assert!(first.late_grant, "{first}");

    let shrunk = shrink(&s, 72, FaultMode::Random).unwrap();
    assert_eq!(shrunk.target, Target::Finding(first.clone()));
    assert!(
        shrunk.after.len() < shrunk.before.len(),
        "{:?}",
        shrunk.after
    );
    let kept = counted(&shrunk.run, s.strict);
    assert!(kept.contains(&first), "{kept:?}");
    assert!(kept.iter().any(|k| k.late_grant));
    // The late grant's cause survives: the lock's replies to client1 held.
    assert!(
        shrunk.after.iter().any(|f| matches!(&f.fault,
            Fault::Delay(d) if d.from.as_deref() == Some("lock") && d.to == "client1")),
        "{:?}",
        shrunk.after
    );
}

/// A zombie write made after client2's newer grant stays one: shrinking
/// the delay of client1's write below the point where client2 is granted
/// would leave a zombie write after a bare expiry.
#[test]
fn shrinking_a_zombie_write_keeps_the_newer_holder() {
    let s = bundled("zombie-write-window");
    let shrunk = shrink(&s, 0, FaultMode::Random).unwrap();
    assert_eq!(
        shrunk.target.finding().unwrap().newer_holder.as_deref(),
        Some("client2")
    );
    assert_eq!(
        shrunk.target.finding().unwrap().writer.as_deref(),
        Some("client1")
    );
    let kept = counted(&shrunk.run, shrunk.scenario.strict);
    assert!(kept.contains(shrunk.target.finding().unwrap()), "{kept:?}");
}

#[test]
fn the_shrunk_description_names_the_remaining_faults_not_the_old_story() {
    let s = bundled("etcd-11456-late-grant-writes-first");
    let shrunk = shrink(&s, 72, FaultMode::Random).unwrap();
    let d = &shrunk.scenario.description;
    assert!(!d.contains(s.description.trim()), "{d}");
    assert!(!d.contains("etcd issue"), "{d}");
    for f in &shrunk.after {
        assert!(d.contains(&words(f)), "{} not in {d}", words(f));
    }
    for f in shrunk.before.iter().filter(|f| !shrunk.after.contains(f)) {
        assert!(
            !d.contains(&words(f)),
            "{} is gone but named in {d}",
            words(f)
        );
    }
    assert!(d.contains(&shrunk.target.to_string()), "{d}");
    assert!(d.contains("seed 72"), "{d}");
}

/// A sweep's line names the finding that `shrink` will keep: its first.
#[test]
fn a_swept_seed_names_the_finding_shrink_keeps() {
    let s = bundled("etcd-11456-late-grant-writes-first");
    let (_, report) = run_seed(&s, 72, FaultMode::Random);
    let shrunk = shrink(&s, 72, FaultMode::Random).unwrap();
    assert_eq!(report.findings[0], shrunk.target.to_string());
    assert_eq!(
        report.json("repro")["findings"][0],
        "stale_write by client1 (grant client1#1), granted late after client2 (grant client2#1)"
    );
    // A safe seed has none.
    let (_, safe) = run_seed(&bundled("explore-lease-unfenced"), 0, FaultMode::Random);
    assert!(safe.findings.is_empty());
}
