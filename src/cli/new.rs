//! `fencesim new PATH`: a crate of your own to start a design from.
//!
//! It writes a Cargo package that depends on this fencesim checkout: the
//! `.cargo/config.toml` that switches madsim on, one lock design, its
//! command line, two scenarios (figure 9-6 fenced and unfenced), a test that
//! runs them, and a README with the three commands to use it. The
//! checkout's `Cargo.lock` comes along, so the crate builds with the
//! dependency versions fencesim was tested with.
//!
//! With `--async` the crate holds a lock client as ordinary async Rust
//! instead, generic over `fencesim-env`'s seam: the same function runs on
//! tokio (an example against in-memory stand-ins) and, registered as a
//! process, on a client node of fencesim's scenarios.

use std::fs::{self, OpenOptions};
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

use clap::Args;

use super::Status;
use crate::design::catalog::{Registry, Role};
use crate::escape;

/// The flags of `fencesim new`.
#[derive(Args, Debug)]
pub(super) struct NewArgs {
    /// Directory to create (or an empty one); its name is the crate's name.
    path: PathBuf,
    /// The design's name, as scenarios write it (`design = "NAME"`).
    #[arg(long, default_value = "my_lock", value_name = "NAME")]
    design: String,
    /// A lock client as async Rust instead of a lock design: a function
    /// generic over fencesim-env that runs on tokio, registered as a process
    /// named after the crate (`process = "NAME"` in scenarios). Not with
    /// --design: there is no design to name.
    #[arg(long = "async", conflicts_with = "design")]
    async_client: bool,
    /// The fencesim checkout to depend on (default: the one this binary was
    /// built from).
    #[arg(long, value_name = "DIR")]
    fencesim_path: Option<PathBuf>,
}

/// The files of the crate, each with its template. `{{name}}` is the crate's
/// name, `{{crate}}` the same as a Rust identifier, `{{design}}` the design's
/// name, `{{fencesim}}` the dependency on the checkout and `{{madsim}}` the
/// checkout's patched madsim.
const DESIGN_FILES: &[(&str, &str)] = &[
    ("Cargo.toml", include_str!("new/Cargo.toml.in")),
    (".cargo/config.toml", include_str!("new/config.toml.in")),
    (".gitignore", include_str!("new/gitignore.in")),
    ("README.md", include_str!("new/README.md.in")),
    ("src/lib.rs", include_str!("new/lib.rs.in")),
    ("src/main.rs", include_str!("new/main.rs.in")),
    (
        "scenarios/paused-holder.toml",
        include_str!("new/fenced.toml.in"),
    ),
    (
        "scenarios/unfenced.toml",
        include_str!("new/unfenced.toml.in"),
    ),
    ("tests/scenarios.rs", include_str!("new/test.rs.in")),
];

/// The files of an `--async` crate. Besides the placeholders above,
/// `{{process}}` is the process's name (the crate's identifier) and
/// `{{fencesim_env}}` the dependency on the checkout's `sim/env`.
const ASYNC_FILES: &[(&str, &str)] = &[
    ("Cargo.toml", include_str!("new/async/Cargo.toml.in")),
    (".cargo/config.toml", include_str!("new/config.toml.in")),
    (".gitignore", include_str!("new/gitignore.in")),
    ("README.md", include_str!("new/async/README.md.in")),
    ("src/lib.rs", include_str!("new/async/lib.rs.in")),
    ("src/sim.rs", include_str!("new/async/sim.rs.in")),
    ("src/main.rs", include_str!("new/async/main.rs.in")),
    (
        "examples/on_tokio.rs",
        include_str!("new/async/on_tokio.rs.in"),
    ),
    (
        "scenarios/paused-holder.toml",
        include_str!("new/async/fenced.toml.in"),
    ),
    (
        "scenarios/unfenced.toml",
        include_str!("new/async/unfenced.toml.in"),
    ),
    ("tests/scenarios.rs", include_str!("new/async/test.rs.in")),
];

/// The checkout this binary was built from.
const CHECKOUT: &str = env!("CARGO_MANIFEST_DIR");

pub(super) fn new(registry: &Registry, args: &NewArgs) -> Status {
    match write_crate(registry, args) {
        Ok(written) => {
            let dir = shown(&args.path);
            println!("created {dir}:");
            for file in &written {
                println!("  {file}");
            }
            println!();
            println!("  cd {dir}");
            println!("  cargo test");
            println!("  cargo run --release -- check scenarios/");
            if args.async_client {
                println!("  cargo run --example on_tokio");
            }
            Status::Ok
        }
        Err(Error::Invalid(message)) => {
            eprintln!("error: {message}");
            Status::Invalid
        }
        Err(Error::Io(path, e)) => {
            eprintln!("error: {}: {e}", shown(&path));
            Status::Internal
        }
    }
}

enum Error {
    /// Bad input: exit 2.
    Invalid(String),
    /// A file could not be written.
    Io(PathBuf, io::Error),
}

fn write_crate(registry: &Registry, args: &NewArgs) -> Result<Vec<String>, Error> {
    let name = crate_name(&args.path)?;
    let process = name.replace('-', "_");
    if args.async_client {
        check_process_name(registry, &args.path, &process)?;
    } else {
        check_design_name(registry, &args.design)?;
    }
    let checkout = args
        .fencesim_path
        .clone()
        .unwrap_or_else(|| PathBuf::from(CHECKOUT));
    let checkout = fs::canonicalize(&checkout)
        .ok()
        .filter(|dir| {
            dir.join("Cargo.toml").is_file()
                && dir.join("sim").is_dir()
                && (!args.async_client || dir.join("sim/env/Cargo.toml").is_file())
        })
        .ok_or_else(|| {
            let what = if args.async_client {
                "Cargo.toml, sim/ and sim/env/"
            } else {
                "Cargo.toml and sim/"
            };
            Error::Invalid(format!(
                "{} is not a fencesim checkout (a directory with {what}): \
                 name one with --fencesim-path DIR",
                shown(&checkout)
            ))
        })?;
    check_target(&args.path)?;

    let dependency = format!(
        "{{ path = {}, default-features = false, features = [\"cli\"] }}",
        toml::Value::String(checkout.to_string_lossy().into_owned())
    );
    let env_dependency = format!(
        "{{ path = {}, features = [\"tokio\"] }}",
        toml::Value::String(checkout.join("sim/env").to_string_lossy().into_owned())
    );
    let madsim = format!(
        "{{ path = {} }}",
        toml::Value::String(checkout.join("sim/madsim").to_string_lossy().into_owned())
    );
    let fill = |text: &str| {
        text.replace("{{name}}", &name)
            .replace("{{crate}}", &process)
            .replace("{{process}}", &process)
            .replace("{{design}}", &args.design)
            .replace("{{fencesim}}", &dependency)
            .replace("{{fencesim_env}}", &env_dependency)
            .replace("{{madsim}}", &madsim)
    };
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |e| Error::Io(path, e)
    };
    fs::create_dir_all(&args.path).map_err(io(&args.path))?;
    let mut written = Vec::new();
    let files = if args.async_client {
        ASYNC_FILES
    } else {
        DESIGN_FILES
    };
    for (file, template) in files {
        let file = fill(file);
        write_new(&args.path.join(&file), fill(template).as_bytes())?;
        written.push(file);
    }
    // The versions fencesim's own tests ran with; cargo adds the new crate
    // and drops what it does not use.
    if let Ok(lock) = fs::read(checkout.join("Cargo.lock")) {
        write_new(&args.path.join("Cargo.lock"), &lock)?;
        written.push("Cargo.lock".to_owned());
    }
    Ok(written)
}

/// The crate's name: the directory's last component, as cargo accepts it.
fn crate_name(path: &Path) -> Result<String, Error> {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    let valid = name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
    if valid {
        Ok(name.to_owned())
    } else {
        Err(Error::Invalid(format!(
            "{}: the directory's name is the crate's name, and `{}` is not one: use lowercase \
             letters, digits, `-` and `_`, starting with a letter",
            shown(path),
            escape::terminal(name)
        )))
    }
}

fn check_design_name(registry: &Registry, design: &str) -> Result<(), Error> {
    let valid = design.starts_with(|c: char| c.is_ascii_lowercase())
        && design
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if !valid {
        return Err(Error::Invalid(format!(
            "--design `{}`: a design's name is lowercase letters, digits and `_`, starting \
             with a letter",
            escape::terminal(design)
        )));
    }
    if registry.get(Role::Lock, design).is_some() {
        return Err(Error::Invalid(format!(
            "--design `{design}`: a bundled design has that name; choose another"
        )));
    }
    Ok(())
}

/// An `--async` crate registers its client as a process named after the
/// crate, beside the bundled processes.
fn check_process_name(registry: &Registry, path: &Path, process: &str) -> Result<(), Error> {
    if registry.process(process).is_some() {
        return Err(Error::Invalid(format!(
            "{}: an --async crate's client is a process named after the crate, and a bundled \
             process is called `{process}`: choose another directory name",
            shown(path)
        )));
    }
    Ok(())
}

/// The target must not exist, or be an empty directory (not a link to one).
fn check_target(path: &Path) -> Result<(), Error> {
    let dir = shown(path);
    match fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::Io(path.to_path_buf(), e)),
        Ok(meta) if meta.is_dir() => {
            let empty = fs::read_dir(path)
                .map_err(|e| Error::Io(path.to_path_buf(), e))?
                .next()
                .is_none();
            if empty {
                Ok(())
            } else {
                Err(Error::Invalid(format!(
                    "{dir} exists and is not empty: nothing was written"
                )))
            }
        }
        Ok(_) => Err(Error::Invalid(format!(
            "{dir} exists and is not a directory: nothing was written"
        ))),
    }
}

/// Writes a file that must not exist yet (so never through a link).
fn write_new(path: &Path, contents: &[u8]) -> Result<(), Error> {
    let io = |e| Error::Io(path.to_path_buf(), e);
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).map_err(io)?;
    }
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(io)?;
    file.write_all(contents).map_err(io)
}

/// A path as the terminal shows it.
fn shown(path: &Path) -> String {
    escape::terminal(&path.display().to_string())
}
