//! One test per kind of mistake: each names the exact `file:line:col` and
//! says what is wrong.

use std::path::Path;

use fencesim::design::catalog::Registry;
use fencesim::scenario::load_file;

use super::{assert_error, load, BASE};

/// BASE with `lines` appended (they start on line 10).
fn with(lines: &str) -> String {
    format!("{BASE}{lines}")
}

/// A pause fault (header on line 10) with `extra` lines after its keys.
fn pause(extra: &str) -> String {
    with(&format!(
        "[[faults]]\nkind = \"pause\"\nnode = \"client1\"\nduration = \"1s\"\n{extra}"
    ))
}

#[test]
fn unknown_top_level_key_suggests_the_close_one() {
    let text = BASE.replace("name = \"t\"\n", "name = \"t\"\nseeed = 3\n");
    assert_error(
        &text,
        "t.toml:2:1",
        "unknown key `seeed` in the top level (did you mean `seed`?)",
    );
}

#[test]
fn unknown_key_in_lock_lists_the_design_keys_and_renders_like_rustc() {
    let text = BASE.replace(
        "design = \"lease\"\n",
        "design = \"lease\"\nttll = \"10s\"\n",
    );
    let error = assert_error(&text, "t.toml:4:1", "(did you mean `ttl`?)");
    assert!(error
        .message
        .contains("accepted keys: design, ttl, tokens, first_token, durable"));
    assert!(
        error
            .to_string()
            .ends_with(" --> t.toml:4:1\n  |\n4 | ttll = \"10s\"\n  | ^^^^\n"),
        "{error}"
    );
}

#[test]
fn a_key_of_another_fault_kind_is_unknown() {
    let text = pause("at = \"1s\"\nextra = \"1s\"\n");
    let error = assert_error(
        &text,
        "t.toml:15:1",
        "unknown key `extra` in [[faults]] #1 of kind `pause`",
    );
    assert!(error
        .message
        .contains("accepted keys: kind, at, after, delay, node, duration"));
}

#[test]
fn unknown_design_lists_the_known_ones_for_its_role() {
    let text = BASE.replace("\"fenced\"", "\"fencd\"");
    assert_error(&text, "t.toml:5:10", "unknown storage design `fencd` (did you mean `fenced`?); known storage designs: unchecked, fenced");
}

#[test]
fn unknown_node_in_a_fault_lists_the_known_nodes() {
    let text = pause("at = \"1s\"\n").replace("node = \"client1\"", "node = \"client3\"");
    assert_error(&text, "t.toml:12:8", "unknown node `client3`");
    assert_error(
        &text,
        "t.toml:12:8",
        "known nodes: client1, client2, lock, storage",
    );
}

#[test]
fn unknown_event_in_after_is_reported_at_the_value() {
    let text = pause("after = \"client1:aquired\"\n");
    assert_error(
        &text,
        "t.toml:14:9",
        "unknown event `aquired` in `after` (did you mean `acquired`?)",
    );
    let text = pause("after = \"client9:acquired\"\n");
    assert_error(&text, "t.toml:14:9", "unknown node `client9` in `after`");
    let text = pause("after = \"client1:acquired:0\"\n");
    assert_error(&text, "t.toml:14:9", "invalid occurrence `0`");
    let text = pause("after = \"client1\"\n");
    assert_error(
        &text,
        "t.toml:14:9",
        "expected \"node:event\" or \"node:event:N\"",
    );
}

#[test]
fn bad_duration_is_reported_at_the_value() {
    let text = BASE.replace("design = \"lease\"\n", "design = \"lease\"\nttl = \"10\"\n");
    assert_error(&text, "t.toml:4:7", "invalid duration \"10\"");
    let text = pause("at = \"5 parsecs\"\n");
    assert_error(&text, "t.toml:14:6", "invalid duration \"5 parsecs\"");
    let text = with("[[faults]]\nkind = \"clock\"\nnode = \"lock\"\nat = \"1s\"\njump = \"~5s\"\n");
    assert_error(&text, "t.toml:14:8", "invalid signed duration \"~5s\"");
}

#[test]
fn zero_duration_is_refused_where_it_makes_no_sense() {
    let text = BASE.replace("name = \"t\"\n", "name = \"t\"\nduration = \"0s\"\n");
    assert_error(&text, "t.toml:2:12", "`duration` must be greater than 0");
    let text = pause("at = \"1s\"\n").replace("duration = \"1s\"", "duration = \"0ms\"");
    assert_error(
        &text,
        "t.toml:13:12",
        "a pause's `duration` must be greater than 0",
    );
    let text = BASE.replace("name = \"client2\"", "name = \"client2\"\nretry = \"0s\"");
    assert_error(
        &text,
        "t.toml:10:9",
        "`retry`: 0s is out of range: expected 1ms..=24h",
    );
}

#[test]
fn negative_integer_is_refused() {
    let text = BASE.replace("name = \"t\"\n", "name = \"t\"\nseed = -1\n");
    assert_error(
        &text,
        "t.toml:2:8",
        "expected a non-negative integer, found -1",
    );
}

#[test]
fn wrong_type_names_the_expected_and_found_types() {
    let text = BASE.replace("name = \"client2\"", "name = \"client2\"\nrounds = \"3\"");
    assert_error(&text, "t.toml:10:10", "expected an integer, found a string");
    let text = BASE.replace("name = \"t\"", "name = 7");
    assert_error(&text, "t.toml:1:8", "expected a string, found an integer");
    let text = BASE.replace(
        "design = \"lease\"\n",
        "design = \"lease\"\ntokens = \"yes\"\n",
    );
    assert_error(
        &text,
        "t.toml:4:10",
        "expected a boolean (true or false), found a string",
    );
    let text = with("[network]\nlatency = \"1ms\"\n");
    assert_error(&text, "t.toml:11:11", "expected an array, found a string");
    let text = BASE
        .replace("[storage]\ndesign = \"fenced\"\n", "")
        .replace("name = \"t\"\n", "name = \"t\"\nstorage = \"fenced\"\n");
    assert_error(
        &text,
        "t.toml:2:11",
        "expected a table ([storage]), found a string",
    );
}

#[test]
fn duplicate_client_name_is_refused() {
    let text = BASE.replace("\"client2\"", "\"client1\"");
    assert_error(&text, "t.toml:9:8", "duplicate client name `client1`");
}

#[test]
fn clients_cannot_take_a_server_name_or_a_malformed_one() {
    let text = BASE.replace("\"client2\"", "\"storage\"");
    assert_error(&text, "t.toml:9:8", "client name `storage` is reserved");
    let text = BASE.replace("\"client2\"", "\"lock12\"");
    assert_error(&text, "t.toml:9:8", "client name `lock12` is reserved");
    let text = BASE.replace("\"client2\"", "\"2fast\"");
    assert_error(&text, "t.toml:9:8", "invalid client name \"2fast\"");
    // Once accepted, and the run crashed (exit 3) building its world.
    let text = BASE.replace("\"client2\"", "\"world\"");
    assert_error(&text, "t.toml:9:8", "client name `world` is reserved");
    assert!(load(&BASE.replace("\"client2\"", "\"locker\"")).is_ok());
}

#[test]
fn a_fault_with_both_at_and_after_points_at_after() {
    let text = pause("at = \"1s\"\nafter = \"client1:acquired\"\n");
    assert_error(
        &text,
        "t.toml:15:1",
        "a fault takes `at` or `after`, not both",
    );
}

#[test]
fn a_fault_with_neither_at_nor_after_points_at_its_header() {
    let error = assert_error(
        &pause(""),
        "t.toml:10:1",
        "missing trigger in [[faults]] #1",
    );
    assert!(
        error
            .to_string()
            .contains("10 | [[faults]]\n   | ^^^^^^^^^^\n"),
        "{error}"
    );
    let text = pause("at = \"1s\"\ndelay = \"1s\"\n");
    assert_error(&text, "t.toml:15:1", "`delay` applies only to `after`");
}

#[test]
fn absurd_sizes_are_refused() {
    let text = BASE.replace(
        "name = \"client2\"",
        "name = \"client2\"\nrounds = 10000000",
    );
    assert_error(
        &text,
        "t.toml:10:10",
        "10000000 is out of range: expected 1..=100000",
    );
    let text = BASE.replace("name = \"t\"\n", "name = \"t\"\nduration = \"1000h\"\n");
    assert_error(&text, "t.toml:2:12", "too long: at most 24h");
    let text = BASE.replace("name = \"t\"\n", "name = \"t\"\nmax_events = 0\n");
    assert_error(&text, "t.toml:2:14", "out of range: expected 1..=1000000");
    let text = with(
        "[[faults]]\nkind = \"drop\"\nfrom = \"lock\"\nto = \"storage\"\nat = \"1s\"\ncount = 0\n",
    );
    assert_error(
        &text,
        "t.toml:15:9",
        "0 is out of range: expected 1..=1000000",
    );
    let clients = |n: usize| -> String {
        (0..n)
            .map(|i| format!("[[clients]]\nname = \"c{i}\"\n"))
            .collect()
    };
    let head = BASE.split("[[clients]]").next().unwrap().to_string();
    // The 1001st client's table is named, at its line.
    assert_error(
        &(head.clone() + &clients(1001)),
        "t.toml:2006:1",
        "too many clients: 1001, at most 1000",
    );
    load(&(head + &clients(1000))).expect("a thousand clients load");
}

#[test]
fn a_node_in_two_partition_groups_is_refused() {
    let text = with(
        "[[faults]]\nkind = \"partition\"\nat = \"1s\"\nduration = \"1s\"\n\
         groups = [[\"client1\", \"lock\"], [\"storage\", \"client1\"]]\n",
    );
    assert_error(
        &text,
        "t.toml:14:44",
        "node `client1` is in two partition groups",
    );
    let text = text.replace("[\"storage\", \"client1\"]", "[]");
    assert_error(
        &text,
        "t.toml:14:32",
        "a partition group must name at least one node",
    );
}

#[test]
fn link_faults_check_their_endpoints_and_amount() {
    let fault = "[[faults]]\nkind = \"delay\"\nfrom = \"lock\"\nto = \"lock\"\nextra = \"1s\"\nat = \"1s\"\n";
    assert_error(
        &with(fault),
        "t.toml:13:6",
        "`from` and `to` are both `lock`",
    );
    let fault =
        fault.replace("to = \"lock\"", "to = \"storage\"") + "count = 2\nduration = \"1s\"\n";
    assert_error(
        &with(&fault),
        "t.toml:17:1",
        "`count` and `duration` cannot both be given",
    );
}

#[test]
fn clock_faults_need_a_change_and_a_sane_rate() {
    let text = with("[[faults]]\nkind = \"clock\"\nnode = \"lock\"\nat = \"1s\"\n");
    assert_error(
        &text,
        "t.toml:10:1",
        "needs at least one of `offset`, `rate` or `jump`",
    );
    let text = with("[[faults]]\nkind = \"clock\"\nnode = \"lock\"\nat = \"1s\"\nrate = 0.0\n");
    assert_error(&text, "t.toml:14:8", "`rate` must be in (0, 100], found 0");
}

#[test]
fn unknown_fault_kind_lists_the_kinds() {
    let text = with("[[faults]]\nkind = \"pauze\"\n");
    assert_error(&text, "t.toml:11:8", "unknown fault kind `pauze` (did you mean `pause`?); kinds: pause, clock, delay, drop, duplicate, partition, crash");
}

#[test]
fn toml_syntax_error_has_the_parser_position() {
    let text = BASE.replace("design = \"fenced\"", "design = \"fenced");
    assert_error(&text, "t.toml:5:17", "invalid TOML");
    let text = BASE.replace("[storage]", "[storage");
    assert_error(&text, "t.toml:4:9", "invalid TOML");
}

#[test]
fn missing_required_key_points_at_the_table_header() {
    let text = BASE.replace("design = \"lease\"\n", "");
    let error = assert_error(
        &text,
        "t.toml:2:1",
        "missing required key `design` in [lock]; known lock designs: lease",
    );
    assert!(
        error.to_string().contains("2 | [lock]\n  | ^^^^^^\n"),
        "{error}"
    );
    let text = BASE.replace("name = \"client2\"\n", "start = \"1s\"\n");
    assert_error(
        &text,
        "t.toml:8:1",
        "missing required key `name` in [[clients]] #2",
    );
    let text = BASE.replace("name = \"t\"\n", "");
    assert_error(
        &text,
        "t.toml:1:1",
        "missing required key `name` in the top level",
    );
    let text = BASE.replace("[lock]\ndesign = \"lease\"\n", "");
    assert_error(&text, "t.toml:1:1", "missing required table [lock]");
    let text = BASE.replace("design = \"lease\"\n", "desing = \"lease\"\n");
    assert_error(
        &text,
        "t.toml:3:1",
        "unknown key `desing` in [lock] (did you mean `design`?)",
    );
}

#[test]
fn a_missing_file_is_an_error_naming_the_file() {
    let path = Path::new("tests/scenario/no-such-file.toml");
    let error = load_file(&Registry::builtin(), path).unwrap_err();
    assert_eq!(
        (error.file.as_str(), error.line, error.col),
        ("tests/scenario/no-such-file.toml", 0, 0)
    );
    assert!(
        error.message.starts_with("cannot read scenario file: "),
        "{error}"
    );
    assert!(
        error
            .to_string()
            .contains("--> tests/scenario/no-such-file.toml\n"),
        "{error}"
    );
}

#[test]
fn network_values_are_range_checked() {
    let text = with("[network]\nlatency = [\"5ms\", \"1ms\"]\n");
    assert_error(
        &text,
        "t.toml:11:11",
        "latency min 5ms is greater than max 1ms",
    );
    let text = with("[network]\nloss = 1.0\n");
    assert_error(
        &text,
        "t.toml:11:8",
        "`loss` is a probability in [0, 1), found 1",
    );
    let text = with("[[network.links]]\nfrom = \"client1\"\nto = \"nowhere\"\n");
    assert_error(&text, "t.toml:12:6", "unknown node `nowhere`");
}

#[test]
fn after_a_world_event_is_refused_since_no_node_logs_it() {
    for event in ["partition", "heal"] {
        let text = pause(&format!("after = \"lock:{event}\"\n"));
        assert_error(
            &text,
            "t.toml:14:9",
            &format!("`{event}` is journaled by the simulated world, not by `lock`"),
        );
    }
}

#[test]
fn an_unknown_always_property_names_the_known_ones() {
    let text = with("[expect]\nalways = [\"completes\", \"no_false_rejection\"]\n");
    assert_error(
        &text,
        "t.toml:11:24",
        "unknown property `no_false_rejection` (did you mean `no_false_rejections`?); `always` \
         takes: no_false_rejections, completes",
    );
    let twice = with("[expect]\nalways = [\"completes\", \"completes\"]\n");
    assert_error(
        &twice,
        "t.toml:11:24",
        "property `completes` is listed twice",
    );
    let empty = with("[expect]\nalways = []\n");
    assert_error(
        &empty,
        "t.toml:11:10",
        "`always` must name at least one property",
    );
}

#[test]
fn after_takes_an_event_of_a_design_s_own_and_refuses_near_misses() {
    // A process's own event: loaded, and left unfired if it never comes.
    let text = pause("after = \"client1:unlock_retry\"\n");
    load(&text).expect("a design's own event is a trigger");
    let text = pause("after = \"client1:relesed\"\n");
    assert_error(&text, "t.toml:14:9", "(did you mean `released`?)");
    let text = pause("after = \"client1:un lock\"\n");
    assert_error(&text, "t.toml:14:9", "unknown event `un lock`");
}
