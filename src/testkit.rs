//! Scenario tests in Rust: build a scenario in code (or start from TOML
//! text), run seeds against your own designs, and fail with the command that
//! replays the failure.
//!
//! The builder writes TOML, so what a test runs is always a scenario file in
//! scenario format version 1 (`docs/format.md`): loaded and validated by the
//! same loader as `fencesim run`, and printable for a bug report.
//!
//! ```
//! use fencesim::design::catalog::Registry;
//! use fencesim::testkit::ScenarioBuilder;
//!
//! let figure_9_6 = ScenarioBuilder::new("figure-9-6")
//!     .lock("lease", |t| t.set("ttl", "10s").set("first_token", 33))
//!     .storage("fenced", |t| t)
//!     .client("client1", |t| t)
//!     .client("client2", |t| t.set("start", "12s"))
//!     .fault("pause", |t| {
//!         t.set("node", "client1")
//!             .set("after", "client1:acquired")
//!             .set("duration", "15s")
//!     })
//!     .expect(|t| t.set("verdict", "safe").set("rejected_writes", 1))
//!     .registry(Registry::builtin());
//! figure_9_6.assert_seeds(0..3);
//! ```
//!
//! A failing seed panics with the verdict, the violations in words, the
//! scenario written to `target/fencesim/<name>.toml`, the `fencesim run`
//! command that replays it (when every design it names is bundled), and how
//! to re-run only that seed: set `FENCESIM_SEED=<seed>` and
//! [`ScenarioBuilder::assert_seeds`] runs that seed alone. The hint is the
//! `cargo test` command that ran the test, narrowed to it: its profile
//! (`--release`, `--profile NAME`), package (`-p`), test target (`--lib`,
//! `--test NAME`, …) and the harness flags that decide whether it runs
//! (`--ignored`, `--include-ignored`), as the test binary's path, the
//! variables cargo sets and the harness arguments tell them.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use toml_edit::{ArrayOfTables, DocumentMut, Item, Table};

use crate::design::catalog::Registry;
use crate::runner::{self, ScenarioRun};
use crate::scenario::{self, Scenario, ScenarioError};

/// The environment variable that narrows [`ScenarioBuilder::assert_seeds`]
/// to one seed.
pub const SEED_VAR: &str = "FENCESIM_SEED";

/// A scenario under construction, as a TOML document.
#[derive(Clone, Debug)]
pub struct ScenarioBuilder {
    doc: DocumentMut,
    registry: Registry,
}

/// The keys of one table (`[lock]`, one `[[clients]]`, …) being set.
#[derive(Debug)]
pub struct TableBuilder<'a>(&'a mut Table);

impl TableBuilder<'_> {
    /// Sets `key` to `value`: a string (`"10s"`, `"client1:acquired"`), an
    /// integer, a float, a bool, or an array of those.
    pub fn set(self, key: &str, value: impl Into<toml::Value>) -> Self {
        self.0.insert(key, Item::Value(edit_value(value.into())));
        self
    }
}

/// A `toml` value as a `toml_edit` one, through its TOML text.
fn edit_value(value: toml::Value) -> toml_edit::Value {
    let text = value.to_string();
    text.parse()
        .unwrap_or_else(|e| panic!("a TOML value re-parses: {text}: {e}"))
}

impl ScenarioBuilder {
    /// An empty scenario called `name`, with the bundled designs.
    pub fn new(name: &str) -> Self {
        let mut doc = DocumentMut::new();
        doc.insert("name", toml_edit::value(name));
        ScenarioBuilder {
            doc,
            registry: Registry::builtin(),
        }
    }

    /// Starts from scenario text (a bundled file, a post-mortem's scenario)
    /// to change with the other methods.
    pub fn from_toml(text: &str) -> Result<Self, ScenarioError> {
        let doc = text.parse::<DocumentMut>().map_err(|e| {
            let span = e.span().unwrap_or(0..0);
            ScenarioError::at("<builder>", text, span, e.message().to_string())
        })?;
        Ok(ScenarioBuilder {
            doc,
            registry: Registry::builtin(),
        })
    }

    /// Builds designs from `registry` (your own designs added to
    /// [`Registry::builtin`], or to an empty one).
    pub fn registry(mut self, registry: Registry) -> Self {
        self.registry = registry;
        self
    }

    /// Sets a top-level key: `description`, `seed`, `duration`, `strict`, ….
    pub fn set(mut self, key: &str, value: impl Into<toml::Value>) -> Self {
        self.doc.insert(key, Item::Value(edit_value(value.into())));
        self
    }

    /// Sets `key` in the table `[table]` (`lock`, `storage`, `network`,
    /// `expect`), creating it if needed.
    pub fn set_in(mut self, table: &str, key: &str, value: impl Into<toml::Value>) -> Self {
        let entry = self
            .doc
            .entry(table)
            .or_insert_with(|| Item::Table(Table::new()));
        let t = entry
            .as_table_mut()
            .unwrap_or_else(|| panic!("`{table}` is not a table"));
        TableBuilder(t).set(key, value);
        self
    }

    fn table(
        mut self,
        name: &str,
        first: Option<(&str, &str)>,
        keys: impl FnOnce(TableBuilder<'_>) -> TableBuilder<'_>,
    ) -> Self {
        let mut table = Table::new();
        if let Some((key, value)) = first {
            table.insert(key, toml_edit::value(value));
        }
        keys(TableBuilder(&mut table));
        self.doc.insert(name, Item::Table(table));
        self
    }

    fn push(
        mut self,
        array: &str,
        first: (&str, &str),
        keys: impl FnOnce(TableBuilder<'_>) -> TableBuilder<'_>,
    ) -> Self {
        let mut table = Table::new();
        table.insert(first.0, toml_edit::value(first.1));
        keys(TableBuilder(&mut table));
        let entry = self
            .doc
            .entry(array)
            .or_insert_with(|| Item::ArrayOfTables(ArrayOfTables::new()));
        entry
            .as_array_of_tables_mut()
            .unwrap_or_else(|| panic!("`{array}` is not an array of tables"))
            .push(table);
        self
    }

    /// Replaces `[lock]` with `design = "…"` and the keys `keys` sets.
    pub fn lock(
        self,
        design: &str,
        keys: impl FnOnce(TableBuilder<'_>) -> TableBuilder<'_>,
    ) -> Self {
        self.table("lock", Some(("design", design)), keys)
    }

    /// Replaces `[storage]` with `design = "…"` and the keys `keys` sets.
    pub fn storage(
        self,
        design: &str,
        keys: impl FnOnce(TableBuilder<'_>) -> TableBuilder<'_>,
    ) -> Self {
        self.table("storage", Some(("design", design)), keys)
    }

    /// Replaces `[network]`.
    pub fn network(self, keys: impl FnOnce(TableBuilder<'_>) -> TableBuilder<'_>) -> Self {
        self.table("network", None, keys)
    }

    /// Adds a `[[clients]]` called `name` (see `fencesim designs` for keys).
    pub fn client(
        self,
        name: &str,
        keys: impl FnOnce(TableBuilder<'_>) -> TableBuilder<'_>,
    ) -> Self {
        self.push("clients", ("name", name), keys)
    }

    /// Adds a `[[faults]]` of `kind` (`pause`, `delay`, `clock`, …).
    pub fn fault(
        self,
        kind: &str,
        keys: impl FnOnce(TableBuilder<'_>) -> TableBuilder<'_>,
    ) -> Self {
        self.push("faults", ("kind", kind), keys)
    }

    /// Replaces `[expect]`.
    pub fn expect(self, keys: impl FnOnce(TableBuilder<'_>) -> TableBuilder<'_>) -> Self {
        self.table("expect", None, keys)
    }

    /// The scenario as TOML text.
    pub fn toml(&self) -> String {
        self.doc.to_string()
    }

    /// The scenario, loaded and validated as `fencesim run` would.
    pub fn build(&self) -> Result<Scenario, ScenarioError> {
        scenario::load_str(&self.registry, &self.file_name(), &self.toml())
    }

    fn name(&self) -> String {
        self.doc
            .get("name")
            .and_then(Item::as_str)
            .unwrap_or("scenario")
            .to_owned()
    }

    fn file_name(&self) -> String {
        format!("{}.toml", file_stem(&self.name()))
    }

    fn scenario(&self) -> Scenario {
        self.build().unwrap_or_else(|e| {
            panic!(
                "the scenario does not load:\n{e}\n--- scenario ---\n{}",
                self.toml()
            )
        })
    }

    /// Runs one seed. Panics if the scenario does not load.
    pub fn run(&self, seed: u64) -> ScenarioRun {
        runner::run(&self.scenario(), seed)
    }

    /// Runs one seed and panics, with the repro, unless its `[expect]` holds
    /// (without `[expect]`: unless the verdict is safe) and it did not crash.
    pub fn assert_seed(&self, seed: u64) -> ScenarioRun {
        let run = self.run(seed);
        if !run.expectations_met {
            panic!("{}", self.failure(&run));
        }
        run
    }

    /// [`ScenarioBuilder::assert_seed`] for every seed of `seeds`, or only
    /// for the seed in `FENCESIM_SEED` when it is set. Returns how many seeds
    /// ran.
    pub fn assert_seeds(&self, seeds: impl IntoIterator<Item = u64>) -> u64 {
        if let Some(seed) = seed_from_env() {
            self.assert_seed(seed);
            return 1;
        }
        let scenario = self.scenario();
        let mut ran = 0;
        for seed in seeds {
            let run = runner::run(&scenario, seed);
            if !run.expectations_met {
                panic!("{}", self.failure(&run));
            }
            ran += 1;
        }
        ran
    }

    /// What went wrong in `run` and how to replay it: the failure message of
    /// [`ScenarioBuilder::assert_seed`].
    pub fn failure(&self, run: &ScenarioRun) -> String {
        let seed = run.result.seed;
        let report = &run.report;
        let mut out = String::new();
        writeln!(
            out,
            "scenario `{}` failed with seed {seed}: outcome {}, verdict {}",
            self.name(),
            run.result.outcome,
            report.verdict.as_str()
        )
        .unwrap();
        for e in run.expectations.iter().filter(|e| !e.met()) {
            writeln!(
                out,
                "  expected {} = {}, got {}",
                e.key, e.expected, e.actual
            )
            .unwrap();
        }
        for v in &report.violations {
            writeln!(out, "  {}: {}", v.kind, v.explanation).unwrap();
        }
        for why in &run.inconclusive {
            writeln!(out, "  inconclusive: {why}").unwrap();
        }
        let text = self.toml();
        match self.write_file(&text) {
            Some(path) => {
                let path = path.display().to_string();
                writeln!(out, "scenario written to {path}").unwrap();
                if self.bundled_designs_only() {
                    writeln!(out, "repro: {}", crate::repro::repro_command(&path, seed)).unwrap();
                }
            }
            None => writeln!(out, "--- scenario ---\n{text}---").unwrap(),
        }
        writeln!(
            out,
            "re-run this seed alone: {SEED_VAR}={seed} {}",
            TestRun::current().rerun_command()
        )
        .unwrap();
        out
    }

    /// Whether the `fencesim` binary knows every design the scenario names.
    fn bundled_designs_only(&self) -> bool {
        let builtin = Registry::builtin();
        let design = |table: &str| {
            self.doc
                .get(table)
                .and_then(|t| t.get("design"))
                .and_then(Item::as_str)
                .map(str::to_owned)
        };
        design("lock").is_some_and(|d| builtin.lock(&d).is_some())
            && design("storage").is_some_and(|d| builtin.storage(&d).is_some())
    }

    /// Writes the scenario under the target directory; `None` if it cannot.
    fn write_file(&self, text: &str) -> Option<PathBuf> {
        let target = std::env::var_os("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .or_else(|| {
                std::env::var_os("CARGO_MANIFEST_DIR").map(|d| PathBuf::from(d).join("target"))
            })
            .unwrap_or_else(|| PathBuf::from("target"));
        let dir = target.join("fencesim");
        let path = dir.join(self.file_name());
        std::fs::create_dir_all(&dir).ok()?;
        std::fs::write(&path, text).ok()?;
        Some(path)
    }
}

/// How the running test was started, as far as the test process can tell:
/// what [`TestRun::rerun_command`] spells back as a `cargo test` command.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct TestRun {
    /// The test binary's path (`target/release/deps/locks-1a2b3c…`).
    binary: PathBuf,
    /// The harness arguments after it (filters, `--ignored`, `--exact`, …).
    args: Vec<String>,
    /// The test's name, from its thread (`None` when the harness ran it on
    /// the main thread, as with `--test-threads=1`).
    test: Option<String>,
    /// The package (`CARGO_PKG_NAME`, set by cargo when it runs a test).
    package: Option<String>,
    /// The package's directory (`CARGO_MANIFEST_DIR`, likewise).
    manifest_dir: Option<PathBuf>,
    /// Built with debug assertions: the fallback for the profile when the
    /// binary's path does not name it.
    debug_assertions: bool,
}

impl TestRun {
    fn current() -> TestRun {
        let mut args = std::env::args_os().map(|a| a.to_string_lossy().into_owned());
        TestRun {
            binary: args.next().map(PathBuf::from).unwrap_or_default(),
            args: args.collect(),
            test: std::thread::current()
                .name()
                .filter(|n| *n != "main")
                .map(str::to_owned),
            package: std::env::var("CARGO_PKG_NAME").ok(),
            manifest_dir: std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from),
            debug_assertions: cfg!(debug_assertions),
        }
    }

    /// The `cargo test` command that runs this test again, alone when its
    /// name is known, else with the filters it was run with.
    fn rerun_command(&self) -> String {
        let mut words = vec!["cargo".to_owned(), "test".to_owned()];
        match self.profile() {
            Some(p) if p == "release" => words.push("--release".to_owned()),
            Some(p) => words.extend(["--profile".to_owned(), p]),
            None => {}
        }
        if let Some(package) = &self.package {
            words.extend(["-p".to_owned(), crate::repro::shell_quote(package)]);
        }
        words.extend(self.target());
        let mut harness: Vec<String> = Vec::new();
        match &self.test {
            Some(test) => {
                harness.extend([crate::repro::shell_quote(test), "--exact".to_owned()]);
                harness.extend(
                    self.args
                        .iter()
                        .filter(|a| RUN_FLAGS.contains(&a.as_str()))
                        .cloned(),
                );
            }
            // The harness's own arguments, which select the tests that ran
            // (this one among them), but not the ones that name a file it
            // writes (`--logfile`) or print a listing instead.
            None => {
                let mut args = self.args.iter();
                while let Some(arg) = args.next() {
                    match arg.as_str() {
                        "--list" => {}
                        "--logfile" => {
                            args.next();
                        }
                        a if a.starts_with("--logfile=") => {}
                        a => harness.push(crate::repro::shell_quote(a)),
                    }
                }
            }
        }
        if !harness.is_empty() {
            words.push("--".to_owned());
            words.extend(harness);
        }
        words.join(" ")
    }

    /// The cargo profile: the name of the directory above `deps/` that
    /// holds the binary (`debug` is the `dev` and `test` profiles', given
    /// as no flag; `release` is also `bench`'s), else from debug assertions.
    fn profile(&self) -> Option<String> {
        let deps = self.binary.parent()?;
        let from_path = if deps.file_name().is_some_and(|d| d == "deps") {
            deps.parent()
                .and_then(Path::file_name)
                .and_then(|d| d.to_str())
                .map(str::to_owned)
        } else {
            None
        };
        match from_path.as_deref() {
            Some("debug") => None,
            Some(profile) => Some(profile.to_owned()),
            None if self.debug_assertions => None,
            None => Some("release".to_owned()),
        }
    }

    /// The test target's flags: `--test NAME` for a file of `tests/`,
    /// `--example NAME` for one of `examples/`, `--lib` for the package's
    /// library, `--bin NAME` for a binary. The binary is named after the
    /// target's crate (`-` written `_`) and a hash; which kind of target it
    /// is, the package's files tell.
    fn target(&self) -> Vec<String> {
        let Some(stem) = self.binary.file_stem().and_then(|s| s.to_str()) else {
            return Vec::new();
        };
        let crate_name = match stem.rsplit_once('-') {
            Some((name, hash)) if hash.chars().all(|c| c.is_ascii_hexdigit()) => name,
            _ => stem,
        };
        let Some(dir) = &self.manifest_dir else {
            return Vec::new();
        };
        let same = |name: &str| name.replace('-', "_") == crate_name;
        let entry_named = |sub: &str| -> Option<String> {
            let entries = std::fs::read_dir(dir.join(sub)).ok()?;
            let mut names: Vec<String> = entries
                .filter_map(|e| {
                    let path = e.ok()?.path();
                    let name = if path.is_dir() {
                        path.join("main.rs").is_file().then(|| path.file_name())??
                    } else if path.extension().is_some_and(|x| x == "rs") {
                        path.file_stem()?
                    } else {
                        return None;
                    };
                    name.to_str().map(str::to_owned)
                })
                .filter(|name| same(name))
                .collect();
            names.sort();
            names.into_iter().next()
        };
        let package_is = self.package.as_deref().is_some_and(same);
        if let Some(name) = entry_named("tests") {
            vec!["--test".to_owned(), crate::repro::shell_quote(&name)]
        } else if package_is && dir.join("src/lib.rs").is_file() {
            vec!["--lib".to_owned()]
        } else if let Some(name) = entry_named("examples") {
            vec!["--example".to_owned(), crate::repro::shell_quote(&name)]
        } else if package_is && dir.join("src/main.rs").is_file() {
            let package = self.package.as_deref().unwrap_or(crate_name);
            vec!["--bin".to_owned(), crate::repro::shell_quote(package)]
        } else if let Some(name) = entry_named("src/bin") {
            vec!["--bin".to_owned(), crate::repro::shell_quote(&name)]
        } else {
            Vec::new()
        }
    }
}

/// Harness flags that decide whether a test runs at all, kept when the
/// re-run names the test: an ignored test runs only with one of them.
const RUN_FLAGS: [&str; 2] = ["--ignored", "--include-ignored"];

/// `FENCESIM_SEED`, if set. Panics on a value that is not a seed: a typo
/// there should not silently run every seed.
fn seed_from_env() -> Option<u64> {
    let value = std::env::var(SEED_VAR).ok()?;
    Some(
        value
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{SEED_VAR}={value:?} is not a seed (an integer)")),
    )
}

/// `name` as a file name: letters, digits, `-` and `_`.
fn file_stem(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figure_9_6() -> ScenarioBuilder {
        ScenarioBuilder::new("figure 9-6")
            .lock("lease", |t| t.set("first_token", 33).set("tokens", false))
            .storage("unchecked", |t| t)
            .client("client1", |t| t)
            .client("client2", |t| t.set("start", "12s"))
            .fault("pause", |t| {
                t.set("node", "client1")
                    .set("after", "client1:acquired")
                    .set("duration", "15s")
            })
    }

    #[test]
    fn builds_the_toml_it_shows() {
        let b = figure_9_6().set_in("network", "latency", vec!["1ms", "2ms"]);
        let text = b.toml();
        assert!(text.starts_with("name = \"figure 9-6\""), "{text}");
        assert!(
            text.contains("[[clients]]\nname = \"client2\"\nstart = \"12s\""),
            "{text}"
        );
        let s = b.build().unwrap();
        assert_eq!(s.clients.len(), 2);
        assert_eq!(s.file, "figure-9-6.toml");
    }

    #[test]
    fn a_failure_names_the_seed_the_file_and_the_repro() {
        let b = figure_9_6().expect(|t| t.set("verdict", "safe"));
        let run = b.run(7);
        assert!(!run.expectations_met);
        let message = b.failure(&run);
        assert!(message.contains("failed with seed 7"), "{message}");
        assert!(message.contains("stale_write"), "{message}");
        assert!(message.contains("figure-9-6.toml"), "{message}");
        assert!(message.contains("--seed 7"), "{message}");
        assert!(message.contains("FENCESIM_SEED=7"), "{message}");
    }

    /// A test `figure_9_6_holds` of this package, run from `binary` with
    /// the harness arguments `args`.
    fn test_run(binary: &str, args: &[&str]) -> TestRun {
        TestRun {
            binary: PathBuf::from(binary),
            args: args.iter().map(|a| a.to_string()).collect(),
            test: Some("locks::figure_9_6_holds".to_owned()),
            package: Some("fencesim".to_owned()),
            manifest_dir: Some(PathBuf::from(env!("CARGO_MANIFEST_DIR"))),
            debug_assertions: true,
        }
    }

    #[test]
    fn the_rerun_hint_keeps_the_profile_package_target_and_ignored_flag() {
        // `cargo test --release -p fencesim --test cli -- --ignored holds`
        let run = test_run(
            "/w/target/release/deps/cli-0123456789abcdef",
            &["--ignored", "holds"],
        );
        assert_eq!(
            run.rerun_command(),
            "cargo test --release -p fencesim --test cli -- locks::figure_9_6_holds --exact \
             --ignored"
        );
        // The library's own tests, in the default profile, for another
        // target platform.
        let run = test_run(
            "/w/target/x86_64-unknown-linux-gnu/debug/deps/fencesim-0123456789abcdef",
            &["--include-ignored", "--nocapture"],
        );
        assert_eq!(
            run.rerun_command(),
            "cargo test -p fencesim --lib -- locks::figure_9_6_holds --exact --include-ignored"
        );
        // A profile of its own, and an example's tests.
        let run = test_run("/w/target/ci/deps/custom_lock-0123456789abcdef", &[]);
        assert_eq!(
            run.rerun_command(),
            "cargo test --profile ci -p fencesim --example custom_lock -- \
             locks::figure_9_6_holds --exact"
        );
    }

    #[test]
    fn without_the_test_name_the_hint_keeps_the_filters_it_ran_with() {
        let mut run = test_run(
            "/w/target/debug/deps/cli-0123456789abcdef",
            &[
                "run::",
                "--test-threads=1",
                "--logfile",
                "out.txt",
                "--skip",
                "slow",
            ],
        );
        run.test = None;
        assert_eq!(
            run.rerun_command(),
            "cargo test -p fencesim --test cli -- run:: --test-threads=1 --skip slow"
        );
        // A binary run by hand, outside cargo: the profile from the build.
        let run = TestRun {
            binary: PathBuf::from("/tmp/locks"),
            debug_assertions: false,
            ..TestRun::default()
        };
        assert_eq!(run.rerun_command(), "cargo test --release");
    }

    #[test]
    fn the_rerun_hint_of_a_running_test_names_it_exactly() {
        let hint = TestRun::current().rerun_command();
        assert!(hint.starts_with("cargo test "), "{hint}");
        assert!(
            hint.contains(
                " -- testkit::tests::the_rerun_hint_of_a_running_test_names_it_exactly --exact"
            ),
            "{hint}"
        );
        if std::env::var_os("CARGO_MANIFEST_DIR").is_some() {
            assert!(hint.contains(" -p fencesim --lib "), "{hint}");
        }
    }

    #[test]
    fn from_toml_reports_a_syntax_error_with_its_place() {
        let e = ScenarioBuilder::from_toml("name = \"x\"\nlock = [").unwrap_err();
        assert_eq!(e.location().split(':').nth(1), Some("2"), "{e}");
    }
}
