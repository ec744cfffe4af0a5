//! fencesim's, not upstream's: tells the crates that depend on madsim
//! (through `links = "madsim"`, as `DEP_MADSIM_CLOCK_HOOK`) that this is
//! the patched madsim, so that a build against the crates.io release stops
//! with a message rather than an unresolved import. See PATCH.md.
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:clock_hook=1");
}
