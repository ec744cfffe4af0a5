#!/bin/sh
# One shard of a seed sweep larger than one machine, or the merge of all of
# them: the shard, resume and merge steps shared by the Slurm job array
# (deploy/slurm/explore.sbatch) and the Kubernetes Indexed Job
# (deploy/k8s/explore-job.yaml). POSIX sh, so any image's shell runs it.
#
#   deploy/shard.sh run K     # shard K of $SHARDS: $RESULTS/shard-K-of-N.jsonl
#   deploy/shard.sh merge     # every shard: $RESULTS/merged.jsonl
#
# Settings, from the environment:
#   SCENARIO     the scenario file (required)
#   SEEDS        the whole sweep's range, A..B (required)
#   SHARDS       N, the number of shards (required)
#   RESULTS      a directory every shard and the merge can reach (required)
#   FENCESIM     the binary (default: fencesim on the PATH)
#   JOBS         worker threads of each shard (default: fencesim's, one per core)
#   RUN_TIMEOUT  each seed's wall-clock budget (default 60s)
#   SHARD_SIGNALS
#                forward (default): pass SIGTERM and SIGINT on to fencesim,
#                for engines that signal only the first process (Kubernetes
#                signals the container's PID 1, this shell); direct: do not,
#                for engines that signal every process of the job themselves
#                (Slurm's scancel, requeue, preemption and time limit):
#                a second signal would end fencesim at once, before it
#                writes its summary.
#
# A shard that is stopped (SIGTERM or SIGINT: eviction, preemption, requeue,
# cancel) lets its running seeds finish and writes its summary with
# completed_ranges; its output is kept as shard-K-of-N.partial.jsonl and the
# next run of the same shard resumes it (`explore --resume`), running only
# the missing seeds. A shard killed outright (SIGKILL) leaves
# shard-K-of-N.tmp, whose last checkpoint (every 1 000 seeds or 5 s) is
# enough to resume from. A shard whose output is complete is not run again.
#
# Exit status of `run`: 0 when the shard has its result (fencesim's 0 no
# violation, 1 violations found, 4 nothing judged: all kept in its .jsonl),
# 3 when seeds crashed or timed out (kept too), 130 or 143 when stopped
# (partial output kept), 2 for invalid input, and fencesim's own status
# when it was killed (137 for SIGKILL: its output is left to resume).
# `merge` writes merged.jsonl (`fencesim merge --json`), prints the human
# summary, and exits as `fencesim merge` does, except that 1 (violations
# found) is 0, a result: 4 when no seed failed but shards leave gaps, 3
# for crashed seeds, 2 for invalid input.
set -u

usage() {
    echo "usage: $0 run K | merge (with SCENARIO, SEEDS, SHARDS and RESULTS set)" >&2
    exit 2
}

: "${SCENARIO:?set SCENARIO, the scenario file}"
: "${SEEDS:?set SEEDS, the whole sweep's seed range A..B}"
: "${SHARDS:?set SHARDS, the number of shards}"
: "${RESULTS:?set RESULTS, the directory of the shards' outputs}"
fencesim="${FENCESIM:-fencesim}"
run_timeout="${RUN_TIMEOUT:-60s}"
signals="${SHARD_SIGNALS:-forward}"
case "$signals" in forward | direct) ;; *) usage ;; esac
mkdir -p "$RESULTS" || exit 2

# The output files of shard $1.
base() { echo "$RESULTS/shard-$1-of-$SHARDS"; }

# Whether file $1 has a checkpoint or summary line to resume from.
resumable() { [ -s "$1" ] && grep -q '"completed_ranges"' "$1"; }

# File $1 without a last line cut in the middle (no newline after it).
whole_lines() {
    if [ -n "$(tail -c 1 "$1")" ]; then sed '$d' "$1"; else cat "$1"; fi
}

# The lines of shard output $1.tmp, killed outright, after those of the
# output it resumed from, if any: a resumption writes the earlier failing
# seeds among its own in seed order, so a checkpoint of its own may come
# before some of them.
salvaged() {
    if [ -s "$1.resumed-from.jsonl" ]; then whole_lines "$1.resumed-from.jsonl"; fi
    whole_lines "$1.tmp"
}

run_shard() {
    index="$1"
    out="$(base "$index")"
    if [ -s "$out.jsonl" ]; then
        echo "shard $index/$SHARDS: already complete in $out.jsonl"
        return 0
    fi
    # Killed outright: its lines resume from their last checkpoint, if any
    # (and then supersede an older partial output they resumed from).
    if resumable "$out.tmp"; then
        salvaged "$out" >"$out.salvaged" && mv "$out.salvaged" "$out.partial.jsonl"
        rm -f "$out.tmp"
    fi
    if [ -s "$out.partial.jsonl" ]; then
        mv "$out.partial.jsonl" "$out.resumed-from.jsonl"
    fi
    set -- --seeds "$SEEDS" --shard "$index/$SHARDS" --run-timeout "$run_timeout" --json
    if [ -n "${JOBS:-}" ]; then
        set -- "$@" --jobs "$JOBS"
    fi
    if [ -s "$out.resumed-from.jsonl" ]; then
        set -- "$@" --resume "$out.resumed-from.jsonl"
        echo "shard $index/$SHARDS: resuming from $out.resumed-from.jsonl"
    fi
    # A shell waiting for a command runs no trap until it ends: fencesim
    # runs in the background and the shell waits for it, so a signal to the
    # shell reaches its trap at once.
    pid=""
    pending=""
    trap 'pass TERM' TERM
    trap 'pass INT' INT
    "$fencesim" explore "$SCENARIO" "$@" >"$out.tmp" &
    pid=$!
    # A signal that came before fencesim started is its too.
    if [ -n "$pending" ]; then kill -"$pending" "$pid" 2>/dev/null; fi
    status=0
    wait "$pid" || status=$?
    # `wait` returns early when a trapped signal arrives: wait for fencesim
    # itself to finish writing.
    while kill -0 "$pid" 2>/dev/null; do
        status=0
        wait "$pid" || status=$?
    done
    trap - TERM INT
    case "$status" in
        130 | 143)
            # Stopped: keep what ran, for the next run to resume.
            mv "$out.tmp" "$out.partial.jsonl"
            echo "shard $index/$SHARDS: stopped (exit $status), partial output kept in $out.partial.jsonl"
            return "$status"
            ;;
        0 | 1 | 3 | 4)
            mv "$out.tmp" "$out.jsonl"
            rm -f "$out.resumed-from.jsonl"
            echo "shard $index/$SHARDS: exit $status, output in $out.jsonl"
            [ "$status" = 3 ] && return 3
            return 0
            ;;
        *)
            # Killed (137 for SIGKILL) or worse: the lines stay in .tmp,
            # whose last checkpoint the next run resumes from.
            echo "shard $index/$SHARDS: fencesim exited $status, its output left in $out.tmp" >&2
            return "$status"
            ;;
    esac
}

# Passes signal $1 on to fencesim, unless the engine signals it itself;
# before fencesim has started, keeps it for when it has.
pass() {
    if [ -z "$pid" ]; then
        pending="$1"
    elif [ "$signals" = forward ]; then
        kill -"$1" "$pid" 2>/dev/null
    fi
}

merge_shards() {
    set --
    index=0
    while [ "$index" -lt "$SHARDS" ]; do
        out="$(base "$index")"
        rm -f "$out.merged-from.jsonl"
        # The shard's most complete output: finished, stopped, killed after
        # a checkpoint (with what it resumed from), or the stopped output a
        # killed resumption started from. A shard with none is a gap.
        if resumable "$out.jsonl"; then
            set -- "$@" "$out.jsonl"
        elif resumable "$out.partial.jsonl"; then
            set -- "$@" "$out.partial.jsonl"
        elif resumable "$out.tmp"; then
            salvaged "$out" >"$out.merged-from.jsonl"
            set -- "$@" "$out.merged-from.jsonl"
        elif resumable "$out.resumed-from.jsonl"; then
            set -- "$@" "$out.resumed-from.jsonl"
        fi
        index=$((index + 1))
    done
    if [ "$#" = 0 ]; then
        echo "merge: no shard output in $RESULTS" >&2
        return 2
    fi
    status=0
    "$fencesim" merge --json "$@" >"$RESULTS/merged.jsonl.tmp" || status=$?
    case "$status" in
        0 | 1 | 3 | 4) mv "$RESULTS/merged.jsonl.tmp" "$RESULTS/merged.jsonl" ;;
        *)
            rm -f "$RESULTS/merged.jsonl.tmp"
            return "$status"
            ;;
    esac
    "$fencesim" merge "$@"
    echo "merged $# of $SHARDS shards: $RESULTS/merged.jsonl (exit $status)"
    [ "$status" = 1 ] && return 0
    return "$status"
}

case "${1:-}" in
    run)
        [ "$#" = 2 ] || usage
        run_shard "$2"
        ;;
    merge)
        [ "$#" = 1 ] || usage
        merge_shards
        ;;
    *) usage ;;
esac
