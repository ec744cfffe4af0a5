//! Truncated and mangled files must come back as errors, never panics.

use super::{load, BASE, FIGURE_9_6};

/// A file using every table and fault kind, so that truncation reaches
/// every reader path.
fn rich() -> String {
    format!(
        "{FIGURE_9_6}\n[[network.links]]\nfrom = \"client1\"\nto = \"lock\"\nloss = 0.1\n\
         [[faults]]\nkind = \"clock\"\nnode = \"lock\"\nat = \"1s\"\njump = \"-5s\"\nrate = 1.5\n\
         [[faults]]\nkind = \"partition\"\ngroups = [[\"client1\"], [\"lock\", \"storage\"]]\n\
         duration = \"5s\"\nafter = \"lock:granted:2\"\ndelay = \"1ms\"\n\
         [[faults]]\nkind = \"delay\"\nfrom = \"client2\"\nto = \"storage\"\nextra = \"1s\"\n\
         at = \"3s\"\nduration = \"2s\"\n"
    )
}

#[track_caller]
fn loads_or_errs(text: &str) {
    if let Err(error) = load(text) {
        assert!(
            error.line >= 1 && error.col >= 1,
            "no position for {text:?}: {error}"
        );
        assert!(!error.message.is_empty());
        let _ = error.to_string();
    }
}

#[test]
fn every_prefix_loads_or_errs() {
    let rich = rich();
    assert!(load(&rich).is_ok(), "{}", load(&rich).unwrap_err());
    for text in [FIGURE_9_6, BASE, rich.as_str()] {
        for (end, _) in text.char_indices() {
            loads_or_errs(&text[..end]);
        }
    }
}

#[test]
fn every_file_missing_one_line_loads_or_errs() {
    let rich = rich();
    let lines: Vec<&str> = rich.lines().collect();
    for skip in 0..lines.len() {
        let text: Vec<&str> = lines
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != skip)
            .map(|(_, l)| *l)
            .collect();
        loads_or_errs(&text.join("\n"));
    }
}

#[test]
fn every_value_replaced_by_another_type_loads_or_errs() {
    let rich = rich();
    for replacement in [
        "0",
        "-1",
        "1.5",
        "true",
        "\"\"",
        "[]",
        "{}",
        "[[]]",
        "\"x:y:z:w\"",
        "1979-05-27",
    ] {
        for (i, line) in rich.lines().enumerate() {
            let Some((key, _)) = line.split_once(" = ") else {
                continue;
            };
            let mut lines: Vec<String> = rich.lines().map(String::from).collect();
            lines[i] = format!("{key} = {replacement}");
            loads_or_errs(&lines.join("\n"));
        }
    }
}
