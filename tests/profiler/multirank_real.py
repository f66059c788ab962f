#!/usr/bin/env python3
"""Real multi-rank profiles (tests/fixtures/multirank/*/, reduced by reduce_kineto_trace.py,
SOURCES.txt there) imported as one job with meshwork-cli, and judged against figures computed
here, independently, from the same files by Holistic Trace Analysis' rules:

- alignment: every file has absolute times, so each rank's offset is its first event's time
  less the earliest rank's (merge's "start-time" alignment);
- per rank: |union(compute)| and |union(communication)| of device work (HTA's temporal
  breakdown), to the nanosecond; device events counted;
- steps as HTA assigns iterations (hta/common/trace.py add_iteration): a device event has the
  ProfilerStep#N whose window holds the start of its launch (the cuda_runtime / cuda_driver
  event with its correlation id), on any thread; none when its launch is not in the file;
  per rank x step: the step's extent (first device event to last) and |union(compute)|;
  the device events in no step counted;
- collective wait (docs/profiler.md): the n-th call of a collective kind in a step on each
  rank is one call; a rank waits from its start to the group's latest start, at most its own
  time in the call; send/recv and calls of unknown kind are left out. With no wait, no rank
  is a straggler or a one-off delay;
- collective kinds: the count of communication kernels per kind (from the NCCL name, else the
  kernel's "Collective name" arg) against stats' collectives table; a call of unknown size
  has no algbw or busbw, a sized one busbw = algbw x nccl-tests' bus factor for its group.

Each set is read two ways that must agree: all ranks in one import-trace, and each rank
imported alone then joined with `meshwork-cli merge`.

Usage: multirank_real.py MESHWORK_CLI FIXTURES_DIR WORK_DIR
Exit 0 when every set passes, 1 when one fails.
"""
import gzip
import json
import re
import subprocess
import sys
from collections import defaultdict
from decimal import Decimal
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from realworld_traces import kernel_class, union_ns  # noqa: E402

DEVICE = {"kernel", "gpu_memcpy", "gpu_memset", "memcpy", "memset"}  # PyTorch 1.8: Memcpy, Memset
LAUNCH = {"cuda_runtime", "cuda_driver", "hip_runtime", "runtime"}
NCCL_WORDS = {"AllReduce": "all_reduce", "AllGather": "all_gather", "ReduceScatter": "reduce_scatter",
              "Broadcast": "broadcast", "Reduce": "reduce", "AllToAll": "all_to_all", "SendRecv": "send_recv",
              "Send": "send", "Recv": "recv"}


# nccl-tests' bus factors (doc/PERFORMANCE.md), n ranks in the group.
BUS_FACTOR = {"all_reduce": lambda n: 2 * (n - 1) / n, "all_gather": lambda n: (n - 1) / n,
              "reduce_scatter": lambda n: (n - 1) / n, "all_to_all": lambda n: (n - 1) / n}
ARG_WORDS = {"allreduce": "all_reduce", "allgather": "all_gather", "reducescatter": "reduce_scatter",
             "broadcast": "broadcast", "reduce": "reduce", "alltoall": "all_to_all", "sendrecv": "send_recv",
             "send": "send", "recv": "recv"}


def ns(v):
    return int((Decimal(str(v)) * 1000).to_integral_value(rounding="ROUND_HALF_UP"))


def collective_kind(name):
    tag = re.search(r" \[([a-z_]+)\]$", name)
    if tag:
        return tag.group(1)
    m = re.match(r"(?:void )?n?r?ccl(?:Dev)?Kernel_([A-Za-z]+)", name)
    return NCCL_WORDS.get(m.group(1)) if m else None


def read_rank(path):
    with gzip.open(path, "rb") as f:
        data = json.loads(f.read(), parse_float=Decimal)
    events = [e for e in data["traceEvents"] if e.get("ph") == "X" and str(e.get("cat", "")).lower() != "trace"]
    first = min(ns(e["ts"]) for e in events)
    steps = sorted((ns(e["ts"]), ns(e["ts"]) + ns(e.get("dur", 0)), int(e["name"].split("#")[1]))
                   for e in events if e["name"].startswith("ProfilerStep#"))
    launch = {e["args"]["correlation"]: ns(e["ts"]) for e in events
              if str(e.get("cat", "")).lower() in LAUNCH and "correlation" in e.get("args", {})}

    def step_of(t):
        # HTA's _get_profiler_step: the last window (in start order) that holds t; windows
        # may overlap (a gpu_user_annotation copy of a step, steps on two threads).
        found = -1
        for start, end, step in steps:
            if start <= t < end:
                found = step
        return found

    device = []
    for e in events:
        cat = str(e.get("cat", "")).lower()
        if cat not in DEVICE:
            continue
        s = ns(e["ts"])
        d = s + ns(e.get("dur", 0))
        cls = kernel_class(e["name"], cat)
        corr = e.get("args", {}).get("correlation")
        step = step_of(launch[corr]) if corr in launch else -1
        kind = collective_kind(e["name"])
        if kind is None and cls == "comm":
            word = str(e.get("args", {}).get("Collective name", "")).lower().replace("_", "")
            kind = ARG_WORDS.get(word)
        device.append({"start": s, "end": d, "cls": cls, "step": step, "name": e["name"], "kind": kind})
    return {"rank": data["distributedInfo"]["rank"], "first": first, "device": device}


def expected(ranks):
    out = {"offsets": {}, "ranks": {}, "cells": {}, "kinds": defaultdict(int)}
    for r in ranks:
        for e in r["device"]:
            if e["cls"] == "comm":
                out["kinds"][e["kind"] or "other"] += 1
    earliest = min(r["first"] for r in ranks)
    for r in ranks:
        out["offsets"][r["rank"]] = r["first"] - earliest
        dev = r["device"]
        by_step = defaultdict(list)
        for e in dev:
            if e["step"] >= 0:
                by_step[e["step"]].append(e)
        out["ranks"][r["rank"]] = {
            "events": len(dev),
            "compute_ns": union_ns([(e["start"], e["end"]) for e in dev if e["cls"] == "compute"]),
            "comm_ns": union_ns([(e["start"], e["end"]) for e in dev if e["cls"] == "comm"]),
            "steps": sorted(by_step),
            "outside_steps_events": len(dev) - sum(len(v) for v in by_step.values()) if by_step else 0,
        }
        for step, evs in by_step.items():
            out["cells"][(r["rank"], step)] = {
                "step_ns": max(e["end"] for e in evs) - min(e["start"] for e in evs),
                "compute_ns": union_ns([(e["start"], e["end"]) for e in evs if e["cls"] == "compute"]),
                "wait_ns": 0,
            }
    # Collective wait: the n-th call of a kind in a step, on every rank that has it.
    calls = defaultdict(dict)
    for r in ranks:
        seen = defaultdict(int)
        for e in sorted((e for e in r["device"] if e["cls"] == "comm" and e["step"] >= 0), key=lambda e: e["start"]):
            kind = e["kind"]
            if kind in (None, "send", "recv", "send_recv"):
                continue
            key = (e["step"], kind, seen[(e["step"], kind)])
            seen[(e["step"], kind)] += 1
            calls[key][r["rank"]] = e
    for (step, _, _), by_rank in calls.items():
        if len(by_rank) < 2:
            continue
        latest = max(e["start"] for e in by_rank.values())
        for rank, e in by_rank.items():
            out["cells"][(rank, step)]["wait_ns"] += min(latest - e["start"], e["end"] - e["start"])
    return out


def close(a_s, b_ns, what, problems):
    # Seconds travel through JSON doubles: allow 2 ns of rounding.
    if abs(round(a_s * 1e9) - b_ns) > 2:
        problems.append(f"{what}: meshwork {a_s * 1e9:.0f} ns, expected {b_ns} ns")


def run_json(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[1:3])} exit {r.returncode}: {r.stderr.strip()}")
    return json.loads(r.stdout)


def imported_together(cli, files, work, name):
    out = work / (name + ".sqlite")
    out.unlink(missing_ok=True)
    imp = run_json([cli, "import-trace", *map(str, files), "--out", str(out), "--json"])
    return out, {f["rank"]: (f["offset_ns"], f["alignment"]) for f in imp["files"]}


def imported_then_merged(cli, files, work, name):
    parts = []
    for i, f in enumerate(files):
        part = work / f"{name}.part{i}.sqlite"
        part.unlink(missing_ok=True)
        run_json([cli, "import-trace", str(f), "--out", str(part), "--json"])
        parts.append(part)
    out = work / (name + ".merged.sqlite")
    out.unlink(missing_ok=True)
    m = run_json([cli, "merge", *map(str, parts), "--out", str(out), "--json"])
    return out, {i["ranks"][0]: (i["offset_ns"], i["alignment"]) for i in m["inputs"]}


def check_set(cli, folder, work):
    files = sorted(folder.glob("rank-*.json.gz"))
    want = expected([read_rank(f) for f in files])
    problems = []
    for how, build in (("import-trace", imported_together), ("merge", imported_then_merged)):
        try:
            out, offsets = build(cli, files, work, folder.name)
            got = run_json([cli, "stats", str(out), "--stragglers", "--json", "--top", "0"])
        except RuntimeError as e:
            problems.append(f"{how}: {e}")
            continue
        problems += [f"{how}: {p}" for p in check_trace(got, offsets, want)]
    return problems


def check_trace(got, offsets, want):
    problems = []
    for rank, (offset, alignment) in sorted(offsets.items()):
        if alignment not in ("start-time", "reference") or offset != want["offsets"][rank]:
            problems.append(f"rank {rank}: offset {offset} ns ({alignment}), "
                            f"expected {want['offsets'][rank]} ns (start-time)")
    if sorted(r["rank"] for r in got["ranks"]) != sorted(want["ranks"]):
        problems.append(f"ranks {[r['rank'] for r in got['ranks']]}, expected {sorted(want['ranks'])}")
    for r in got["ranks"]:
        w = want["ranks"].get(r["rank"])
        if w is None:
            continue
        where = f"rank {r['rank']}"
        if r["events"] != w["events"]:
            problems.append(f"{where}: {r['events']} device events, expected {w['events']}")
        close(r["compute_s"], w["compute_ns"], f"{where} compute", problems)
        close(r["comm_s"], w["comm_ns"], f"{where} communication", problems)
        if r["steps"] != len(w["steps"]):
            problems.append(f"{where}: {r['steps']} steps, expected {len(w['steps'])}")
        if r.get("outside_steps_events") != w["outside_steps_events"]:
            problems.append(f"{where}: {r.get('outside_steps_events')} events in no step, "
                            f"expected {w['outside_steps_events']}")
    cells = {(c["rank"], c["step"]): c for c in got.get("cells", [])}
    if set(cells) != set(want["cells"]):
        problems.append(f"cells {sorted(cells)}, expected {sorted(want['cells'])}")
    for key, w in want["cells"].items():
        c = cells.get(key)
        if c is None:
            continue
        where = f"rank {key[0]} step {key[1]}"
        close(c["step_s"], w["step_ns"], f"{where} step", problems)
        close(c["compute_s"], w["compute_ns"], f"{where} compute", problems)
        close(c["collective_wait_s"], w["wait_ns"], f"{where} collective wait", problems)
    kinds = defaultdict(int)
    for c in got["collectives"]:
        kinds[c["collective"]] += c["count"]
        if not c["size_known"]:
            if c["algbw_gbps"] is not None or c["busbw_gbps"] is not None:
                problems.append(f"{c['collective']} of unknown size has bandwidths {c['algbw_gbps']}, {c['busbw_gbps']}")
        else:
            n = c["group_size"]
            factor = BUS_FACTOR[c["collective"]](n) if c["collective"] in BUS_FACTOR and n > 1 else 1.0
            algbw = c["bytes"] / c["mean_s"] / 1e9
            if abs(c["busbw_gbps"] - algbw * factor) > 1e-9 * max(1.0, algbw):
                problems.append(f"{c['collective']} {c['bytes']} B x{n}: busbw {c['busbw_gbps']}, "
                                f"expected {algbw * factor}")
    if dict(kinds) != dict(want["kinds"]):
        problems.append(f"collective kinds {dict(kinds)}, expected {dict(want['kinds'])}")
    if all(w["wait_ns"] == 0 for w in want["cells"].values()):
        if got["stragglers"] or got["transient"]:
            problems.append(f"no rank waited, yet stragglers {got['stragglers']} / {got['transient']}")
    return problems


def main():
    cli, fixtures, work = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    work.mkdir(parents=True, exist_ok=True)
    sets = sorted(p for p in fixtures.iterdir() if p.is_dir() and any(p.glob("rank-*.json.gz")))
    if not sets:
        print(f"no multi-rank sets under {fixtures}")
        return 1
    failures = 0
    for folder in sets:
        problems = check_set(cli, folder, work)
        print(f"{folder.name}: {'ok' if not problems else 'FAILED'}")
        for p in problems:
            print(f"    {p}")
        failures += bool(problems)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
