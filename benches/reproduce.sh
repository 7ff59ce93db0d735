#!/usr/bin/env bash
# Reproduce every figure in benches/README.md: criterion benches, the strategy table,
# the QA table and the orchestration-efficiency figures (offline model; release build;
# the latency benches take about 12 minutes, most of it simulated waiting).
# Optional: LLAMA_BASE_URL=http://127.0.0.1:8080/v1 also runs the strategy table against
# a local OpenAI-compatible server (e.g. llama.cpp's llama-server with SmolLM2).
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-bench-results}"
mkdir -p "$out"
cargo build --release -p deepr
deepr=./target/release/deepr

cargo bench -p deepr-benches -- --warm-up-time 1 --measurement-time 3 | tee "$out/criterion.txt"
$deepr --quiet bench --topics benches/topics.txt --corpus examples/sqlite-docs \
  --out "$out/strategies" --jobs 2 --price-as gpt-4.1-mini
$deepr --quiet bench --qa benches/data/sqlite_faq.json --corpus examples/sqlite-docs \
  --out "$out/qa" --strategies linear --jobs 2
$deepr --quiet bench --topics benches/topics.txt --corpus examples/sqlite-docs \
  --out "$out/efficiency" --strategies linear --jobs 1 \
  --offline-latency 1s --search-latency 400ms --fetch-latency 600ms
$deepr --quiet bench --topics benches/topics.txt --corpus examples/sqlite-docs \
  --out "$out/efficiency-sequential" --strategies linear --jobs 1 --io-concurrency 1 \
  --offline-latency 1s --search-latency 400ms --fetch-latency 600ms
for depth in quick standard deep; do
  $deepr --quiet bench --topics benches/topics.txt --corpus examples/sqlite-docs \
    --out "$out/realistic-$depth" --strategies linear --jobs 1 --depth "$depth" \
    --offline-latency 800ms+60tok/s --search-latency 300ms..900ms --fetch-latency 200ms..1500ms
done
if [ -n "${LLAMA_BASE_URL:-}" ]; then
  printf '[limits]\nmax_tokens = 256\nconcurrency = 2\nmax_retries = 1\n' > "$out/llama.toml"
  head -n 3 benches/topics.txt | grep -v '^#' > "$out/llama-topics.txt"
  $deepr --quiet --config "$out/llama.toml" bench --topics "$out/llama-topics.txt" \
    --corpus examples/sqlite-docs --out "$out/llama" --depth quick \
    --llm openai:smollm2 --llm-base-url "$LLAMA_BASE_URL" --price-as gpt-4.1-mini
fi
# Fleet throughput with 1, 2 and 4 workers (PostgreSQL at DEEPR_BENCH_PG or the local one).
if psql "${DEEPR_BENCH_PG:-postgres://postgres@127.0.0.1:5432/postgres}" -qAt -c 'SELECT 1' >/dev/null 2>&1; then
  DEEPR="$deepr" bash benches/fleet.sh "$out"
fi
echo "results in $out/ (bench.md in each folder; fleet/fleet.md)"
