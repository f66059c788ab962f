#!/usr/bin/env bash
# The calibration loop on the CPU engine (docs/BENCHMARKS.md, "Calibration on the CPU
# engine"): run the tiny model as TP2 x PP2, calibrate the cpu-local cluster on that run,
# then predict other layouts of the same model and compare each prediction with runs of
# them.
#
# Robust to a change of the machine's load during the minutes the loop takes:
# - the runs go in rounds (one run of every layout per round), so that a change of load
#   falls on every layout alike rather than on the last ones;
# - the headline calibrates on the TP2 x PP2 run with the median step of the rounds and
#   compares each layout's prediction with the median of its measured steps: a typical
#   run against typical runs. The fastest run (best of N) favours the layouts whose runs
#   can catch a quiet moment (few synchronisation points); a median favours none;
# - every round also calibrates on its own TP2 x PP2 run and predicts the other layouts of
#   the same round (the cores the ranks got then are the ones the others got too, as long
#   as the load holds for the seconds a round takes): median and range of those errors;
# - the runs are pinned with taskset to CORES (default: every core of this shell's
#   affinity), so that the cores the engine records (its affinity mask) are the ones it
#   ran on;
# - the load average (/proc/loadavg, 1 minute) is printed before every round;
# - with AUTOGROUP_NICE=N (N < 0 needs CAP_SYS_NICE), each run goes into a session of its own
#   whose scheduler autogroup gets nice N. Linux with sched_autogroup_enabled = 1 shares the
#   CPU between sessions first and applies a process's nice only inside its session, so
#   other sessions' `nice -n 19` builds still take an equal share from the runs.
# Usage: bench/cpu-calibration-loop.sh [MESHWORK_CLI] [ROUNDS]   (env CORES=0-1 AUTOGROUP_NICE=-20)
# Prints the load per round, the calibration of the median run, then per layout (ms per
# step, one step = mean over the steps after the first, as `compare`): uncalibrated
# prediction and error against the median measured step; the median measured step; the
# calibrated prediction and error; the per-round errors (median and range); the error
# without the host-cores term. The last line says whether every predicted layout is within
# 20 %.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cli=${1:-$here/build-ci/app/meshwork-cli}
rounds=${2:-5}
cores=${CORES:-$(taskset -pc $$ | sed 's/.*: //')}
layout=$here/resources/layouts/tiny-cpu.json
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

layouts=("--tp 2 --pp 2 --dp 1" "--tp 2 --pp 1 --dp 2" "--tp 1 --pp 4 --dp 1"
         "--tp 1 --pp 2 --dp 2" "--tp 1 --pp 1 --dp 4")  # the first is calibrated on

# step_of PREDICTED MEASURED: "predicted_s measured_s" of the step category of `compare`.
step_of() {
    "$cli" compare "$1" "$2" --json | python3 -c \
        'import json,sys; c=json.load(sys.stdin)["categories"][0]; print(c["predicted_s"], c["measured_s"])'
}

echo "cores: $cores ($(nproc) online); autogroup: $(cat /proc/sys/kernel/sched_autogroup_enabled 2>/dev/null || echo '?')," \
     "runs at autogroup nice ${AUTOGROUP_NICE:-(unchanged)}; uptime: $(uptime)"
results=$work/results.txt  # round layout measured_s predicted_s (that round's calibration)
: > "$results"
for i in $(seq 1 "$rounds"); do
    echo "round $i: load $(cut -d' ' -f1-3 /proc/loadavg)"
    for k in "${!layouts[@]}"; do
        # shellcheck disable=SC2206
        run=(taskset -c "$cores" "$cli" run "$layout" ${layouts[$k]} --steps 8 --profile "$work/m$k-$i.sqlite")
        if [[ -n ${AUTOGROUP_NICE:-} ]]; then
            setsid -w sh -c 'echo "$0" > /proc/self/autogroup && exec "$@"' "$AUTOGROUP_NICE" "${run[@]}" > /dev/null
        else
            "${run[@]}" > /dev/null
        fi
    done
    "$cli" calibrate "$work/m0-$i.sqlite" --out "$work/c$i.json" > /dev/null
    for k in "${!layouts[@]}"; do
        # shellcheck disable=SC2086
        "$cli" simulate "$layout" ${layouts[$k]} --cluster "$work/c$i.json" --trace "$work/p.sqlite" > /dev/null
        read -r p m <<< "$(step_of "$work/p.sqlite" "$work/m$k-$i.sqlite")"
        echo "$i $k $m $p" >> "$results"
        rm -f "$work"/p.sqlite*
    done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg); uptime: $(uptime)"

# The source run with the median step of the rounds.
med=$(python3 -c '
import sys
r = [l.split() for l in open(sys.argv[1])]
steps = sorted((float(x[2]), x[0]) for x in r if x[1] == "0")
print(steps[(len(steps) - 1) // 2][1])' "$results")
echo "calibrated on round $med's TP2 x PP2 run (the median step of the rounds):"
"$cli" calibrate "$work/m0-$med.sqlite" --out "$work/median.json" | sed 's/^/    /'
# The same calibration without the host's shared cores (ranks on devices of their own):
# what the host-sharing term adds.
python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); c.pop("host_cores",None); json.dump(c,open(sys.argv[2],"w"))' \
    "$work/median.json" "$work/median-no-host.json"
: > "$work/predicted.txt"  # layout uncalibrated_s calibrated_s no_host_s
for k in "${!layouts[@]}"; do
    p=()
    for c in "" "$work/median.json" "$work/median-no-host.json"; do
        # shellcheck disable=SC2086
        "$cli" simulate "$layout" ${layouts[$k]} ${c:+--cluster "$c"} --trace "$work/p.sqlite" > /dev/null
        read -r pk _ <<< "$(step_of "$work/p.sqlite" "$work/m$k-1.sqlite")"
        p+=("$pk")
        rm -f "$work"/p.sqlite*
    done
    echo "$k ${p[*]}" >> "$work/predicted.txt"
done

python3 - "$results" "$work/predicted.txt" "${layouts[@]}" <<'PY'
import statistics as st, sys
rows = [l.split() for l in open(sys.argv[1])]
pred = {int(x[0]): [float(v) for v in x[1:]] for x in (l.split() for l in open(sys.argv[2]))}
names = sys.argv[3:]
print()
print("%-22s %-24s %9s  %-24s %-36s %s" % ("layout", "uncalibrated: pred error", "measured",
      "calibrated: pred error", "per-round calibration: median [range]", "no host cores: error"))
worst = 0.0
for k, name in enumerate(names):
    r = [(float(m), float(p)) for _, kk, m, p in rows if int(kk) == k]
    meas = st.median(m for m, _ in r)
    errs = [p / m - 1 for m, p in r]
    unc, cal, nh = pred[k]
    e = cal / meas - 1
    if k > 0:
        worst = max(worst, abs(e))
    print("%-22s %8.2f %+8.1f%%        %8.2f  %8.2f %+8.1f%%        %+7.1f%% [%+.0f .. %+.0f %%]               %+8.1f%%" % (
        name, 1e3 * unc, 100 * (unc / meas - 1), 1e3 * meas, 1e3 * cal, 100 * e,
        100 * st.median(errs), 100 * min(errs), 100 * max(errs), 100 * (nh / meas - 1)))
print("worst error of the predicted layouts (median runs): %.1f %% (%s 20 %%)" % (
    100 * worst, "within" if worst <= 0.20 else "NOT within"))
PY
