#!/usr/bin/env bash
# The cost per seed of the sweeps benches/cost.toml names, against the
# figures it records: allocations and bytes per seed (the bench's counting
# allocator, exact on any machine) and instructions per seed (callgrind on
# the release binary: seeds 0..900 less seeds 0..300, over 600).
#
#   .ci/cost.sh            check: fails when a figure grew by more than 10 %
#                          over the recorded one, unless the HEAD commit's
#                          message has a line `cost: NAME WHY` (NAME a
#                          sweep of benches/cost.toml, or `all`)
#   .ci/cost.sh --record   measure and write every figure into
#                          benches/cost.toml (commit it, with a `cost:` line
#                          saying why when a figure grew)
#
# See docs/benchmarks-cost.md. About a minute and a half on a 2-core machine
# once the release build is there.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=check
case "${1:-}" in
    --record) mode=record ;;
    "") ;;
    *)
        echo "usage: .ci/cost.sh [--record]" >&2
        exit 2
        ;;
esac

if ! command -v valgrind >/dev/null; then
    apt-get update >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends valgrind >/dev/null
fi

cargo build -q --release --bin fencesim
fencesim="${CARGO_TARGET_DIR:-$PWD/target}/release/fencesim"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

# Allocations and bytes per seed: "NAME allocations=A bytes=B" lines.
cargo bench -q --bench throughput -- --cost >"$scratch/allocations.txt"

# Instructions per seed of each sweep, under callgrind.
python3 - benches/cost.toml >"$scratch/cases.txt" <<'PY'
import sys, tomllib
for s in tomllib.load(open(sys.argv[1], "rb"))["sweep"]:
    print(s["name"], s["file"], s["faults"])
PY
while read -r name file faults; do
    for seeds in 300 900; do
        valgrind --tool=callgrind --callgrind-out-file="$scratch/$name.$seeds.out" \
            "$fencesim" explore "$file" --seeds "0..$seeds" --jobs 1 --json --faults "$faults" \
            >/dev/null 2>"$scratch/$name.$seeds.err" || {
            status=$?
            # explore exits 1 on violations, 4 on an inconclusive sweep:
            # the cost is measured all the same; anything else is a failure.
            if [ "$status" != 1 ] && [ "$status" != 4 ]; then
                cat "$scratch/$name.$seeds.err" >&2
                echo "cost: explore $file exited $status under callgrind" >&2
                exit 1
            fi
        }
    done
    short="$(sed -n 's/^summary: //p' "$scratch/$name.300.out")"
    long="$(sed -n 's/^summary: //p' "$scratch/$name.900.out")"
    echo "$name instructions=$(((long - short) / 600))"
done <"$scratch/cases.txt" >"$scratch/instructions.txt"

git log -1 --format=%B >"$scratch/message.txt" 2>/dev/null || : >"$scratch/message.txt"

python3 - "$mode" benches/cost.toml "$scratch/allocations.txt" "$scratch/instructions.txt" \
    "$scratch/message.txt" <<'PY'
import re, sys, tomllib

mode, path, allocations, instructions, message = sys.argv[1:]
FIGURES = ("allocations", "bytes", "instructions")
TOLERANCE = 1.10

measured = {}
for f in (allocations, instructions):
    for line in open(f):
        name, *pairs = line.split()
        for pair in pairs:
            key, value = pair.split("=")
            measured.setdefault(name, {})[key] = int(value)

text = open(path).read()
recorded = tomllib.loads(text)["sweep"]

if mode == "record":
    # The header (everything before the first [[sweep]]) stays as written.
    head = text[: text.index("[[sweep]]")]
    out = [head.rstrip("\n"), ""]
    for s in recorded:
        m = measured[s["name"]]
        out += ["[[sweep]]", f'name = "{s["name"]}"', f'file = "{s["file"]}"',
                f'faults = "{s["faults"]}"']
        out += [f"{k} = {m[k]}" for k in FIGURES]
        out.append("")
    open(path, "w").write("\n".join(out))
    for s in recorded:
        m = measured[s["name"]]
        print(f"cost: {s['name']}: " + ", ".join(f"{m[k]} {k}" for k in FIGURES) + " per seed")
    print(f"cost: recorded in {path}")
    sys.exit(0)

# A line `cost: NAME WHY` (NAME a sweep, or all) in the HEAD commit's
# message accepts that sweep's growth.
why = {}
for line in open(message):
    m = re.match(r"\s*cost:\s*(\S+)\s+(\S.*)$", line)
    if m:
        why[m.group(1)] = m.group(2)

failed = False
for s in recorded:
    name, m = s["name"], measured[s["name"]]
    for k in FIGURES:
        if k not in s:
            print(f"cost: {name}: no {k} recorded in {path}: run .ci/cost.sh --record", file=sys.stderr)
            failed = True
            continue
        was, now = s[k], m[k]
        ratio = now / was if was else float("inf")
        line = f"cost: {name}: {now} {k} per seed, recorded {was} ({ratio:.3f}×)"
        if ratio <= TOLERANCE:
            print(line)
        elif name in why or "all" in why:
            print(f"{line}: grown, and the commit says why: {why.get(name) or why['all']}")
        else:
            print(f"{line}: grown by more than {TOLERANCE - 1:.0%}", file=sys.stderr)
            failed = True
if failed:
    print(f"cost: a figure grew past {path} without the commit saying why: find the cost "
          "(docs/benchmarks-cost.md), or say why in a line `cost: NAME WHY` of the commit "
          "message and record the new figures with .ci/cost.sh --record", file=sys.stderr)
    sys.exit(1)
print("cost: every figure within 10 % of benches/cost.toml")
PY
