//! A design written outside the crate, through every command: the grace
//! period lease of `examples/custom_lock.rs` (included here as it is), in a
//! registry beside the bundled designs, run by the command line's own entry
//! point ([`fencesim::cli::run_args`], what `main_with` runs) and by the
//! library functions each command uses. Nothing may fall back to the bundled
//! registry: a design it does not know used to load, then panic when run.

mod commands;
mod design_msg;
mod library;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use fencesim::cli::Status;
use fencesim::design::catalog::Registry;
use fencesim::scenario::{self, Scenario};

#[path = "../../examples/custom_lock.rs"]
#[allow(dead_code)] // its `main`: the example's own entry point
mod custom_lock;

/// The bundled designs and the example's `grace_lease`.
pub fn registry() -> Registry {
    custom_lock::registry()
}

/// A file of the crate, by its path from the crate root.
pub fn crate_file(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

/// `examples/grace-lease.toml` (unfenced) or its fenced twin, as a path.
pub fn example(fenced: bool) -> PathBuf {
    crate_file(if fenced {
        "examples/grace-lease-fenced.toml"
    } else {
        "examples/grace-lease.toml"
    })
}

/// The example scenario, loaded with [`registry`].
pub fn load(fenced: bool) -> Scenario {
    scenario::load_file(&registry(), &example(fenced)).expect("the example scenario loads")
}

/// Runs `fencesim ARGS…` in this process with [`registry`].
pub fn fencesim(args: &[&str]) -> Status {
    let argv = std::iter::once("fencesim").chain(args.iter().copied());
    fencesim::cli::run_args(&registry(), argv)
}

/// A directory of its own under the system's temp dir, removed on drop.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(test: &str) -> TempDir {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!(
            "fencesim-registry-{}-{n}-{test}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create the test's temp dir");
        TempDir(dir)
    }

    /// `name` in this directory, as a command-line argument.
    pub fn arg(&self, name: &str) -> String {
        self.0.join(name).display().to_string()
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
