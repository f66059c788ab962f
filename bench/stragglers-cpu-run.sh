#!/usr/bin/env bash
# Issue 18's acceptance as a measurement (moved out of ctest by issue 31: the figures depend
# on how the machine schedules 8 rank threads, so a loaded machine failed a bound on them):
# a CPU run of 8 data-parallel ranks of the tiny model with rank 5's compute slowed 2x, then
# stats --stragglers. Prints which ranks were named, in how many of the judged steps, and the
# compute slowdowns (CPU time) of the named steps.
#
#   bench/stragglers-cpu-run.sh [BUILD_DIR] [STEPS]    (default build-ci, 40 steps)
set -euo pipefail
build=${1:-build-ci}
steps=${2:-40}
cli="$build/app/meshwork-cli"
[[ -x $cli ]] || cli=$(find "$build" -name meshwork-cli -type f -perm -u+x | head -1)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$cli" run --model tiny --dp 8 --gpus 8 --seq 64 --mbs 2 --gbs 16 --steps "$steps" \
  --profile "$tmp/slow5.sqlite" --slow-rank 5:2.0 >/dev/null
"$cli" stats "$tmp/slow5.sqlite" --stragglers --json > "$tmp/report.json"
python3 - "$tmp/report.json" <<'PY'
import json, statistics, sys
j = json.load(open(sys.argv[1]))
s = j["stragglers"]
named = sorted({x["rank"] for x in s})
slow = [x["slowdown"] for x in s if x["reason"] == "compute"]
waits = [c for c in j["cells"] if c["rank"] != 5 and c["step"] != j["steps"][0]]
print(f"steps judged: {len(j['steps_checked'])}; straggler steps: {len(s)}; ranks named: {named}")
if slow:
    print(f"compute slowdown (CPU time): median {statistics.median(slow):.3f}, min {min(slow):.3f}, max {max(slow):.3f}")
print(f"peer cells that waited longest for rank 5: {sum(c['waited_for_rank'] == 5 for c in waits)} of {len(waits)}")
PY
