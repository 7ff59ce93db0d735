#!/usr/bin/env bash
# Fleet throughput: 40 quick runs (benches/fleet_topics.txt x 4 strategies) over the
# bundled corpus with --offline-latency 500ms, executed by 1, 2 and 4 workers of
# concurrency 1 on this machine; runs per minute from the workers' start to the last
# run settled. Each configuration gets a fresh database (no answer is served from an
# earlier configuration's cache); all workers share one state dir whose corpus index is
# built before timing starts.
# Needs PostgreSQL (DEEPR_BENCH_PG, default the local server's postgres database).
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-bench-results}/fleet"
deepr="${DEEPR:-./target/release/deepr}"
admin="${DEEPR_BENCH_PG:-postgres://postgres@127.0.0.1:5432/postgres}"
base="${admin%/*}"
if [ "$deepr" = ./target/release/deepr ]; then cargo build --release -p deepr; fi
rm -rf "$out" && mkdir -p "$out"
state="$out/state"
# Index the corpus once, outside the timing.
"$deepr" --quiet --state-dir "$state" run "warm-up" --corpus examples/sqlite-docs \
  --depth quick --out "$out/warm-up.md" >/dev/null
printf '| workers | runs | wall (s) | runs per minute |\n|---|---|---|---|\n' > "$out/fleet.md"
for workers in 1 2 4; do
  db="deepr_fleet_bench_$workers"
  psql "$admin" -qc "DROP DATABASE IF EXISTS $db WITH (FORCE)" -c "CREATE DATABASE $db"
  url="$base/$db"
  "$deepr" --quiet --db "$url" db migrate
  "$deepr" --quiet --db "$url" bench --topics benches/fleet_topics.txt \
    --corpus examples/sqlite-docs --strategies linear,per-claim,free-quote,no-judge \
    --depth quick --offline-latency 500ms --out "$out/bench-$workers" >/dev/null &
  bench=$!
  sleep 2
  start=$(date +%s.%N)
  pids=()
  for _ in $(seq 1 "$workers"); do
    "$deepr" --quiet --db "$url" --state-dir "$state" worker --concurrency 1 &
    pids+=($!)
  done
  wait "$bench"
  end=$(date +%s.%N)
  kill "${pids[@]}" 2>/dev/null || true
  wait "${pids[@]}" 2>/dev/null || true
  runs=$(psql "$url" -qAt -c "SELECT count(*) FROM deepr_runs WHERE state = 'finished'")
  python3 - "$workers" "$runs" "$start" "$end" >> "$out/fleet.md" <<'PY'
import sys
workers, runs, start, end = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
wall = end - start
print(f"| {workers} | {runs} | {wall:.1f} | {runs / wall * 60:.1f} |")
PY
  psql "$admin" -qc "DROP DATABASE IF EXISTS $db WITH (FORCE)"
done
cat "$out/fleet.md"
