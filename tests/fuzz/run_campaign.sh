#!/usr/bin/env bash
# Runs every fuzz target (or the ones named) for a fixed budget each, one worker, and writes
# per-target figures (executions, exec/s, coverage, corpus, findings) to WORK/stats.md.
#
#   tests/fuzz/run_campaign.sh --seconds 1800            # the full campaign: 30 min a target
#   tests/fuzz/run_campaign.sh --runs 10000000 fuzz_hf_config
#
# Options: --seconds N | --runs N, --build DIR (default build-fuzz), --work DIR (default
# BUILD/fuzz-campaign). The corpus in WORK/corpus/TARGET grows from run to run; crashes,
# timeouts, leaks and out-of-memory inputs land in WORK/findings/TARGET/ (libFuzzer's
# artifact files). slow-unit-* files there are inputs that took over 10 s once: counted
# apart, since on a loaded machine a stall of the process alone produces them; replay one
# (TARGET FILE) to tell.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
build="$root/build-fuzz"
work=""
budget=(-max_total_time=180)
targets=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --seconds) budget=(-max_total_time="$2"); shift 2 ;;
    --runs) budget=(-runs="$2"); shift 2 ;;
    --build) build=$(cd "$2" && pwd); shift 2 ;;
    --work) work="$2"; shift 2 ;;
    -h|--help) sed -n 2,13p "$0"; exit 0 ;;
    -*) echo "run_campaign.sh: unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
work=${work:-$build/fuzz-campaign}
if [[ ${#targets[@]} -eq 0 ]]; then
  targets=(fuzz_layout_json fuzz_cluster_json fuzz_hf_config fuzz_megatron_args fuzz_shell_script
           fuzz_bridge_recipe fuzz_kineto_json fuzz_nsys_sqlite fuzz_meshwork_trace fuzz_pickle fuzz_remote_client
           fuzz_remote_server)
fi
fuzz_bin="$build/tests/fuzz"
fixtures="$root/tests/fixtures"

# Seeds: copied from the fixtures and presets, or generated (the two SQLite formats).
seed() {
  local target=$1 dir="$work/seeds/$1"
  rm -rf "$dir"; mkdir -p "$dir"
  case "$target" in
    fuzz_layout_json)
      cp "$root"/resources/layouts/*.json "$fixtures"/bad/*.json "$dir"/
      cp "$fixtures"/export/golden/*.layout.json "$dir"/ ;;
    fuzz_cluster_json) cp "$root"/resources/clusters/*.json "$dir"/ ;;
    fuzz_hf_config) cp "$fixtures"/hf/*.json "$root"/resources/models/*.json "$dir"/ ;;
    fuzz_megatron_args)
      cp "$fixtures"/export/golden/*.megatron.sh "$dir"/
      find "$fixtures"/export/megatron -type f -exec cp {} "$dir"/ \; ;;
    fuzz_shell_script)
      cp "$fixtures"/export/golden/*.megatron.sh "$fixtures"/hostile/*.sh "$dir"/
      find "$fixtures"/export/megatron -type f -exec cp {} "$dir"/ \; ;;
    fuzz_bridge_recipe) find "$fixtures"/bridge -name '*.py' -exec cp --backup=numbered {} "$dir"/ \; ;;
    fuzz_kineto_json) cp "$fixtures"/profiler/*.json "$fixtures"/kineto/*.json* "$dir"/ ;;
    fuzz_nsys_sqlite) sqlite3 "$dir/nsys.sqlite" < "$root/tests/fuzz/nsys_seed.sql" ;;
    fuzz_meshwork_trace) "$fuzz_bin/make_trace_seeds" "$dir" ;;
    fuzz_pickle)
      cp "$fixtures"/memory/*.pickle "$fixtures"/fuzz-regressions/fuzz_pickle/* "$dir"/
      for f in "$fixtures"/memory/*.pickle.gz; do gzip -dc "$f" > "$dir/$(basename "$f" .gz)"; done ;;
    fuzz_remote_client|fuzz_remote_server) cp "$root"/tests/fuzz/seeds/"${target#fuzz_}"/* "$dir"/ ;;
  esac
}

# Reads the figures out of a libFuzzer log: the last status line and -print_final_stats.
figures() {
  local log=$1 status execs rate rss
  status=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -1)
  local cov ft corp
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$status")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$status")
  corp=$(sed -n 's/.* corp: \([0-9]*\/[0-9]*[a-zA-Z]*\).*/\1/p' <<<"$status")
  echo "${execs:-?}|${rate:-?}|${cov:-?}|${ft:-?}|${corp:-?}|${rss:-?}"
}

mkdir -p "$work"
stats="$work/stats.md"
{
  echo "Budget: ${budget[*]}, one worker, $(date -u +%Y-%m-%dT%H:%MZ)"
  echo
  echo "| target | executions | exec/s | cov | ft | corpus (inputs/bytes) | peak RSS MB | findings | slow units |"
  echo "|---|---|---|---|---|---|---|---|---|"
} > "$stats"
failed=0
for target in "${targets[@]}"; do
  [[ -x "$fuzz_bin/$target" ]] || { echo "missing $fuzz_bin/$target: build target meshwork_fuzz" >&2; exit 2; }
  seed "$target"
  mkdir -p "$work/corpus/$target" "$work/findings/$target"
  log="$work/$target.log"
  echo "== $target (${budget[*]})"
  rc=0
  "$fuzz_bin/$target" "${budget[@]}" -timeout=30 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$work/findings/$target/" "$work/corpus/$target" "$work/seeds/$target" \
    > "$log" 2>&1 || rc=$?
  findings=$(find "$work/findings/$target" -type f \( -name 'crash-*' -o -name 'leak-*' \
    -o -name 'timeout-*' -o -name 'oom-*' \) | wc -l)
  slow=$(find "$work/findings/$target" -type f -name 'slow-unit-*' | wc -l)
  [[ $rc -eq 0 && $findings -eq 0 ]] || failed=1
  echo "| $target | $(figures "$log") | $findings | $slow |" >> "$stats"
  tail -n 3 "$log"
done
cat "$stats"
exit $failed
