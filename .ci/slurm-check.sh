#!/usr/bin/env bash
# CI: the Slurm job array of deploy/slurm/explore.sbatch, run for real on a
# one-node cluster on localhost. It installs Slurm and munge from Debian's
# packages (when missing), starts munged, slurmctld and slurmd with their
# state in a temporary directory, submits the array (4 shards of a sweep of
# the unfenced demo) and the dependent merge job, requeues one task in the
# middle of its shard, and checks that the merged result equals a
# one-machine `explore` of the same range, failing seed by failing seed.
# Every daemon it started is stopped by its pid on the way out.
#
#   .ci/slurm-check.sh        (as root: it installs packages and runs the daemons)
set -euo pipefail
cd "$(dirname "$0")/.."

scenario=scenarios/explore-lease-unfenced.toml
seeds=0..80000
shards=4
requeued=1 # the array task requeued midway
budget=100 # seconds for the array and the merge

say() { echo "slurm-check: $*"; }
# Prints a command as a prompt line on stderr (paths under the temporary
# directory relative to it), then runs it.
show() {
    echo "\$ $*" | sed "s|$tmp/||g" >&2
    "$@"
}
fail() {
    echo "slurm-check: FAILED: $*" >&2
    exit 1
}

if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
    say "installing slurm-wlm and munge"
    apt-get update >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends slurm-wlm munge >/dev/null
fi

cargo build --release --bin fencesim
fencesim="${CARGO_TARGET_DIR:-$PWD/target}/release/fencesim"

tmp="$(mktemp -d)"
chmod 755 "$tmp"
pids=()
stop_daemons() {
    local status=$?
    # Jobs still queued or running (a failed check) are cancelled first:
    # their slurmstepd and fencesim processes would outlive slurmd.
    if [ "${#pids[@]}" = 3 ] && [ -n "$(squeue -h -o %i 2>/dev/null)" ]; then
        squeue -h -o %i | xargs scancel 2>/dev/null || true
        for _ in $(seq 150); do
            [ -z "$(squeue -h -o %i 2>/dev/null)" ] && break
            sleep 0.2
        done
    fi
    # Newest first: slurmd, slurmctld, then munged, which they talk to.
    for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
        kill "${pids[i]}" 2>/dev/null || true
    done
    for pid in "${pids[@]}"; do
        wait "$pid" 2>/dev/null || true
    done
    if [ "$status" != 0 ]; then
        for log in "$tmp"/*.log "$tmp"/logs/*; do
            [ -f "$log" ] && { echo "--- $log"; tail -n 20 "$log"; }
        done >&2
    fi
    rm -rf "$tmp"
    exit "$status"
}
trap stop_daemons EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# munge: its own key, socket and files, so nothing of the host's is used.
mkdir -m 700 "$tmp/munge"
dd if=/dev/urandom of="$tmp/munge/munge.key" bs=1024 count=1 2>/dev/null
chmod 400 "$tmp/munge/munge.key"
socket="$tmp/munge/munge.socket"
munged --foreground --force --socket="$socket" --key-file="$tmp/munge/munge.key" \
    --pid-file="$tmp/munge/munged.pid" --seed-file="$tmp/munge/munged.seed" \
    --log-file="$tmp/munged.log" >>"$tmp/munged.log" 2>&1 &
pids+=($!)

host="$(hostname -s)"
mkdir "$tmp/state" "$tmp/spool" "$tmp/logs" "$tmp/results"
export SLURM_CONF="$tmp/slurm.conf"
cat >"$SLURM_CONF" <<EOF
ClusterName=fencesim-ci
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=16817
SlurmdPort=16818
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$socket
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
JobRequeue=1
ReturnToService=2
KillWait=30
NodeName=$host NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN
PartitionName=ci Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
for _ in $(seq 50); do [ -S "$socket" ] && break; sleep 0.1; done
slurmctld -D -i -f "$SLURM_CONF" >>"$tmp/slurmctld.log" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" >>"$tmp/slurmd.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do
    [ "$(sinfo -h -o %t 2>/dev/null)" = idle ] && break
    sleep 0.2
done
[ "$(sinfo -h -o %t)" = idle ] || fail "the node is not idle: $(sinfo -h -o '%t %E')"
say "one-node cluster $host: munged, slurmctld, slurmd (pids ${pids[*]}), Slurm $(slurmctld -V | cut -d' ' -f2)"

started=$SECONDS
export SCENARIO="$scenario" SEEDS="$seeds" SHARDS="$shards" RESULTS="$tmp/results" FENCESIM="$fencesim"
echo "\$ export SCENARIO=$SCENARIO SEEDS=$SEEDS SHARDS=$SHARDS RESULTS=$RESULTS FENCESIM=$FENCESIM" |
    sed "s|$tmp/||g; s|$PWD/||g"
array="$(show sbatch --parsable --output="$tmp/logs/%A_%a.out" --array=0-$((shards - 1)) deploy/slurm/explore.sbatch)"
echo "$array"
merge="$(show sbatch --parsable --output="$tmp/logs/merge.out" --dependency=afterany:"$array" deploy/slurm/explore.sbatch)"
echo "$merge"
say "array job $array (tasks 0-$((shards - 1))), merge job $merge"

task="${array}_$requeued"
out="$tmp/results/shard-$requeued-of-$shards"
state() { squeue -h -j "$1" -o %t 2>/dev/null || true; }
# Midway: once the task is running and has written a checkpoint.
until [ "$(state "$task")" = R ] && grep -q '"progress":true' "$out.tmp" 2>/dev/null; do
    [ $((SECONDS - started)) -lt "$budget" ] || fail "task $task never got going"
    sleep 0.2
done
show scontrol requeue "$task"
until [ -s "$out.partial.jsonl" ] && [ "$(state "$task")" = PD ]; do
    [ $((SECONDS - started)) -lt "$budget" ] || fail "task $task did not stop and requeue"
    sleep 0.2
done
partial="$(tail -n 1 "$out.partial.jsonl")"
case "$partial" in
    *'"stopped":true'*'"summary":true'* | *'"summary":true'*'"stopped":true'*) ;;
    *) fail "the stopped task's output does not end with its summary: $partial" ;;
esac
done_ranges="$(grep -o '"completed_ranges":[^]]*]]' <<<"$partial")"
say "task $task stopped by SIGTERM and requeued; its partial output: ${done_ranges}"
# A requeued job waits about two minutes before it is eligible again.
show scontrol update jobid="$task" StartTime=now

while [ -n "$(squeue -h -j "$array,$merge" -o %i 2>/dev/null)" ]; do
    [ $((SECONDS - started)) -lt "$budget" ] || fail "jobs still queued after ${budget}s: $(squeue -h)"
    sleep 0.5
done
say "array and merge done in $((SECONDS - started))s"
grep -q "resuming from" "$tmp/logs/${array}_$requeued.out" ||
    fail "the requeued task did not resume: $(cat "$tmp/logs/${array}_$requeued.out")"
for k in $(seq 0 $((shards - 1))); do
    echo "--- task $k: $tmp/logs/${array}_$k.out" | sed "s|$tmp/logs/||"
    sed "s|$tmp/||g" "$tmp/logs/${array}_$k.out"
done
echo "--- merge job: merge.out"
sed "s|$tmp/||g" "$tmp/logs/merge.out"
[ -s "$tmp/results/merged.jsonl" ] || fail "the merge job wrote no merged.jsonl"

# The same range on one machine, merged alike (one shard of one), so both
# sides are printed by the same code.
echo "\$ fencesim explore $scenario --seeds $seeds --json > whole.jsonl"
status=0
"$fencesim" explore "$scenario" --seeds "$seeds" --json >"$tmp/whole.jsonl" || status=$?
[ "$status" = 1 ] || fail "the one-machine sweep exited $status, not 1"
echo "\$ fencesim merge --json whole.jsonl > whole-merged.jsonl"
"$fencesim" merge --json "$tmp/whole.jsonl" >"$tmp/whole-merged.jsonl" || status=$?
[ "$status" = 1 ] || fail "the merge of the one-machine sweep exited $status, not 1"
python3 - "$tmp/results/merged.jsonl" "$tmp/whole-merged.jsonl" <<'EOF'
import json, sys

def read(path):
    lines = [json.loads(line) for line in open(path)]
    return lines[:-1], lines[-1]

(cluster, cs), (whole, ws) = read(sys.argv[1]), read(sys.argv[2])
def key(lines):
    return [(l["seed"], l["trace_hash"], l["kinds"]) for l in lines]
assert key(cluster) == key(whole), "the failing seeds differ"
assert cluster == whole, "the failing seeds' lines differ"
for k in ["seeds", "violations", "crashed", "timed_out", "failing_seeds",
          "first_failing_seed", "by_kind", "outcomes", "inconclusive",
          "cut_short", "unfired", "milestones", "range", "scenario", "faults"]:
    assert cs[k] == ws[k], f"{k}: {cs[k]} on the cluster, {ws[k]} on one machine"
assert cs["complete"] is True and cs["gaps"] == [], cs["gaps"]
assert cs["shards"] == 4
print(f"slurm-check: the merged {cs['seeds']} seeds equal the one-machine sweep: "
      f"{len(cluster)} failing seeds (first {cs['first_failing_seed']}), "
      f"the same trace hashes, the same counts")
EOF
say "ok in $SECONDS s"
