#!/usr/bin/env bash
# The calibration loop on the CPU engine (docs/BENCHMARKS.md, "Calibration on the CPU
# engine"): run the tiny model as TP2 x PP2, calibrate the cpu-local cluster on that run,
# then predict other layouts of the same model and compare each prediction with a run of
# it. Every layout runs RUNS times (default 5) and the fastest run counts: shared hosts are
# noisy, and the fastest run is the one least disturbed by other processes. The runs go in
# rounds (one run of every layout per round), so that a change of the machine's load over
# the minutes the loop takes falls on every layout alike rather than on the last ones.
# Usage: bench/cpu-calibration-loop.sh [MESHWORK_CLI] [RUNS]
# Prints the calibration, then per layout: uncalibrated prediction, measured step, error;
# calibrated prediction and error (ms per step, one step = mean over the steps after the
# first, as `compare`).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cli=${1:-$here/build-ci/app/meshwork-cli}
runs=${2:-5}
layout=$here/resources/layouts/tiny-cpu.json
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

layouts=("--tp 2 --pp 2 --dp 1" "--tp 2 --pp 1 --dp 2" "--tp 1 --pp 4 --dp 1"
         "--tp 1 --pp 2 --dp 2" "--tp 1 --pp 1 --dp 4")  # the first is calibrated on

# mean_step TRACE: mean over ranks of one step (stats --json ranks[].step_s), in seconds.
mean_step() {
    "$cli" stats "$1" --json | python3 -c \
        'import json,sys; r=json.load(sys.stdin)["ranks"]; print(sum(x["step_s"] for x in r)/len(r))'
}

# step_error PREDICTED MEASURED: "predicted_ms measured_ms error%" of the step category.
step_error() {
    "$cli" compare "$1" "$2" --json | python3 -c \
        'import json,sys; c=json.load(sys.stdin)["categories"][0]; print("%.2f %.2f %+.1f%%" % (1e3*c["predicted_s"], 1e3*c["measured_s"], 100*c["error"]))'
}

declare -a best best_s
for i in $(seq 1 "$runs"); do
    for k in "${!layouts[@]}"; do
        t=$work/l$k-$i.sqlite
        # shellcheck disable=SC2086
        "$cli" run "$layout" ${layouts[$k]} --steps 8 --profile "$t" > /dev/null
        s=$(mean_step "$t")
        if [[ -z ${best_s[$k]:-} ]] || python3 -c "import sys; sys.exit(0 if $s < ${best_s[$k]} else 1)"; then
            [[ -n ${best[$k]:-} ]] && rm -f "${best[$k]}"
            best[$k]=$t best_s[$k]=$s
        else
            rm -f "$t"
        fi
    done
done

"$cli" calibrate "${best[0]}" --out "$work/calibrated.json"
# The same calibration without the host's shared cores (ranks on devices of their own):
# what the host-sharing term adds.
python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); c.pop("host_cores",None); json.dump(c,open(sys.argv[2],"w"))' \
    "$work/calibrated.json" "$work/calibrated-no-host.json"
echo
printf '%-22s %-34s %-28s %s\n' layout "uncalibrated: predicted measured error" "calibrated: predicted error" \
    "without host cores: predicted error"
for k in "${!layouts[@]}"; do
    flags=${layouts[$k]}
    # shellcheck disable=SC2086
    "$cli" simulate "$layout" $flags --trace "$work/p0.sqlite" > /dev/null
    # shellcheck disable=SC2086
    "$cli" simulate "$layout" $flags --cluster "$work/calibrated.json" --trace "$work/p1.sqlite" > /dev/null
    read -r p0 m e0 <<< "$(step_error "$work/p0.sqlite" "${best[$k]}")"
    # shellcheck disable=SC2086
    "$cli" simulate "$layout" $flags --cluster "$work/calibrated-no-host.json" --trace "$work/p2.sqlite" > /dev/null
    read -r p1 _ e1 <<< "$(step_error "$work/p1.sqlite" "${best[$k]}")"
    read -r p2 _ e2 <<< "$(step_error "$work/p2.sqlite" "${best[$k]}")"
    printf '%-22s %8s %8s %8s              %8s %8s              %8s %8s\n' "$flags" "$p0" "$m" "$e0" "$p1" "$e1" "$p2" "$e2"
    rm -f "$work"/p0.sqlite* "$work"/p1.sqlite* "$work"/p2.sqlite*
done
