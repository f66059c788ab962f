#!/usr/bin/env python3
"""Runs `meshwork-cli stats --stragglers --json` on every real profile of
../shared/realworld/{kineto,nsys}, each imported alone, and on every set of files whose names
differ only in a rank number (rank-0, rank_1, ...) imported together as one job, and checks
that the per rank x step figures make sense whatever the source:

- exit 0 and JSON with cells[], stragglers[], transient[], steps_checked[];
- per cell: 0 <= compute_s <= step_s, 0 <= exposed_comm_s <= step_s, collective_wait_s >= 0,
  waited_for_rank null or another rank of the trace;
- a trace of one rank waits for nobody and has no stragglers (nobody to compare with);
- stragglers and one-off delays name ranks and judged steps of the trace.

Files that are not profiles (import exit 2) are left out, as realworld_traces.py checks them.

Usage: realworld_stragglers.py MESHWORK_CLI CORPUS_DIR WORK_DIR
Exit 0 when every file passes, 1 when one fails, 77 (ctest SKIP) when CORPUS_DIR is absent.
"""
import json
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

SKIP = 77
EPS = 1e-9  # seconds: the figures are nanoseconds over 1e9


def check(cli, inputs, work, label):
    out = work / (re.sub(r"[^A-Za-z0-9_.-]", "_", label) + ".sqlite")
    imp = subprocess.run([cli, "import-trace", *map(str, inputs), "--out", str(out)],
                         capture_output=True, text=True)
    if imp.returncode == 2:
        return None  # not a profile: realworld_traces.py checks the refusal
    if imp.returncode != 0:
        return [f"import exit {imp.returncode}: {imp.stderr.strip()[:200]}"]
    st = subprocess.run([cli, "stats", str(out), "--stragglers", "--json"], capture_output=True, text=True)
    if st.returncode != 0:
        return [f"stats --stragglers exit {st.returncode}: {st.stderr.strip()[:200]}"]
    j = json.loads(st.stdout)
    errors = []
    ranks = {r["rank"] for r in j["ranks"]}
    steps = set(j["steps"])
    for key in ("cells", "stragglers", "transient", "steps_checked"):
        if key not in j:
            errors.append(f"no {key}")
    for c in j.get("cells", []):
        where = f"rank {c['rank']} step {c['step']}"
        if c["rank"] not in ranks or c["step"] not in steps:
            errors.append(f"{where}: not a rank and step of the trace")
        if not (0 <= c["compute_s"] <= c["step_s"] + EPS):
            errors.append(f"{where}: compute {c['compute_s']} outside [0, step {c['step_s']}]")
        if not (0 <= c["exposed_comm_s"] <= c["step_s"] + EPS):
            errors.append(f"{where}: exposed communication {c['exposed_comm_s']} outside [0, step]")
        if c["collective_wait_s"] < 0:
            errors.append(f"{where}: negative wait")
        w = c["waited_for_rank"]
        if w is not None and (w == c["rank"] or w not in ranks):
            errors.append(f"{where}: waited for {w}")
        if len(ranks) == 1 and (c["collective_wait_s"] != 0 or w is not None):
            errors.append(f"{where}: a lone rank waited")
    for s in j.get("stragglers", []) + j.get("transient", []):
        if s["rank"] not in ranks or s["step"] not in set(j["steps_checked"]):
            errors.append(f"straggler {s} is not a rank and judged step of the trace")
    if len(ranks) == 1 and (j["stragglers"] or j["transient"]):
        errors.append("a lone rank named a straggler")
    n = len(j.get("cells", []))
    waits = sum(1 for c in j.get("cells", []) if c["waited_for_rank"] is not None)
    print(f"ok   {label}: {len(ranks)} ranks, {len(steps)} steps, {n} cells, {waits} with a wait, "
          f"{len(j['stragglers'])} straggler steps, {len(j['transient'])} one-off")
    return errors


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    cli, corpus, work = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    if not corpus.is_dir():
        print(f"SKIP: {corpus} is absent (real-world corpus beside the checkout)")
        return SKIP
    work.mkdir(parents=True, exist_ok=True)
    files = sorted(p for d in ("kineto", "nsys") if (corpus / d).is_dir() for p in (corpus / d).iterdir()
                   if p.name != "SOURCES.txt")
    if not files:
        print(f"SKIP: no profiles under {corpus}/kineto or {corpus}/nsys")
        return SKIP
    jobs = defaultdict(list)  # files whose names differ only in the rank number
    for p in files:
        jobs[(p.parent, re.sub(r"rank[-_]?\d+", "rank#", p.name))].append(p)
    runs = [([p], p.name) for p in files]
    runs += [(v, f"job {k[1]} ({len(v)} files)") for k, v in sorted(jobs.items()) if len(v) > 1]
    failed = 0
    for inputs, label in runs:
        errors = check(cli, inputs, work, label)
        if errors:
            failed += 1
            print(f"FAIL {label}:")
            for e in errors[:10]:
                print(f"     {e}")
    print(f"{len(runs) - failed} of {len(runs)} passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
