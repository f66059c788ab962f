#!/usr/bin/env bash
# Kineto import against its peer, in one run: meshwork-cli import-trace (parse, step
# attribution and the SQLite trace written) versus Python's bare json.load of the same file
# (no work done on the events), alternating, N rounds; prints each time, the medians and their
# ratio, and import-trace's peak resident memory.
#
#   bench/kineto_import.sh MESHWORK_CLI TRACE.json[.gz] [ROUNDS=5]
set -euo pipefail
cli="$1"
trace="$2"
rounds="${3:-5}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
ours=() peer=() rss=()
for ((i = 0; i < rounds; i++)); do
  rm -f "$work/out.sqlite"
  t0=$(date +%s.%N)
  /usr/bin/time -f "%M" -o "$work/rss" "$cli" import-trace "$trace" --out "$work/out.sqlite" >/dev/null
  t1=$(date +%s.%N)
  ours+=("$(echo "$t1 - $t0" | bc)")
  rss+=("$(cat "$work/rss")")
  peer+=("$(python3 - "$trace" <<'PY'
import gzip, json, sys, time
path = sys.argv[1]
t = time.perf_counter()
with (gzip.open(path, "rb") if path.endswith(".gz") else open(path, "rb")) as f:
    json.load(f)
print(f"{time.perf_counter() - t:.3f}")
PY
)")
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
events=$(python3 - "$trace" <<'PY'
import gzip, json, sys
path = sys.argv[1]
with (gzip.open(path, "rb") if path.endswith(".gz") else open(path, "rb")) as f:
    d = json.load(f)
print(len(d["traceEvents"] if isinstance(d, dict) else d))
PY
)
m_ours=$(median "${ours[@]}")
m_peer=$(median "${peer[@]}")
echo "file:               $trace ($events input events)"
echo "import-trace (s):   ${ours[*]}   median $m_ours   ($(echo "$events / $m_ours" | bc) events/s)"
echo "python json.load:   ${peer[*]}   median $m_peer"
echo "ratio (json.load / import-trace): $(echo "scale=2; $m_peer / $m_ours" | bc)"
echo "import-trace peak RSS (KB): ${rss[*]}"
