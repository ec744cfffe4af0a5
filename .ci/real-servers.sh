#!/usr/bin/env bash
# Figure 9-6 on real servers: redis-server, PostgreSQL and etcd from
# Debian's packages, each started on localhost on a free port with a data
# directory of its own, and examples/async-lock-client's `real-servers` run
# against each, fenced and unfenced. Leader 1 is stopped (SIGSTOP) past its
# lease while leader 2 takes over and writes; resumed, its late write must
# be refused by the server's fence (a Lua compare, an etcd transaction,
# `AND lock_token <= :token`) and, unfenced, accepted. Then the adapters'
# error cases on each server (`real-servers … errors`): refused conditional
# writes, a lease not found, a database error, and a timeout while the
# server is stopped. Then the seam's wider operations on each server
# (`real-servers … operations`, the functions tests/operations.rs runs in
# fencesim): SQL transactions and advisory locks, Redis counters and the
# fenced-write script, etcd's keys, leases and transactions with compares.
# Every server is stopped at the end, whatever happened.
set -euo pipefail
cd "$(dirname "$0")/.."

pgbin=/usr/lib/postgresql/15/bin
missing=()
command -v redis-server >/dev/null || missing+=(redis-server)
command -v etcd >/dev/null || missing+=(etcd-server)
command -v etcdctl >/dev/null || missing+=(etcd-client)
[ -x "$pgbin/pg_ctl" ] || missing+=(postgresql)
command -v protoc >/dev/null || missing+=(protobuf-compiler)
if [ "${#missing[@]}" -gt 0 ]; then
    apt-get update >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null
fi

cargo build -q -p async-lock-client --features real-servers --bin real-servers
real_servers="${CARGO_TARGET_DIR:-$PWD/target}/debug/real-servers"

scratch="$(mktemp -d)"
# PostgreSQL runs as the `postgres` user, who must reach its data directory.
chmod 755 "$scratch"
pids=()
pg_started=""
stop() {
    for pid in "${pids[@]}"; do
        kill "$pid" 2>/dev/null || true
    done
    if [ -n "$pg_started" ]; then
        as_postgres "$pgbin/pg_ctl" -D "$scratch/pg" -m fast -w stop >/dev/null 2>&1 || true
    fi
    for pid in "${pids[@]}"; do
        wait "$pid" 2>/dev/null || true
    done
    rm -rf "$scratch"
}
trap stop EXIT

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

as_postgres() {
    if [ "$(id -u)" = 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

# Waits up to 20 s for `$@` to succeed.
wait_for() {
    local what="$1"
    shift
    for _ in $(seq 100); do
        if "$@" >/dev/null 2>&1; then
            return 0
        fi
        sleep 0.2
    done
    echo "real-servers: $what did not come up" >&2
    return 1
}

# One run of the story: its output kept, its exit status and its last line
# checked.
story() {
    local service="$1" address="$2" fence="$3" expect="$4"
    local status=0
    timeout 60 "$real_servers" "$service" "$address" "$fence" >"$scratch/$service-$fence.txt" || status=$?
    cat "$scratch/$service-$fence.txt"
    if [ "$status" != 0 ] || ! tail -n 1 "$scratch/$service-$fence.txt" | grep -q "$expect"; then
        echo "real-servers $service $fence exited $status without \"$expect\"" >&2
        exit 1
    fi
}

# The story fenced and unfenced, then the error cases ($3: the server's
# pid, stopped for the timeout; PostgreSQL's backend is found by the
# program).
stories() {
    local service="$1" address="$2"
    shift 2
    story "$service" "$address" fenced "stale write was refused by the fence"
    story "$service" "$address" unfenced "stale write was accepted after leader 2's"
    local status=0
    timeout 60 "$real_servers" "$service" "$address" errors "$@" || status=$?
    if [ "$status" != 0 ]; then
        echo "real-servers $service errors exited $status" >&2
        exit 1
    fi
    timeout 60 "$real_servers" "$service" "$address" operations || status=$?
    if [ "$status" != 0 ]; then
        echo "real-servers $service operations exited $status" >&2
        exit 1
    fi
}

# The pid of the server `timeout` (pid $1) runs.
server_pid() {
    pgrep -P "$1"
}

# Redis: no persistence, nothing but localhost.
port="$(free_port)"
timeout 300 redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
    --dir "$scratch" >"$scratch/redis.log" 2>&1 &
pids+=($!)
wait_for "redis-server" redis-cli -p "$port" ping
echo "== $(redis-server --version | cut -d' ' -f1-3)"
stories redis "redis://127.0.0.1:$port/" "$(server_pid "${pids[-1]}")"

# PostgreSQL: a fresh cluster, trusting local connections, its socket in
# the data directory.
port="$(free_port)"
mkdir "$scratch/pg"
[ "$(id -u)" = 0 ] && chown postgres "$scratch/pg"
as_postgres "$pgbin/initdb" -D "$scratch/pg" -A trust -U postgres >"$scratch/initdb.log" 2>&1
pg_started=1
as_postgres timeout 60 "$pgbin/pg_ctl" -D "$scratch/pg" -l "$scratch/pg/server.log" -w \
    -o "-p $port -k $scratch/pg -c listen_addresses=127.0.0.1" start >/dev/null
echo "== $("$pgbin/postgres" --version)"
stories postgres "host=127.0.0.1 port=$port user=postgres dbname=postgres"

# etcd: one member, its client and peer URLs on localhost.
port="$(free_port)"
peer="$(free_port)"
timeout 300 etcd --name fencesim --data-dir "$scratch/etcd" \
    --listen-client-urls "http://127.0.0.1:$port" --advertise-client-urls "http://127.0.0.1:$port" \
    --listen-peer-urls "http://127.0.0.1:$peer" --initial-advertise-peer-urls "http://127.0.0.1:$peer" \
    --initial-cluster "fencesim=http://127.0.0.1:$peer" >"$scratch/etcd.log" 2>&1 &
pids+=($!)
wait_for "etcd" etcdctl --endpoints "http://127.0.0.1:$port" endpoint health
echo "== etcd $(etcd --version | head -n 1 | cut -d' ' -f3)"
stories etcd "http://127.0.0.1:$port" "$(server_pid "${pids[-1]}")"
