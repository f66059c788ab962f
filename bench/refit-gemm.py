#!/usr/bin/env python3
"""Refit the sustained per-tensor fp8 GEMM efficiency of the Hopper and Blackwell architectures
(kSustained in core/cost/gemm_efficiency.cpp) on the fitted rows of tst_cost_h100_runs
(docs/cost-model.md, "H100-era runs: fitted and held back").

The rule (one number per preset, from the fitted rows only): for each preset group, the
value of `efficiency.gemm`, in steps of 0.01, whose largest |error| over the group's fitted
rows is the smallest. dgx-h200 shares dgx-h100's value (the same Hopper SMs), so both files
get every candidate value; dgx-b200 is fitted on its own rows. A row belongs to the group of
the cluster its layout runs on (the test prints it). The held-back rows are never read.

Each candidate runs the test binary on a copy of resources/ (MESHWORK_RESOURCES) with only
the preset's `gemm` changed, selecting the group's fitted rows; the test's tolerance
failures are expected while scanning and ignored (the printed figures are what counts).

Usage: bench/refit-gemm.py [TST_COST_H100_RUNS] [--from 0.30] [--to 0.80] [--apply]
  --apply  says where the chosen values go (kSustained; the presets state no gemm).
Prints, per group, the scanned values near the best, and the chosen value.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Presets that share a group's SMs take its value (dgx-h200 and grand-teton-h100: Hopper, a test
# keeps grand-teton's efficiencies dgx-h100's; gb200-nvl72: Blackwell, docs/cost-model.md);
# the first of each group is the one its fitted rows run on. A preset missing from resources/
# is skipped.
GROUPS = {"dgx-h100": ["dgx-h100", "dgx-h200", "grand-teton-h100"], "dgx-b200": ["dgx-b200", "gb200-nvl72"]}
LINE = re.compile(r"h100_era_runs\((?P<tag>.*?)\) (?P=tag) \[(?P<kind>fitted|held back), cluster (?P<cluster>[^\]]+)\]: "
                  r"published (?P<pub>[0-9.]+) s, estimate (?P<est>[0-9.]+) s")
GEMM = re.compile(r'("gemm"\s*:\s*)([0-9.]+)')


def run_rows(binary, resources, tags):
    args = [binary] + [f"h100_era_runs:{t}" for t in tags]
    env = dict(os.environ, MESHWORK_RESOURCES=resources, QT_QPA_PLATFORM="offscreen")
    out = subprocess.run(args, capture_output=True, text=True, env=env)
    rows = {}
    for line in (out.stdout + out.stderr).splitlines():
        m = LINE.search(line)
        if m:
            rows[m["tag"]] = (m["kind"], m["cluster"], float(m["pub"]), float(m["est"]))
    if not rows:
        sys.exit(f"no rows printed by {binary} (exit {out.returncode}):\n{out.stdout[-2000:]}{out.stderr[-2000:]}")
    return rows


def set_gemm(path, value):
    """States efficiency.gemm in a copy of a preset (value None: states none, as the presets
    do since the kernel table, core/cost/gemm_efficiency.cpp)."""
    with open(path) as f:
        cluster = json.load(f)
    if value is None:
        cluster["efficiency"].pop("gemm", None)
    else:
        cluster["efficiency"]["gemm"] = round(value, 2)
    with open(path, "w") as f:
        json.dump(cluster, f, indent=2)


def current_gemm(path):
    with open(path) as f:
        m = GEMM.search(f.read())
    return float(m[2]) if m else None


def main():
    for group in GROUPS:
        GROUPS[group] = [p for p in GROUPS[group] if os.path.exists(os.path.join(HERE, "resources", "clusters", p + ".json"))]
    argv = sys.argv[1:]
    def opt(name, default):
        if name in argv:
            i = argv.index(name)
            value = argv[i + 1]
            del argv[i:i + 2]
            return float(value)
        return default
    lo, hi = opt("--from", 0.30), opt("--to", 0.80)
    apply = "--apply" in argv
    argv = [a for a in argv if a != "--apply"]
    binary = argv[0] if argv else os.path.join(HERE, "build-ci/tests/core/cost/tst_cost_h100_runs")
    src = os.path.join(HERE, "resources")

    # Which rows are fitted, on which cluster (one run at the current values).
    everything = run_rows(binary, src, [])
    chosen = {}
    with tempfile.TemporaryDirectory() as tmp:
        res = os.path.join(tmp, "resources")
        shutil.copytree(src, res)
        for group, presets in GROUPS.items():
            tags = [t for t, (kind, cluster, _, _) in everything.items() if kind == "fitted" and cluster in presets]
            if not tags:
                print(f"{group}: no fitted rows")
                continue
            before = current_gemm(os.path.join(src, "clusters", presets[0] + ".json"))
            scan = []
            steps = int(round((hi - lo) / 0.01))
            for i in range(steps + 1):
                value = round(lo + 0.01 * i, 2)
                for p in presets:
                    set_gemm(os.path.join(res, "clusters", p + ".json"), value)
                rows = run_rows(binary, res, tags)
                errors = {t: rows[t][3] / rows[t][2] - 1 for t in tags}
                scan.append((max(abs(e) for e in errors.values()), value, errors))
            for p in presets:  # back to the current value for the next group's scan
                set_gemm(os.path.join(res, "clusters", p + ".json"), before)
            best = min(scan)  # smallest largest |error|; ties: the smaller value
            chosen[group] = best[1]
            print(f"{group} (also {', '.join(presets[1:]) or 'no other preset'}): current gemm "
                  + (f"{before:.2f}" if before is not None else "not stated (the kernel table's sustained figure)"))
            at = [s[1] for s in scan].index(best[1])
            for worst, value, errors in scan[max(0, at - 3):at + 4]:
                cells = ", ".join(f"{100 * e:+.2f}%" for e in errors.values())
                mark = "  <- chosen" if value == best[1] else ""
                print(f"  gemm {value:.2f}: largest |error| {100 * worst:.2f}%  ({cells}){mark}")
            print(f"  rows: {'; '.join(tags)}")
    for group, value in chosen.items():
        print(f"chosen: {group} {value:.2f}" + (f" (also {', '.join(GROUPS[group][1:])})" if GROUPS[group][1:] else ""))
    if apply:
        # The fitted rows are per-tensor fp8: the value is the architecture's sustained fp8
        # figure, kSustained in core/cost/gemm_efficiency.cpp (the presets state no gemm, so
        # that every precision keeps the kernel tables' ratio to it).
        print("--apply: write the chosen values into kSustained in core/cost/gemm_efficiency.cpp "
              "(dgx-h100: hopper, dgx-b200: blackwell); the presets state no gemm")


if __name__ == "__main__":
    main()
