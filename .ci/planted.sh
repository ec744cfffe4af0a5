#!/usr/bin/env bash
# Planted lock bugs: each patch in tests/planted/ breaks a bundled lock or
# lock client the way real ones break, and a sweep of a bundled safe
# scenario must catch it within 2 000 seeds, by the lock-side finding that
# no fenced storage can mask: a generic sweep (`--generic`, the scenario's
# own faults dropped), or one with the scenario's faults and random ones
# (`random`) where the bug needs the scenario's faults to show, or a generic
# one whose seeds also vary the workload (`workloads`: `--generic
# --workloads`) where the bug needs a shape the scenario's own clients
# never take (lease checks, a renewing holder past one lease). Each patch is applied to a scratch copy of HEAD and
# built in its own target directory (target/planted), incrementally
# (Cargo.toml's `planted` profile), so the tree and its
# build are untouched.
#
#   renewal-timer     lease: a renewal leaves the old expiry timer armed
#                     -> early_expiry in renewal-check-lease
#   redis-del         redis: release by plain DEL, whoever holds the key
#                     -> double_grant in redis-rounds
#   redlock-majority  redlock: 2 of 5 nodes counted as a majority
#                     -> minority_acquire in redlock-contention
#   duplicate-grant   async lock client: a duplicated grant of the lease it
#                     holds kept, and handed to its next acquire
#                     -> unbacked_acquire in leader-elector-async-duplicated
#   renewal-timeout   async lock client: a renewal that timed out counted
#                     as a success
#                     -> unbacked_renewal in leader-elector-async-partitioned
#   renewal-from-answer  bundled client: a renewal's new end counted from
#                     when the answer came, not from when it was asked
#                     -> overlong_lease in renewal-check-lease
#   dynamodb-first-look  dynamodb client: the lease counted from its first
#                     look at the item, not started over when a heartbeat
#                     changed the record version
#                     -> early_takeover in dynamodb-heartbeating-holder
#   and, with varied workloads, where the file's own clients never check
#   their lease or renew past one: renewal-from-answer -> overlong_lease
#   in lease-healthy-contention, dynamodb-first-look -> early_takeover in
#   dynamodb-lock-pause-fenced
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
seeds=${PLANTED_SEEDS:-0..2000}
scratch=$(mktemp -d)
trap 'git worktree remove --force "$scratch/tree" >/dev/null 2>&1 || true; rm -rf "$scratch"' EXIT
git worktree add --quiet --detach "$scratch/tree" HEAD
flags() {
    case "$1" in
        generic) echo --generic ;;
        workloads) echo --generic --workloads ;;
        random) ;;
    esac
}
status=0
built=
while read -r patch scenario kind mode; do
    # A patch swept on two scenarios (adjacent lines) is built once.
    if [ "$patch" != "$built" ]; then
        git -C "$scratch/tree" checkout -q -- .
        git -C "$scratch/tree" apply "$root/tests/planted/$patch.patch"
        (cd "$scratch/tree" && CARGO_TARGET_DIR="$root/target/planted" cargo build --profile planted --quiet --bin fencesim </dev/null)
        built=$patch
    fi
    # explore exits 1 when seeds fail, which is what is looked for here.
    summary=$("$root/target/planted/planted/fencesim" explore "$scratch/tree/scenarios/$scenario.toml" \
        --seeds "$seeds" $(flags "$mode") --json </dev/null | tail -1 || true)
    found=$(printf '%s' "$summary" | python3 -c "
import json, sys
d = json.load(sys.stdin)
print(d['by_kind'].get('$kind', 0), d['failing_seeds'], d.get('first_failing_seed'))")
    read -r caught failing first <<<"$found"
    if [ "$caught" -gt 0 ]; then
        echo "planted $patch: caught in $scenario ($mode), $caught of $failing failing seeds in $seeds show $kind (first failing seed $first)"
    else
        echo "planted $patch: NOT caught in $scenario ($failing failing seeds in $seeds, none showing $kind)" >&2
        status=1
    fi
done <<'LIST'
renewal-timer renewal-check-lease early_expiry generic
redis-del redis-rounds double_grant generic
redlock-majority redlock-contention minority_acquire generic
duplicate-grant leader-elector-async-duplicated unbacked_acquire random
renewal-timeout leader-elector-async-partitioned unbacked_renewal random
renewal-from-answer renewal-check-lease overlong_lease generic
renewal-from-answer lease-healthy-contention overlong_lease workloads
dynamodb-first-look dynamodb-heartbeating-holder early_takeover generic
dynamodb-first-look dynamodb-lock-pause-fenced early_takeover workloads
LIST
exit $status
