//! The terminal lanes view, on DDIA's figure 9-6 and on edge cases.

use fencesim::report::{describe, lanes, LanesOptions};
use insta::assert_snapshot;
use sim::journal::{Event, Journal};

/// Builds a journal from a story told in milliseconds of true time. Messages
/// are sent and delivered in one call; events are sorted by time (stably, so
/// events at the same millisecond keep the order they were told in).
#[derive(Default)]
struct Story {
    events: Vec<Event>,
    next_msg: u64,
}

impl Story {
    fn event(&mut self, t_ms: u64, node: &str, kind: &str) -> &mut Event {
        let t_ns = t_ms * 1_000_000;
        self.events
            .push(Event::new(0, t_ns, node, t_ns as i64, kind));
        self.events.last_mut().unwrap()
    }

    /// Adds a field to the last event told.
    fn with(&mut self, name: &str, value: impl Into<sim::journal::Value>) -> &mut Self {
        let last = self.events.pop().unwrap();
        self.events.push(last.with(name, value));
        self
    }

    fn at(&mut self, t_ms: u64, node: &str, kind: &str) -> &mut Self {
        self.event(t_ms, node, kind);
        self
    }

    /// `from` sends `msg` to `to` at `sent_ms`; `to` handles it at `delivered_ms`.
    fn message(
        &mut self,
        sent_ms: u64,
        delivered_ms: u64,
        from: &str,
        to: &str,
        msg: &str,
    ) -> &mut Self {
        self.next_msg += 1;
        let id = self.next_msg;
        self.at(sent_ms, from, "send")
            .with("id", id)
            .with("to", to)
            .with("msg", msg);
        self.at(delivered_ms, to, "deliver")
            .with("id", id)
            .with("from", from)
            .with("msg", msg)
    }

    fn journal(&self) -> Journal {
        let mut events = self.events.clone();
        events.sort_by_key(|e| e.t_ns);
        Journal::from_events(events)
    }
}

fn nodes(names: &[&str]) -> Vec<String> {
    names.iter().map(|n| n.to_string()).collect()
}

fn figure_nodes() -> Vec<String> {
    nodes(&["client1", "client2", "lock", "storage"])
}

/// DDIA figure 9-6: client 1 is paused while holding lease 1 (token 33); the
/// lease expires, client 2 acquires token 34 and writes; client 1 wakes up,
/// writes with token 33, and the storage rejects it.
fn figure_9_6() -> Journal {
    let mut s = Story::default();
    s.message(0, 2, "client1", "lock", "acquire");
    s.at(2, "lock", "granted")
        .with("client", "client1")
        .with("lease", 1u64)
        .with("token", 33u64);
    s.message(2, 4, "lock", "client1", "grant lease=1 token=33");
    s.at(4, "client1", "acquired")
        .with("lease", 1u64)
        .with("token", 33u64)
        .with("ttl_ms", 10_000u64);
    s.at(4, "client1", "pause").with("duration_ms", 15_000u64);
    s.at(10_004, "lock", "expired")
        .with("client", "client1")
        .with("lease", 1u64);
    s.message(12_000, 12_003, "client2", "lock", "acquire");
    s.at(12_003, "lock", "granted")
        .with("client", "client2")
        .with("lease", 2u64)
        .with("token", 34u64);
    s.message(12_003, 12_006, "lock", "client2", "grant lease=2 token=34");
    s.at(12_006, "client2", "acquired")
        .with("lease", 2u64)
        .with("token", 34u64)
        .with("ttl_ms", 10_000u64);
    s.at(13_006, "client2", "wrote")
        .with("write", "client2/1")
        .with("token", 34u64)
        .with("value", 1i64)
        .with("op", "put");
    s.message(
        13_006,
        13_009,
        "client2",
        "storage",
        "write client2/1 token=34 value=1",
    );
    s.at(13_009, "storage", "accepted")
        .with("write", "client2/1")
        .with("client", "client2")
        .with("token", 34u64)
        .with("value", 1i64)
        .with("key", "x");
    s.message(13_009, 13_012, "storage", "client2", "ok client2/1");
    s.at(13_012, "client2", "acked")
        .with("write", "client2/1")
        .with("ok", true)
        .with("op", "put");
    s.message(13_012, 13_015, "client2", "lock", "release lease=2");
    s.at(13_012, "client2", "released").with("lease", 2u64);
    s.at(13_015, "lock", "released")
        .with("client", "client2")
        .with("lease", 2u64);
    s.at(15_004, "client1", "resume");
    s.at(15_004, "client1", "wrote")
        .with("write", "client1/1")
        .with("token", 33u64)
        .with("value", 1i64)
        .with("op", "put");
    s.message(
        15_004,
        15_007,
        "client1",
        "storage",
        "write client1/1 token=33 value=1",
    );
    s.at(15_007, "storage", "rejected")
        .with("write", "client1/1")
        .with("client", "client1")
        .with("token", 33u64)
        .with("reason", "stale token")
        .with("max_token", 34u64)
        .with("key", "x");
    s.message(15_007, 15_010, "storage", "client1", "rejected client1/1");
    s.at(15_010, "client1", "acked")
        .with("write", "client1/1")
        .with("ok", false)
        .with("op", "put");
    s.message(15_010, 15_013, "client1", "lock", "release lease=1");
    s.at(15_010, "client1", "released").with("lease", 1u64);
    s.journal()
}

fn wide() -> LanesOptions {
    LanesOptions {
        width: 34,
        ..LanesOptions::default()
    }
}

/// The char offsets at which each column starts, read off the underline.
fn column_starts(out: &str) -> Vec<usize> {
    let underline: Vec<char> = out.lines().nth(1).unwrap().chars().collect();
    (0..underline.len())
        .filter(|&i| underline[i] == '─' && (i == 0 || underline[i - 1] == ' '))
        .collect()
}

/// The char at `column` in every row below the header.
fn column_chars(out: &str, column: usize) -> Vec<char> {
    out.lines()
        .skip(2)
        .map(|row| row.chars().nth(column).unwrap_or(' '))
        .collect()
}

fn assert_well_formed(out: &str) {
    let starts = column_starts(out);
    for row in out.lines() {
        assert_eq!(row, row.trim_end(), "trailing whitespace in {row:?}");
        let chars: Vec<char> = row.chars().collect();
        for &start in &starts[1..] {
            // Each lane begins with its phrase or its bar, after a blank gutter.
            assert!(
                chars.get(start).is_some_and(|c| !c.is_whitespace()),
                "lane at {start} missing in {row:?}"
            );
            if start > 0 {
                assert_eq!(
                    &chars[start - 2..start],
                    [' ', ' '],
                    "gutter before {start} in {row:?}"
                );
            }
        }
    }
    assert!(out.ends_with('\n'));
}

#[test]
fn figure_9_6_lanes() {
    let out = lanes(&figure_9_6(), &figure_nodes(), &wide());
    assert_well_formed(&out);
    assert_snapshot!("figure_9_6", out);
}

#[test]
fn figure_9_6_lanes_with_deliveries() {
    let options = LanesOptions {
        deliveries: true,
        ..wide()
    };
    let out = lanes(&figure_9_6(), &figure_nodes(), &options);
    assert_well_formed(&out);
    assert_snapshot!("figure_9_6_deliveries", out);
}

#[test]
fn figure_9_6_lanes_default_width() {
    let out = lanes(&figure_9_6(), &figure_nodes(), &LanesOptions::default());
    assert_well_formed(&out);
    assert_snapshot!("figure_9_6_default", out);
}

#[test]
fn paused_band_only_between_pause_and_resume() {
    for deliveries in [false, true] {
        let options = LanesOptions {
            deliveries,
            ..wide()
        };
        let out = lanes(&figure_9_6(), &figure_nodes(), &options);
        let rows: Vec<&str> = out.lines().skip(2).collect();
        let pause = rows
            .iter()
            .position(|r| r.contains("⏸ paused 15.000s"))
            .unwrap();
        let resume = rows.iter().position(|r| r.contains("▶ resumed")).unwrap();
        assert!(resume > pause + 1);
        let client1 = column_chars(&out, column_starts(&out)[1]);
        for (i, c) in client1.iter().enumerate() {
            assert_eq!(*c == '┊', pause < i && i < resume, "row {i}: {:?}", rows[i]);
        }
        // No other lane is ever paused in this story.
        for &start in &column_starts(&out)[2..] {
            assert!(!column_chars(&out, start).contains(&'┊'));
        }
    }
}

#[test]
fn crash_draws_the_band_until_restart() {
    let mut s = Story::default();
    s.at(1_000, "lock", "crash");
    s.at(2_000, "client1", "denied");
    s.at(3_000, "lock", "restart");
    s.at(4_000, "client1", "denied");
    let out = lanes(&s.journal(), &nodes(&["client1", "lock"]), &wide());
    assert_eq!(
        column_chars(&out, column_starts(&out)[2]),
        ['✗', '┊', '↻', '│']
    );
    let options = LanesOptions {
        color: true,
        ..wide()
    };
    let colored = lanes(&s.journal(), &nodes(&["client1", "lock"]), &options);
    assert!(colored.contains("\x1b[31m✗ crashed\x1b[0m"), "{colored}");
}

#[test]
fn deliveries_are_hidden_by_default() {
    let journal = figure_9_6();
    let plain = lanes(&journal, &figure_nodes(), &wide());
    let with = lanes(
        &journal,
        &figure_nodes(),
        &LanesOptions {
            deliveries: true,
            ..wide()
        },
    );
    assert!(!plain.contains('←'));
    assert!(with.contains("← lock: grant lease=1 token=33"));
    let delivers = journal
        .events()
        .iter()
        .filter(|e| e.kind == "deliver")
        .count();
    assert_eq!(with.lines().count(), plain.lines().count() + delivers);
}

#[test]
fn truncates_by_chars_not_bytes() {
    let mut s = Story::default();
    s.at(1, "client1", "send")
        .with("id", 1u64)
        .with("to", "störäge")
        .with("msg", "écrire ünë valeur très longue");
    let options = LanesOptions {
        width: 14,
        ..LanesOptions::default()
    };
    let out = lanes(&s.journal(), &nodes(&["client1", "störäge"]), &options);
    let row = out.lines().nth(2).unwrap();
    // 13 chars and the ellipsis make 14 chars (but 21 bytes).
    let cell: String = row.chars().skip(column_starts(&out)[1]).take(14).collect();
    assert_eq!(cell, "→ störäge: éc…");
    let header = out.lines().next().unwrap();
    assert!(header.ends_with("client1         störäge"), "{header:?}");
    assert_well_formed(&out);
    // Long node names are cut too, so the header lines up with the lanes.
    let long = nodes(&["a-very-long-client-name", "störäge"]);
    let out = lanes(&s.journal(), &long, &options);
    assert!(
        out.starts_with("  time  a-very-long-c…  störäge  "),
        "{out}"
    );
    // A phrase that fits exactly is not cut.
    let options = LanesOptions {
        width: 24,
        ..LanesOptions::default()
    };
    let mut s = Story::default();
    s.at(1, "lock", "granted")
        .with("client", "client2")
        .with("lease", 2u64)
        .with("token", 34u64);
    let out = lanes(&s.journal(), &nodes(&["lock"]), &options);
    assert!(out.ends_with("  granted client2 token 34\n"), "{out}");
}

#[test]
fn unknown_kinds_fall_back_to_fields() {
    let e = Event::new(0, 0, "client1", 0, "migrated")
        .with("lease", 1u64)
        .with("ttl_ms", 500u64);
    assert_eq!(describe(&e), "migrated lease=1 ttl_ms=500");
    assert_eq!(describe(&Event::new(0, 0, "x", 0, "tick")), "tick");
    // A known kind missing the field it needs also falls back.
    let e = Event::new(0, 0, "client1", 0, "acquired").with("token", 7u64);
    assert_eq!(describe(&e), "acquired token=7");
    let mut s = Story::default();
    s.at(5, "client1", "migrated").with("lease", 1u64);
    let out = lanes(&s.journal(), &nodes(&["client1"]), &wide());
    assert!(out.contains("0.005s  migrated lease=1"), "{out}");
}

#[test]
fn phrases() {
    let e = |kind: &str| Event::new(0, 0, "n", 0, kind);
    let cases = [
        (
            e("send")
                .with("id", 7u64)
                .with("to", "storage")
                .with("msg", "write client1/1 token=33"),
            "→ storage: write client1/1 token=33",
        ),
        (
            e("deliver")
                .with("id", 7u64)
                .with("from", "client1")
                .with("msg", "acquire"),
            "← client1: acquire",
        ),
        (
            e("drop")
                .with("id", 7u64)
                .with("to", "storage")
                .with("msg", "x")
                .with("reason", "partition"),
            "✂ dropped msg 7 to storage (partition)",
        ),
        (
            e("duplicate").with("id", 7u64).with("to", "storage"),
            "duplicated msg 7 to storage",
        ),
        (
            e("pause").with("duration_ms", 15_000u64),
            "⏸ paused 15.000s",
        ),
        (e("resume"), "▶ resumed"),
        (e("crash"), "✗ crashed"),
        (e("restart"), "↻ restarted"),
        (
            e("clock").with("jump_ns", 20_000_000_000i64),
            "clock jump +20.000s",
        ),
        (
            e("clock")
                .with("offset_ns", -500_000_000i64)
                .with("rate", 1.1),
            "clock offset -0.500s, rate 1.1",
        ),
        (
            e("partition").with("groups", "client1 | lock storage"),
            "✂ partition client1 | lock storage",
        ),
        (e("heal"), "healed"),
        (
            e("link")
                .with("rule", "delay")
                .with("to", "storage")
                .with("extra_ms", 40_000u64),
            "⚑ link → storage: delay +40.000s",
        ),
        (
            e("link")
                .with("rule", "drop")
                .with("to", "lock")
                .with("count", 3u64),
            "⚑ link → lock: drop ×3",
        ),
        (
            e("link")
                .with("rule", "duplicate")
                .with("to", "lock")
                .with("duration_ms", 2_000u64),
            "⚑ link → lock: duplicate for 2.000s",
        ),
        (
            e("renewed").with("lease", 1u64).with("ttl_ms", 6_000u64),
            "renewed lease 1 (+6.000s)",
        ),
        (
            e("renewed").with("client", "client1").with("lease", 1u64),
            "renewed lease 1 of client1",
        ),
        (e("lost"), "lost the lock"),
        (
            e("checked")
                .with("lease", 2u64)
                .with("remaining_ms", 1_500u64),
            "checked lease 2: 1.500s left",
        ),
        (
            e("lapsed").with("lease", 2u64).with("overdue_ms", 250u64),
            "lease 2 lapsed 0.250s ago",
        ),
        (
            e("fenced").with("write", "client2/1").with("token", 34u64),
            "fenced client2/1 (token 34)",
        ),
        (
            e("acquired").with("lease", 1u64).with("token", 33u64),
            "acquired lease 1, token 33",
        ),
        (e("acquired").with("lease", 1u64), "acquired lease 1"),
        (e("denied"), "denied"),
        (
            e("read").with("value", 4i64).with("version", 9u64),
            "read value 4 (version 9)",
        ),
        (
            e("wrote")
                .with("write", "client1/1")
                .with("token", 33u64)
                .with("op", "put"),
            "wrote client1/1 (token 33)",
        ),
        (
            e("wrote")
                .with("write", "client1/2")
                .with("op", "increment"),
            "incremented client1/2",
        ),
        (
            e("acked").with("write", "client1/1").with("ok", false),
            "ack client1/1 REFUSED",
        ),
        (e("released").with("lease", 1u64), "released lease 1"),
        (
            e("released").with("client", "client1").with("lease", 1u64),
            "lease 1 of client1 released",
        ),
        (
            e("granted")
                .with("client", "client2")
                .with("lease", 2u64)
                .with("token", 34u64),
            "granted client2 token 34",
        ),
        (
            e("granted").with("client", "client2").with("lease", 2u64),
            "granted client2 lease 2",
        ),
        (
            e("expired").with("client", "client1").with("lease", 1u64),
            "lease 1 of client1 expired",
        ),
        (
            e("accepted")
                .with("write", "client2/1")
                .with("token", 34u64),
            "accepted client2/1 (token 34)",
        ),
        (
            e("rejected")
                .with("write", "client1/1")
                .with("token", 33u64)
                .with("max_token", 34u64),
            "REJECTED client1/1 (token 33 < 34)",
        ),
        (
            e("rejected")
                .with("write", "client1/1")
                .with("reason", "version mismatch"),
            "REJECTED client1/1 (version mismatch)",
        ),
        (
            e("send")
                .with("id", 1u64)
                .with("to", "lock")
                .with("msg", "two\nlines"),
            // Control characters are shown, never sent to the terminal.
            "→ lock: two\\x0alines",
        ),
    ];
    for (event, phrase) in cases {
        assert_eq!(describe(&event), phrase, "{event:?}");
    }
}

/// Storage without fencing accepts client 1's token 33 after token 34: the
/// lanes flag it even though the renderer gives no verdict.
#[test]
fn stale_looking_acceptances_stand_out() {
    let accepted = |s: &mut Story, t: u64, write: &str, token: u64| {
        s.at(t, "storage", "accepted")
            .with("write", write)
            .with("token", token);
    };
    let mut s = Story::default();
    s.at(1, "client1", "acquired")
        .with("lease", 1u64)
        .with("token", 33u64);
    s.at(2, "client2", "acquired")
        .with("lease", 2u64)
        .with("token", 34u64);
    accepted(&mut s, 3, "client1/1", 33); // zombie-looking: a newer grant exists
    accepted(&mut s, 4, "client2/1", 34);
    accepted(&mut s, 5, "client1/2", 33); // stale: storage already took 34
    let names = nodes(&["client1", "client2", "storage"]);
    let options = LanesOptions {
        width: 36,
        ..LanesOptions::default()
    };
    let out = lanes(&s.journal(), &names, &options);
    let rows: Vec<&str> = out.lines().skip(2).collect();
    assert!(
        rows[2].ends_with("⚠ accepted client1/1 (token 33 < 34)"),
        "{out}"
    );
    assert!(
        rows[3].ends_with("  accepted client2/1 (token 34)"),
        "{out}"
    );
    assert!(
        rows[4].ends_with("⚠ ACCEPTED client1/2 (token 33 < 34)"),
        "{out}"
    );

    let colored = lanes(
        &s.journal(),
        &names,
        &LanesOptions {
            color: true,
            ..options
        },
    );
    assert!(colored.contains("\x1b[33m⚠ accepted client1/1"));
    assert!(colored.contains("\x1b[32maccepted client2/1"));
    assert!(colored.contains("\x1b[31m⚠ ACCEPTED client1/2"));
    for row in colored.lines() {
        assert_eq!(row, row.trim_end());
    }
}

#[test]
fn color_marks_rejections_and_crashes() {
    let options = LanesOptions {
        color: true,
        ..wide()
    };
    let out = lanes(&figure_9_6(), &figure_nodes(), &options);
    assert!(out.contains("\x1b[31mREJECTED client1/1 (token 33 < 34)\x1b[0m"));
    assert!(out.contains("\x1b[32macquired lease 1, token 33\x1b[0m"));
    assert!(out.contains("\x1b[33m⏸ paused 15.000s\x1b[0m"));
    // Without the escapes, the coloured output is the plain one.
    let plain = lanes(&figure_9_6(), &figure_nodes(), &wide());
    let stripped = out
        .replace("\x1b[0m", "")
        .replace("\x1b[31m", "")
        .replace("\x1b[32m", "")
        .replace("\x1b[33m", "");
    assert_eq!(stripped, plain);
}

#[test]
fn world_column_only_when_needed() {
    let journal = figure_9_6();
    let out = lanes(&journal, &figure_nodes(), &wide());
    assert!(!out.lines().next().unwrap().contains("world"));

    let mut s = Story::default();
    s.at(1_000, "world", "partition")
        .with("groups", "client1 | lock storage");
    s.at(2_000, "client1", "denied");
    s.at(3_000, "client3", "denied");
    s.at(4_000, "world", "heal");
    let out = lanes(&s.journal(), &nodes(&["client1", "lock"]), &wide());
    assert_well_formed(&out);
    assert_snapshot!("world_column", out);
}

#[test]
fn empty_journal_is_just_the_header() {
    let out = lanes(
        &Journal::default(),
        &nodes(&["client1", "lock"]),
        &LanesOptions::default(),
    );
    assert_eq!(out.lines().count(), 2);
    assert_well_formed(&out);
}

#[test]
fn output_is_deterministic() {
    let journal = figure_9_6();
    let options = LanesOptions {
        deliveries: true,
        color: true,
        ..wide()
    };
    assert_eq!(
        lanes(&journal, &figure_nodes(), &options),
        lanes(&journal.clone(), &figure_nodes(), &options)
    );
}
