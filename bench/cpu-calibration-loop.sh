#!/usr/bin/env bash
# The calibration loop on the CPU engine (docs/BENCHMARKS.md, "Calibration on the CPU
# engine"): run the tiny model as TP2 x PP2, calibrate the cpu-local cluster on that run,
# then predict other layouts of the same model and compare each prediction with a run of
# it.
#
# Robust to a change of the machine's load during the minutes the loop takes:
# - the runs go in rounds (one run of every layout per round), so that a change of load
#   falls on every layout alike rather than on the last ones;
# - every round calibrates on its own TP2 x PP2 run and predicts the other layouts of the
#   same round: the fitted share of the host's cores is the one the other layouts got too;
# - per layout the figures are the medians over the rounds (measured step, calibrated
#   prediction, error), not the fastest run: a minimum favours the layouts whose runs can
#   catch a quiet moment (few synchronisation points), a median favours none;
# - the runs are pinned with taskset to CORES (default: every core of this shell's
#   affinity), so that the cores the engine records (its affinity mask) are the ones it
#   ran on;
# - the load average (/proc/loadavg, 1 minute) is printed before every round;
# - with AUTOGROUP_NICE=N (N < 0 needs CAP_SYS_NICE), each run goes into a session of its own
#   whose scheduler autogroup gets nice N. Linux with sched_autogroup_enabled = 1 shares the
#   CPU between sessions first and applies a process's nice only inside its session, so
#   other sessions' `nice -n 19` builds still take an equal share from the runs.
# Usage: bench/cpu-calibration-loop.sh [MESHWORK_CLI] [ROUNDS]   (env CORES=0-1 AUTOGROUP_NICE=-20)
# Prints per round the load and the fits, then per layout: uncalibrated prediction and
# error against the median measured step; median measured step; median calibrated
# prediction and error, with the range of the rounds' errors; median error without the
# host-cores term (ms per step, one step = mean over the steps after the first, as
# `compare`). The last line says whether every layout's median error is within 20 %.
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
results=$work/results.txt  # round layout measured_s calibrated_s no_host_s
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
    "$cli" calibrate "$work/m0-$i.sqlite" --out "$work/c$i.json" | sed 's/^/    /'
    # The same calibration without the host's shared cores (ranks on devices of their own):
    # what the host-sharing term adds.
    python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); c.pop("host_cores",None); json.dump(c,open(sys.argv[2],"w"))' \
        "$work/c$i.json" "$work/c$i-no-host.json"
    for k in "${!layouts[@]}"; do
        # shellcheck disable=SC2086
        "$cli" simulate "$layout" ${layouts[$k]} --cluster "$work/c$i.json" --trace "$work/p1.sqlite" > /dev/null
        # shellcheck disable=SC2086
        "$cli" simulate "$layout" ${layouts[$k]} --cluster "$work/c$i-no-host.json" --trace "$work/p2.sqlite" > /dev/null
        read -r p1 m <<< "$(step_of "$work/p1.sqlite" "$work/m$k-$i.sqlite")"
        read -r p2 _ <<< "$(step_of "$work/p2.sqlite" "$work/m$k-$i.sqlite")"
        echo "$i $k $m $p1 $p2" >> "$results"
        rm -f "$work"/p1.sqlite* "$work"/p2.sqlite*
    done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg); uptime: $(uptime)"

# Uncalibrated predictions (the preset cpu-local): one per layout, the load does not enter.
for k in "${!layouts[@]}"; do
    # shellcheck disable=SC2086
    "$cli" simulate "$layout" ${layouts[$k]} --trace "$work/p0-$k.sqlite" > /dev/null
    read -r p0 _ <<< "$(step_of "$work/p0-$k.sqlite" "$work/m$k-1.sqlite")"
    echo "$k $p0" >> "$work/uncalibrated.txt"
done

python3 - "$results" "$work/uncalibrated.txt" "${layouts[@]}" <<'EOF'
import statistics as st, sys
rows = [l.split() for l in open(sys.argv[1])]
unc = {int(k): float(p) for k, p in (l.split() for l in open(sys.argv[2]))}
names = sys.argv[3:]
print()
print("%-22s %-26s %9s  %-38s %s" % ("layout", "uncalibrated: pred error", "measured",
      "calibrated: pred error [rounds]", "no host cores: error"))
worst = 0.0
for k, name in enumerate(names):
    r = [(float(m), float(p1), float(p2)) for _, kk, m, p1, p2 in rows if int(kk) == k]
    meas = st.median(m for m, _, _ in r)
    errs = [p1 / m - 1 for m, p1, _ in r]
    errs_nh = [p2 / m - 1 for m, _, p2 in r]
    e = st.median(errs)
    if k > 0:
        worst = max(worst, abs(e))
    print("%-22s %8.2f %+8.1f%%          %8.2f  %8.2f %+7.1f%% [%+.0f … %+.0f %%]       %+8.1f%%" % (
        name, 1e3 * unc[k], 100 * (unc[k] / meas - 1), 1e3 * meas,
        1e3 * st.median(p1 for _, p1, _ in r), 100 * e, 100 * min(errs), 100 * max(errs),
        100 * st.median(errs_nh)))
print("worst median error of the predicted layouts: %.1f %% (%s 20 %%)" % (
    100 * worst, "within" if worst <= 0.20 else "NOT within"))
EOF
