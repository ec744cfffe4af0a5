#!/usr/bin/env bash
# The async lock-client stories as docs/async.md runs them: each broken
# scenario is found by a generic sweep (its own faults dropped) by the
# mechanism its [expect] names, and the seed found is shrunk to a scenario
# that still fails; each fixed twin, the same client code behind a fenced
# storage, has no failing seed in 10 000 generic seeds.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet --bin fencesim
fencesim="${CARGO_TARGET_DIR:-$PWD/target}/release/fencesim"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

field() { grep -o "\"$1\":[0-9a-z]*" | cut -d: -f2; }

stories=(
    "figure-9-6-async-unfenced figure-9-6-async"
    "etcd-mutex-async etcd-mutex-async-fenced"
    "redisson-watchdog-async redisson-watchdog-async-fenced"
    "leader-elector-async leader-elector-async-fenced"
    "zookeeper-recipe-async zookeeper-recipe-async-fenced"
    "hazelcast-fenced-lock-async hazelcast-fenced-lock-async-fenced"
    "cas-writer-async cas-writer-async-if-match"
)
for story in "${stories[@]}"; do
    read -r broken fixed <<<"$story"
    status=0
    "$fencesim" explore "scenarios/$broken.toml" --generic --seeds 0..10000 --json \
        >"$scratch/$broken.jsonl" || status=$?
    seed="$(tail -n 1 "$scratch/$broken.jsonl" | field first_mechanism_seed)"
    if [ "$status" != 1 ] || [ -z "$seed" ] || [ "$seed" = null ]; then
        echo "stories: explore --generic found no seed reproducing $broken's mechanism (exit $status)" >&2
        exit 1
    fi
    "$fencesim" shrink "scenarios/$broken.toml" --seed "$seed" --generic \
        --out "$scratch/$broken-shrunk.toml" >/dev/null
    status=0
    "$fencesim" run "$scratch/$broken-shrunk.toml" >/dev/null || status=$?
    if [ "$status" != 1 ]; then
        echo "stories: $broken's shrunk seed $seed exited $status, not 1" >&2
        exit 1
    fi
    status=0
    "$fencesim" explore "scenarios/$fixed.toml" --generic --seeds 0..10000 --json \
        >"$scratch/$fixed.jsonl" || status=$?
    failing="$(tail -n 1 "$scratch/$fixed.jsonl" | field failing_seeds)"
    if [ "$status" != 0 ] || [ "$failing" != 0 ]; then
        echo "stories: $fixed has $failing failing seeds in 10 000 generic seeds (exit $status)" >&2
        exit 1
    fi
    echo "stories: $broken found at generic seed $seed and shrunk; $fixed safe over 10 000 generic seeds"
done
