//! The command lines that replay a run: spelled for the program that is
//! running (`fencesim`, or a user's own binary built with
//! [`crate::cli::main_with`]), so every failure says how to reproduce it.

use std::path::Path;

/// The program whose commands repro lines spell: set once by
/// [`crate::cli::main_with`] from `argv[0]`; a library caller that never
/// ran it gets `fencesim`'s.
static PROGRAM: std::sync::OnceLock<Program> = std::sync::OnceLock::new();

/// How the running program is invoked.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Program {
    /// Its name (`fencesim`, `custom_lock`).
    name: String,
    /// Built by cargo as an example (`target/…/examples/NAME`).
    example: bool,
}

impl Program {
    fn fencesim() -> Program {
        Program {
            name: "fencesim".to_owned(),
            example: false,
        }
    }

    fn from_args() -> Program {
        std::env::args_os()
            .next()
            .map_or_else(Program::fencesim, |arg0| {
                Program::from_path(Path::new(&arg0))
            })
    }

    fn from_path(path: &Path) -> Program {
        let Some(name) = path.file_stem().and_then(|s| s.to_str()) else {
            return Program::fencesim();
        };
        // `cargo run --example NAME` runs `target/PROFILE/examples/NAME`.
        let example = path
            .parent()
            .and_then(Path::file_name)
            .is_some_and(|d| d == "examples");
        Program {
            name: name.to_owned(),
            example,
        }
    }

    /// How a user runs it here: under `cargo run` (the README's way in), as
    /// a cargo command.
    fn invocation(&self, under_cargo: bool) -> String {
        match (under_cargo, self.example) {
            (true, true) => format!("cargo run --release --example {} --", self.name),
            (true, false) if self.name == "fencesim" => "cargo run --release --".to_owned(),
            (true, false) => format!("cargo run --release --bin {} --", self.name),
            (false, _) => self.name.clone(),
        }
    }
}

fn program() -> Program {
    PROGRAM.get().cloned().unwrap_or_else(Program::fencesim)
}

/// The running program's name alone (`fencesim`, `custom_lock`): how a
/// file it writes names it, the same in every environment.
pub fn program_name() -> String {
    program().name
}

/// How to invoke the running program in this environment: `fencesim`, or
/// under `cargo run` its cargo command (`cargo run --release --`, `cargo run
/// --release --example custom_lock --`).
pub fn invocation() -> String {
    program().invocation(std::env::var_os("CARGO").is_some())
}

/// The command that replays `file` with `seed` exactly, spelled for the
/// running program (see [`invocation`]).
pub fn repro_command(file: &str, seed: u64) -> String {
    format!("{} run {} --seed {seed}", invocation(), shell_quote(file))
}

/// The flags that give a replay `mode`'s faults: none for the scenario's
/// own, ` --faults random`, or ` --faults guided --corpus FILE
/// --corpus-entries N` (the entries the sweep loaded, which a later sweep's
/// appended ones do not change).
pub fn faults_flags(mode: &crate::explore::sweep::FaultMode) -> String {
    use crate::explore::sweep::FaultMode;
    match mode {
        FaultMode::Scenario => String::new(),
        FaultMode::Random => " --faults random".to_owned(),
        FaultMode::Guided(corpus) => format!(
            " --faults guided --corpus {} --corpus-entries {}",
            shell_quote(&corpus.file),
            corpus.len()
        ),
        FaultMode::Depth(depth) => format!(" --faults depth --depth {}", depth.d),
        // An injection set's repro is the search's seed with the set's
        // faults added to the file (its line's `injected`).
        FaultMode::Exhaustive(_) => String::new(),
    }
}

/// The command that replays `file` with `seed`, the same in every
/// environment: what written reports print, so that they are byte-identical
/// wherever they are generated.
/// It names the program by its name alone (`fencesim`, or a user's binary
/// built with [`crate::cli::main_with`]).
pub fn reproducible_command(file: &str, seed: u64) -> String {
    format!("{} run {} --seed {seed}", program_name(), shell_quote(file))
}

/// The command that wrote a report directory, as its index shows it:
/// `fencesim report scenarios --out reports`, with the paths, seed and
/// output directory given, and the program named as in
/// [`reproducible_command`].
pub fn reproducible_report_command(paths: &[String], seed: Option<u64>, out: &str) -> String {
    let mut words = vec![program_name(), "report".to_owned()];
    words.extend(paths.iter().map(|p| shell_quote(p)));
    if let Some(seed) = seed {
        words.push(format!("--seed {seed}"));
    }
    words.push(format!("--out {}", shell_quote(out)));
    words.join(" ")
}

/// `file` as one shell word: unchanged when it is plain, else single-quoted.
pub(crate) fn shell_quote(file: &str) -> String {
    let plain = !file.is_empty()
        && file
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+:,@=%".contains(c));
    if plain {
        file.to_owned()
    } else {
        format!("'{}'", file.replace('\'', "'\\''"))
    }
}

/// Names the running program after `argv[0]`, once per process: what
/// [`crate::cli::main_with`] does before it runs a command.
pub(crate) fn name_program_from_args() {
    let _ = PROGRAM.set(Program::from_args());
}

#[cfg(test)]
mod tests {
    use super::Program;
    use std::path::Path;

    fn invocation(arg0: &str, under_cargo: bool) -> String {
        Program::from_path(Path::new(arg0)).invocation(under_cargo)
    }

    #[test]
    fn a_library_caller_gets_fencesims_commands() {
        assert_eq!(
            super::reproducible_command("scenarios/figure-9-6.toml", 7),
            "fencesim run scenarios/figure-9-6.toml --seed 7"
        );
    }

    #[test]
    fn repro_commands_name_the_program_that_runs() {
        let fencesim = "target/release/fencesim";
        assert_eq!(invocation(fencesim, true), "cargo run --release --");
        assert_eq!(invocation(fencesim, false), "fencesim");
        let example = "/work/target/debug/examples/custom_lock";
        assert_eq!(
            invocation(example, true),
            "cargo run --release --example custom_lock --"
        );
        assert_eq!(invocation(example, false), "custom_lock");
        assert_eq!(
            invocation("target/debug/locktest", true),
            "cargo run --release --bin locktest --"
        );
        assert_eq!(invocation("/usr/local/bin/locktest", false), "locktest");
    }
}
