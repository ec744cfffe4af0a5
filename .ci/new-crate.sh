#!/usr/bin/env bash
# `fencesim new` as a user runs it: the crates it writes (a lock design,
# and with --async a lock client), outside the repository, build against
# this checkout and their tests pass; without the design crate's
# .cargo/config.toml, with an environment RUSTFLAGS, or without the [patch]
# of madsim, the build stops with the message for that cause.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

cargo build --release --quiet --bin fencesim
"$root/target/release/fencesim" new "$scratch/my-lock" >/dev/null
cd "$scratch/my-lock"

# The repository's own target directory: the crate reuses the fencesim
# library that `cargo test` built (a cold build of it is what a user waits
# for once).
start=$SECONDS
CARGO_TARGET_DIR="$root/target" cargo test --quiet >"$scratch/test.log" 2>&1 || {
    cat "$scratch/test.log" >&2
    echo "new-crate: the crate \`fencesim new\` writes fails its tests" >&2
    exit 1
}
CARGO_TARGET_DIR="$root/target" cargo run --quiet -- check scenarios/ >/dev/null
# What it writes is what a user's CI would hold it to.
cargo fmt --check
CARGO_TARGET_DIR="$root/target" cargo clippy --quiet --all-targets -- -D warnings
echo "new-crate: built, tested and checked in $((SECONDS - start)) s"

# `fencesim new --async`: the lock client crate, held to the same, and its
# example runs the client on tokio (two leaders, three writes each).
"$root/target/release/fencesim" new "$scratch/my-client" --async >/dev/null
(
    cd "$scratch/my-client"
    start=$SECONDS
    CARGO_TARGET_DIR="$root/target" cargo test --quiet >"$scratch/test-async.log" 2>&1 || {
        cat "$scratch/test-async.log" >&2
        echo "new-crate: the crate \`fencesim new --async\` writes fails its tests" >&2
        exit 1
    }
    CARGO_TARGET_DIR="$root/target" cargo run --quiet -- check scenarios/ >/dev/null
    CARGO_TARGET_DIR="$root/target" cargo run --quiet --example on_tokio >"$scratch/on_tokio.txt"
    if ! grep -q "storage: 6 writes applied, the last with token Some(2)" "$scratch/on_tokio.txt"; then
        cat "$scratch/on_tokio.txt" >&2
        echo "new-crate: the --async crate's client did not run on tokio as it should" >&2
        exit 1
    fi
    cargo fmt --check
    CARGO_TARGET_DIR="$root/target" cargo clippy --quiet --all-targets -- -D warnings
    echo "new-crate: the --async crate built, tested and checked in $((SECONDS - start)) s"
)

# The two ways --cfg madsim goes missing, each told apart. A target
# directory of their own, so the flags do not rebuild the one above.
expect_failure() {
    local what=$1 message=$2
    shift 2
    if "$@" >"$scratch/build.log" 2>&1; then
        echo "new-crate: the build $what succeeded without --cfg madsim" >&2
        exit 1
    fi
    if ! grep -q -- "$message" "$scratch/build.log"; then
        cat "$scratch/build.log" >&2
        echo "new-crate: the build $what did not say: $message" >&2
        exit 1
    fi
    echo "new-crate: the build $what stops with: $message"
}
# Without the [patch] line that names the checkout's madsim, cargo links
# crates.io's: the build stops and names the line.
cp Cargo.toml "$scratch/Cargo.toml.patched"
cp Cargo.lock "$scratch/Cargo.lock.patched"
sed -i '/^\[patch\.crates-io\]$/,/^madsim = /d' Cargo.toml
expect_failure "without madsim's [patch]" "fencesim needs its own madsim" \
    env -u RUSTFLAGS CARGO_TARGET_DIR="$root/target" cargo build --quiet
cp "$scratch/Cargo.toml.patched" Cargo.toml
cp "$scratch/Cargo.lock.patched" Cargo.lock
flags_target="$root/target/new-crate-flags"
expect_failure "with RUSTFLAGS set" "the rustflags in use are \`-C debuginfo=0\`" \
    env RUSTFLAGS="-C debuginfo=0" CARGO_TARGET_DIR="$flags_target" cargo build --quiet
rm .cargo/config.toml
expect_failure "without .cargo/config.toml" "needs a .cargo/config.toml beside its Cargo.toml" \
    env -u RUSTFLAGS CARGO_TARGET_DIR="$flags_target" cargo build --quiet
