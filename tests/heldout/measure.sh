#!/usr/bin/env bash
# Measures the held-out planted bugs of this directory: for HEAD and for
# HEAD with each patch applied, builds the binary (Cargo.toml's `planted`
# profile, in target/heldout, incrementally), runs `fencesim check` on the
# bundled scenarios and `fencesim explore FILE --seeds 0..2000 FLAGS` on
# every bundled scenario whose `[expect]` says `verdict = "safe"`, then
# says which patches were caught: `check` failed, or a sweep found what the
# same sweep of HEAD does not (a failing seed where HEAD has none, a finding
# kind or broken property HEAD's sweep lacks, a crashed run).
#
#   tests/heldout/measure.sh [FLAGS...]    # default: --generic
#
# About 1 to 2 minutes a patch on two cores, after the first build. Not part
# of .ci/run: the patches are a measurement, kept as written.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
flags=("$@")
[ "${#flags[@]}" -gt 0 ] || flags=(--generic)
seeds=${HELDOUT_SEEDS:-0..2000}
target="$root/target/heldout"
out=$(mktemp -d)
scratch=$(mktemp -d)
trap 'git worktree remove --force "$scratch/tree" >/dev/null 2>&1 || true; rm -rf "$scratch"' EXIT
git worktree add --quiet --detach "$scratch/tree" HEAD
safe=$(grep -l '^verdict = "safe"' scenarios/*.toml)
for patch in baseline $(ls tests/heldout/*.patch | xargs -n1 basename | sed 's/\.patch$//'); do
    git -C "$scratch/tree" checkout -q -- .
    [ "$patch" = baseline ] || git -C "$scratch/tree" apply "$root/tests/heldout/$patch.patch"
    (cd "$scratch/tree" && CARGO_TARGET_DIR="$target" cargo build --profile planted --quiet --bin fencesim </dev/null)
    bin="$target/planted/fencesim"
    status=0
    (cd "$scratch/tree" && "$bin" check scenarios >/dev/null 2>&1) || status=$?
    echo "$status" >"$out/$patch.check"
    : >"$out/$patch.jsonl"
    for f in $safe; do
        line=$(cd "$scratch/tree" && "$bin" explore "$f" --seeds "$seeds" "${flags[@]}" --json </dev/null 2>/dev/null | tail -1 || true)
        printf '{"file":"%s","summary":%s}\n' "$f" "${line:-null}" >>"$out/$patch.jsonl"
    done
done
python3 - "$out" <<'PY'
import json, os, sys, glob
d = sys.argv[1]
def load(name):
    out = {}
    for l in open(os.path.join(d, name + '.jsonl')):
        j = json.loads(l)
        out[j['file']] = j['summary']
    return out
base = load('baseline')
caught_n, total = 0, 0
for p in sorted(glob.glob(os.path.join(d, '*.jsonl'))):
    name = os.path.basename(p)[:-6]
    if name == 'baseline':
        continue
    total += 1
    check = open(os.path.join(d, name + '.check')).read().strip()
    found = []
    for f, s in load(name).items():
        b = base.get(f)
        if s is None:
            found.append(f"{f}: no summary (the sweep ended abnormally)")
            continue
        if b is None:
            continue
        kinds = lambda x: set(x['by_kind']) | set(x.get('by_property', {}))
        new = kinds(s) - kinds(b)
        errors = s.get('crashed', 0) + s.get('timed_out', 0) + s.get('nondeterministic_seeds', 0)
        if (b['failing_seeds'] == 0 and s['failing_seeds'] > 0) or new or errors:
            shown = {k: v for k, v in {**s['by_kind'], **s.get('by_property', {})}.items()
                     if k in new or b['failing_seeds'] == 0}
            found.append(f"{os.path.basename(f)}: {s['failing_seeds']} failing seeds, the first "
                         f"{s['first_failing_seed']}, {shown}" + (f", {errors} crashed" if errors else ""))
    caught = check != '0' or bool(found)
    caught_n += caught
    print(f"{name}: {'caught' if caught else 'NOT caught'} (check exit {check}; sweeps: {len(found)} scenarios)")
    for line in found[:5]:
        print('    ' + line)
print(f"{caught_n} of {total} caught")
PY
