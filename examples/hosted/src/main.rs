//! fencesim's command line with the hosted processes of `src/lib.rs`
//! registered: `cargo run -p hosted -- explore scenarios/map-order.toml`.

fn main() -> std::process::ExitCode {
    fencesim::main_with(hosted::registry())
}
