#!/usr/bin/env bash
# compare.sh — queuectl's engine against River (the strongest durable Go peer) in one run, on this machine.
#
#   peers/compare.sh [QUEUECTL_BINARY]      (default: builds ./cmd/queuectl of this repository)
#
# It starts a throwaway PostgreSQL on 127.0.0.1 (fresh initdb, durable defaults), runs River end to end
# (InsertMany of N no-op jobs, then 32 workers work them; FetchCooldown 2ms and FetchPollInterval 20ms, the settings
# of River's own benchmark — River's defaults are 25x slower here), then `queuectl bench` on the embedded store for
# EO and for one EOIO queue, and prints the figures and the ratio. Absolute numbers vary between machines and runs;
# the ratio measured in one run is what counts.
#
# Then the same benches on databases of the same PostgreSQL server (`--store postgres://…`), EOIO over 50 queues,
# bbolt's own single-put commit rate and PostgreSQL's single-connection commit rate — the ceilings of one EOIO queue,
# which needs one durable commit per message. River runs again at the end: the ratios use the mean of its two runs,
# and 'River first/last' far from 1 says the machine's speed drifted during the run.
#
# Needs: Go, python3, and the PostgreSQL server binaries (initdb, pg_ctl, postgres, psql); as root, a postgres user
# to run them as. The Go modules of River and asynq are downloaded on the first run.
#
# Environment: N=50000 (River and queuectl EO messages), N_EOIO=20000, PG=0 skips the PostgreSQL benches, PG_BIN
# (default: newest /usr/lib/postgresql/*/bin), KEEP=1 keeps the scratch directory. queuectl's engine settings come
# from the environment as usual (QUEUECTL_ENGINE_WORKERS=64 …); a config file in your home directory is not read.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
N=${N:-50000}
N_EOIO=${N_EOIO:-20000}
QC=${1:-}
SCRATCH=$(mktemp -d -t queuectl-compare.XXXXXX)
chmod 755 "$SCRATCH"
PG_BIN=${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)}
PG_DIR=""
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
cleanup() {
  if [ -n "$PG_DIR" ] && [ -f "$PG_DIR/data/postmaster.pid" ]; then as_pg "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m fast stop >/dev/null 2>&1 || true; fi
  [ "${KEEP:-0}" = 1 ] || rm -rf "$SCRATCH"
}
trap cleanup EXIT
say() { printf '%s\n' "$*" >&2; }

if [ -z "$QC" ]; then
  [ -f "$ROOT/cmd/queuectl/main.go" ] || { say "$ROOT is not the queuectl repository; pass a queuectl binary"; exit 2; }
  QC=$SCRATCH/queuectl
  say "building queuectl"
  (cd "$ROOT" && go build -o "$QC" ./cmd/queuectl)
else
  QC=$(cd "$(dirname "$QC")" && pwd)/$(basename "$QC")
fi
# The benches run with queuectl's defaults and the engine settings of the environment — never on a store, server or
# config file of the user's.
export XDG_CONFIG_HOME=$SCRATCH/config
unset QUEUECTL_CONFIG QUEUECTL_DB QUEUECTL_STORE QUEUECTL_SERVER QUEUECTL_CONTEXT
say "building the peer harness"
(cd "$HERE" && go build -o "$SCRATCH/peers" .)

[ -x "$PG_BIN/initdb" ] || { say "no PostgreSQL server binaries in $PG_BIN"; exit 2; }
PG_DIR=$SCRATCH/pg
mkdir -p "$PG_DIR"
[ "$(id -u)" = 0 ] && chown postgres "$PG_DIR"
PORT=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
as_pg "$PG_BIN/initdb" -D "$PG_DIR/data" -A trust >/dev/null
as_pg "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/log" -w \
  -o "-p $PORT -k $PG_DIR -c listen_addresses=127.0.0.1 -c max_connections=200" start >/dev/null
DSN="postgres://postgres@127.0.0.1:$PORT/bench?sslmode=disable"

# River runs first and again last, on a fresh database each time; the ratios use the mean of the two, and both are
# printed: when they differ by much, the machine's speed drifted during the run and the ratios are rough.
river_run() {
  as_pg "$PG_BIN/psql" -h 127.0.0.1 -p "$PORT" -U postgres -qc "drop database if exists bench" -c "create database bench" >/dev/null
  "$SCRATCH/peers" river -n "$N" -pg "$DSN" -skip-single -fast=false -fetch-cooldown 2ms -fetch-poll 20ms 2>/dev/null |
    sed -n 's/^river\/e2e: .* = \([0-9]*\) msgs\/s/\1/p'
}
say "River: $N jobs end to end"
river1=$(river_run)
[ -n "$river1" ] || { say "the River run did not report"; exit 1; }

say "bbolt: one transaction per put (the commit rate one EOIO queue is bound by)"
bolt_commit=$("$SCRATCH/peers" bbolt-single -n 8000 -dir "$SCRATCH" 2>/dev/null | sed -n 's/.*= \([0-9.]*\) msgs\/s/\1/p')
bench() { (cd "$SCRATCH" && "$QC" "$@" -o json); }
say "queuectl bench (embedded bbolt): $N EO messages"
eo=$(bench bench --messages "$N" --qos EO)
say "queuectl bench (embedded bbolt): $N_EOIO EOIO messages in one queue"
eoio=$(bench bench --messages "$N_EOIO" --qos EOIO --queues 1)
say "queuectl bench (embedded bbolt): $N EOIO messages over 50 queues"
eoio50=$(bench bench --messages "$N" --qos EOIO --queues 50)
pg_eo='{}'; pg_eoio='{}'; pg_eoio50='{}'
if [ "${PG:-1}" = 1 ]; then
  for d in qc_eo qc_eoio qc_eoio50; do as_pg "$PG_BIN/psql" -h 127.0.0.1 -p "$PORT" -U postgres -qc "create database $d" >/dev/null; done
  PGU="postgres://postgres@127.0.0.1:$PORT"
  say "queuectl bench (PostgreSQL, same server as River): $N EO messages"
  pg_eo=$(bench --store "$PGU/qc_eo?sslmode=disable" bench --messages "$N" --qos EO) || pg_eo='{}'
  say "queuectl bench (PostgreSQL): $N_EOIO EOIO messages in one queue"
  pg_eoio=$(bench --store "$PGU/qc_eoio?sslmode=disable" bench --messages "$N_EOIO" --qos EOIO --queues 1) || pg_eoio='{}'
  say "queuectl bench (PostgreSQL): $N EOIO messages over 50 queues"
  pg_eoio50=$(bench --store "$PGU/qc_eoio50?sslmode=disable" bench --messages "$N" --qos EOIO --queues 50) || pg_eoio50='{}'
  as_pg "$PG_BIN/psql" -h 127.0.0.1 -p "$PORT" -U postgres -qc "create database pgcommit" >/dev/null
  say "PostgreSQL: single-row commits on one connection (the commit rate one EOIO queue is bound by)"
  pg_commit=$("$SCRATCH/peers" pg-commit -c 1 -n 8000 -pg "$PGU/pgcommit?sslmode=disable" 2>/dev/null | sed -n 's/.*= \([0-9.]*\) msgs\/s.*/\1/p' | head -n 1)
fi
say "River again: $N jobs end to end"
river2=$(river_run)
[ -n "$river2" ] || river2=$river1

python3 - "$river1" "$river2" "${pg_commit:-}" "$bolt_commit" "$eo" "$eoio" "$eoio50" "$pg_eo" "$pg_eoio" "$pg_eoio50" <<'PY'
import json, sys
river1, river2 = float(sys.argv[1]), float(sys.argv[2]); river = (river1 + river2) / 2
pg_commit = float(sys.argv[3] or "nan"); commit = float(sys.argv[4] or "nan")
eo, eoio, eoio50, pg_eo, pg_eoio, pg_eoio50 = (json.loads(a) for a in sys.argv[5:11])
nan = float("nan")
def per(r, key):
    return f"{r[key]:.3f}" if key in r else ""
def row(name, r):
    if not r:
        return
    print(f"| {name} | {r['throughput']:,.0f} | {r['throughput'] / river:.2f}x | {r.get('commits_per_message', nan):.3f} | "
          f"{per(r, 'statements_per_message')} | {per(r, 'round_trips_per_message')} | "
          f"{r.get('cpu_us_per_message', nan):.0f} | {r.get('store_bytes_per_message', nan):,.0f} | "
          f"{r.get('latency_p50_ms', nan):.1f} / {r.get('latency_p99_ms', nan):.1f} |")
print("| run | msgs/s | / River | commits/msg | statements/msg | round trips/msg | CPU µs/msg | store B/msg | latency p50/p99 ms |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
print(f"| River e2e (PostgreSQL, 32 workers; first {river1:,.0f}, last {river2:,.0f}) | {river:,.0f} | 1.00x | | | | | | |")
row("queuectl EO, bbolt", eo)
row("queuectl EOIO 1 queue, bbolt", eoio)
row("queuectl EOIO 50 queues, bbolt", eoio50)
row("queuectl EO, PostgreSQL", pg_eo)
row("queuectl EOIO 1 queue, PostgreSQL", pg_eoio)
row("queuectl EOIO 50 queues, PostgreSQL", pg_eoio50)
print(f"\nqueuectl EO / River = {eo['throughput'] / river:.2f}x (bbolt)", end="")
if pg_eo:
    print(f", {pg_eo['throughput'] / river:.2f}x (PostgreSQL)", end="")
print(f"\nbbolt single-put commit rate {commit:,.0f}/s; one EOIO queue on bbolt = {eoio['throughput'] / commit:.2f} of it")
if pg_eoio:
    print(f"PostgreSQL single-connection commit rate {pg_commit:,.0f}/s; one EOIO queue on PostgreSQL = {pg_eoio['throughput'] / pg_commit:.2f} of it")
drift = river1 / river2
print(f"River first/last = {drift:.2f}" + ("" if 0.85 <= drift <= 1.18 else ": the machine's speed drifted during the run; run it again"))
PY
