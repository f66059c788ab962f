#!/usr/bin/env bash
# The calibration loop on the CPU engine (docs/BENCHMARKS.md, "Calibration on the CPU
# engine"): run the tiny model as TP2 x PP2, calibrate the cpu-local cluster on that run,
# then predict other layouts of the same model and compare each prediction with runs of
# them.
#
# Robust to a change of the machine's load during the minutes the loop takes:
# - pairs: every run of a predicted layout comes right after a run of TP2 x PP2 (the source)
#   and is predicted from the calibration on that source run, so that both saw the same
#   load (a second apart); the rounds repeat the pairs, one of every layout per round;
# - per layout the headline is the median over the rounds of the paired errors, with their
#   range, not the fastest run: the fastest run (best of N) favours the layouts whose runs
#   can catch a quiet moment (few synchronisation points), a median favours none;
# - the runs are pinned with taskset to CORES (default: every core of this shell's
#   affinity), so that the cores the engine records (its affinity mask) are the ones it
#   ran on;
# - the load average (/proc/loadavg, 1 minute) is printed before every round;
# - with AUTOGROUP_NICE=N (N < 0 needs CAP_SYS_NICE), each run goes into a session of its own
#   whose scheduler autogroup gets nice N. Linux with sched_autogroup_enabled = 1 shares the
#   CPU between sessions first and applies a process's nice only inside its session, so
#   other sessions' `nice -n 19` builds still take an equal share from the runs.
# - every run takes STEPS steps (default 60) and the first WARMUP of them (default 20) are
#   left out of every per-step figure (`compare` and `calibrate --warmup-steps`): on this
#   2-vCPU VM every fresh process's steps run 1.3-1.7x their steady time for its first
#   100-150 ms (docs/BENCHMARKS.md, "Warm-up of a fresh process"), which 20-step runs with
#   one warm-up step had mostly measured.
# Run it in a session of its own at autogroup nice 0 (`setsid -w bench/...`): a shell whose
# session once wrote 19 to /proc/self/autogroup runs everything at that nice.
# - WORKLOAD (e.g. "--seq 64 --gbs 16 --mbs 2") sets the size of every predicted run and
#   prediction, SOURCE_WORKLOAD (default WORKLOAD) that of the TP2 x PP2 run calibrated on:
#   calibrate on one size, predict another (issue 28, pattern 6). Empty: tiny-cpu.json's.
# - every pair is also predicted from a calibration with `--measure-gemm` (the GEMM curve's
#   shape timed on this host, the level from the source run): the last column.
# Usage: bench/cpu-calibration-loop.sh [MESHWORK_CLI] [ROUNDS]   (env CORES=0-1 AUTOGROUP_NICE=-20 STEPS=60 WARMUP=20
#        WORKLOAD=... SOURCE_WORKLOAD=...)
# Prints the load per round, one source calibration (that of the median source run), then
# per layout (ms per step, one step = mean over the steps after the warm-up ones, as `compare`):
# uncalibrated prediction and error against the median measured step; the median measured
# step; the median calibrated prediction; the median paired error and its range; the same
# without the host-cores term, and without the threads' CPU outside compute ops
# (host_cpu_per_layer_pass_s), and with `calibrate --measure-gemm`. The last two lines say
# whether every predicted layout's median paired error is within 20 % (without and with it).
# The width step: WORKLOAD="--model $PWD/bench/tiny-wide.json ..." (the tiny model at twice
# the width; an absolute path, the runs start elsewhere).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cli=${1:-$here/build-ci/app/meshwork-cli}
rounds=${2:-5}
steps=${STEPS:-60}
warmup=${WARMUP:-20}
cores=${CORES:-$(taskset -pc $$ | sed 's/.*: //')}
layout=$here/resources/layouts/tiny-cpu.json
workload=${WORKLOAD:-}
source_workload=${SOURCE_WORKLOAD:-$workload}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

layouts=("--tp 2 --pp 2 --dp 1" "--tp 2 --pp 1 --dp 2" "--tp 1 --pp 4 --dp 1"
         "--tp 1 --pp 2 --dp 2" "--tp 1 --pp 1 --dp 4")  # the first is calibrated on

# step_of PREDICTED MEASURED: "predicted_s measured_s" of the step category of `compare`.
step_of() {
    "$cli" compare "$1" "$2" --warmup-steps "$warmup" --json | python3 -c \
        'import json,sys; c=json.load(sys.stdin)["categories"][0]; print(c["predicted_s"], c["measured_s"])'
}

echo "cores: $cores ($(nproc) online); autogroup: $(cat /proc/sys/kernel/sched_autogroup_enabled 2>/dev/null || echo '?')," \
     "runs at autogroup nice ${AUTOGROUP_NICE:-(unchanged: $(cat /proc/self/autogroup 2>/dev/null || echo '?'))}; $steps steps a run, the first $warmup warm-up; uptime: $(uptime)"
echo "workload: ${workload:-that of tiny-cpu.json}; calibrated on: ${source_workload:-that of tiny-cpu.json}"
results=$work/results.txt  # round layout measured_s predicted_s no_host_s no_overhead_s source_step_s host_gemm_s
: > "$results"
# run_layout K TRACE [WORKLOAD]: one run of layout K into TRACE.
run_layout() {
    # shellcheck disable=SC2206
    local run=(taskset -c "$cores" "$cli" run "$layout" ${layouts[$1]} ${3-$workload} --steps "$steps" --profile "$2")
    if [[ -n ${AUTOGROUP_NICE:-} ]]; then
        setsid -w sh -c 'echo "$0" > /proc/self/autogroup && exec "$@"' "$AUTOGROUP_NICE" "${run[@]}" > /dev/null
    else
        "${run[@]}" > /dev/null
    fi
}
for i in $(seq 1 "$rounds"); do
    echo "round $i: load $(cut -d' ' -f1-3 /proc/loadavg)"
    for k in "${!layouts[@]}"; do
        src=$work/s$k-$i.sqlite
        run_layout 0 "$src" "$source_workload"
        if ((k == 0)) && [[ $source_workload == "$workload" ]]; then
            cp "$src" "$work/m0-$i.sqlite"  # the source predicts itself
        else
            run_layout "$k" "$work/m$k-$i.sqlite"
        fi
        "$cli" calibrate "$src" --warmup-steps "$warmup" --out "$work/c.json" > /dev/null
        "$cli" calibrate "$src" --warmup-steps "$warmup" --measure-gemm --out "$work/c-gemm.json" > /dev/null
        # The same calibration without the host's shared cores (ranks on devices of their
        # own): what the host-sharing term adds.
        python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); c.pop("host_cores",None); json.dump(c,open(sys.argv[2],"w"))' \
            "$work/c.json" "$work/c-no-host.json"
        # ... and without the threads' CPU outside compute ops.
        python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); c.pop("host_cpu_per_layer_pass_s",None); json.dump(c,open(sys.argv[2],"w"))' \
            "$work/c.json" "$work/c-no-overhead.json"
        p=()
        for c in "$work/c.json" "$work/c-no-host.json" "$work/c-no-overhead.json" "$work/c-gemm.json"; do
            # shellcheck disable=SC2086
            "$cli" simulate "$layout" ${layouts[$k]} $workload --cluster "$c" --trace "$work/p.sqlite" > /dev/null
            read -r pk m <<< "$(step_of "$work/p.sqlite" "$work/m$k-$i.sqlite")"
            p+=("$pk")
            rm -f "$work"/p.sqlite*
        done
        read -r _ ms <<< "$(step_of "$work/m0-$i.sqlite" "$src")"
        echo "$i $k $m ${p[0]} ${p[1]} ${p[2]} $ms ${p[3]}" >> "$results"
        ((k == 0)) || rm -f "$src"*
    done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg); uptime: $(uptime)"

# One calibration shown in full: that of the source run with the median step.
med=$(python3 -c '
import sys
r = [l.split() for l in open(sys.argv[1])]
steps = sorted((float(x[2]), x[0]) for x in r if x[1] == "0")
print(steps[(len(steps) - 1) // 2][1])' "$results")
echo "calibration on round $med's TP2 x PP2 run (the median step of the source runs):"
"$cli" calibrate "$work/m0-$med.sqlite" --warmup-steps "$warmup" --out "$work/median.json" | sed 's/^/    /'
: > "$work/uncalibrated.txt"
for k in "${!layouts[@]}"; do
    # shellcheck disable=SC2086
    "$cli" simulate "$layout" ${layouts[$k]} $workload --trace "$work/p.sqlite" > /dev/null
    read -r pk _ <<< "$(step_of "$work/p.sqlite" "$work/m$k-1.sqlite")"
    echo "$k $pk" >> "$work/uncalibrated.txt"
    rm -f "$work"/p.sqlite*
done

python3 - "$results" "$work/uncalibrated.txt" "${layouts[@]}" <<'PY'
import statistics as st, sys
rows = [l.split() for l in open(sys.argv[1])]
unc = {int(k): float(p) for k, p in (l.split() for l in open(sys.argv[2]))}
names = sys.argv[3:]
print()
print("%-22s %-24s %9s %10s  %-32s %s" % ("layout", "uncalibrated: pred error", "measured",
      "calibrated", "paired error: median [range]", "median error: no host cores, no CPU outside compute; --measure-gemm [range]"))
worst = worst_gemm = 0.0
for k, name in enumerate(names):
    r = [(float(m), float(p), float(nh)) for _, kk, m, p, nh, _, _, _ in rows if int(kk) == k]
    no_overhead = st.median(float(no) / float(m) - 1 for _, kk, m, _, _, no, _, _ in rows if int(kk) == k)
    ge = [float(g) / float(m) - 1 for _, kk, m, _, _, _, _, g in rows if int(kk) == k]
    meas = st.median(m for m, _, _ in r)
    errs = [p / m - 1 for m, p, _ in r]
    e = st.median(errs)
    if k > 0:
        worst = max(worst, abs(e))
        worst_gemm = max(worst_gemm, abs(st.median(ge)))
    print("%-22s %8.2f %+8.1f%%        %8.2f   %8.2f  %+7.1f%% [%+.0f .. %+.0f %%]            %+8.1f%%  %+8.1f%%  %+8.1f%% [%+.0f .. %+.0f %%]" % (
        name, 1e3 * unc[k], 100 * (unc[k] / meas - 1), 1e3 * meas, 1e3 * st.median(p for _, p, _ in r),
        100 * e, 100 * min(errs), 100 * max(errs), 100 * st.median(nh / m - 1 for m, _, nh in r), 100 * no_overhead,
        100 * st.median(ge), 100 * min(ge), 100 * max(ge)))
src = [float(x[6]) for x in rows if x[1] != "0"]
print("source (TP2 x PP2) runs paired with the others: median %.2f ms [%.2f .. %.2f]" % (
    1e3 * st.median(src), 1e3 * min(src), 1e3 * max(src)))
print("worst median paired error of the predicted layouts: %.1f %% (%s 20 %%)" % (
    100 * worst, "within" if worst <= 0.20 else "NOT within"))
print("... with --measure-gemm: %.1f %% (%s 20 %%)" % (
    100 * worst_gemm, "within" if worst_gemm <= 0.20 else "NOT within"))
PY
