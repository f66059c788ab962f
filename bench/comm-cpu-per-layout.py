#!/usr/bin/env python3
"""What the rank threads' CPU inside collectives follows, from CPU-engine traces.

Usage: bench/comm-cpu-per-layout.py TRACE.sqlite [TRACE.sqlite ...]
(traces of `meshwork-cli run LAYOUT ... --profile TRACE.sqlite`, 20 steps or more; give
several layouts, docs/BENCHMARKS.md, "CPU outside and inside compute ops").

Per trace, per rank thread and step (the first step, the warm-up, left out): the CPU time
inside collectives, sends and receives (counter thread.comm_on_cpu_s), the collective calls
and the bytes they record (every non-compute event), the CPU on a core and inside compute
ops, the wait in the run queue, the step's period (the first kept step's start to the last
step's end, over the steps) and the cores the rank threads used (their CPU over the
period). Then, over the per-layout medians, the least-squares fit of the CPU inside
collectives as  per_call_s * calls + per_byte_s * bytes  (no intercept), with each layout's
residual: whether one law holds across layouts whose collectives differ (TP all-reduces of
a few KB, stage-to-stage sends, DP all-reduces of the gradients).
Exit codes: 0 printed, 2 a trace that cannot be read or has no thread.comm_on_cpu_s.
"""
import collections
import json
import sqlite3
import statistics
import sys


def layout_name(db):
    row = db.execute("select value from meta where key = 'layout_json'").fetchone()
    if not row:
        return "?"
    p = json.loads(row[0]).get("parallel", {})
    return "TP%d PP%d DP%d" % (p.get("tp", 1), p.get("pp", 1), p.get("dp", 1))


def measure(path):
    try:
        db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
        db.execute("select 1 from meta limit 1")
    except sqlite3.Error as err:
        raise ValueError("%s: not a readable trace (%s)" % (path, err)) from None
    series = collections.defaultdict(list)
    for rank, name, t, v in db.execute(
            "select t.rank, s.value, c.time_ns, c.value from counters c "
            "join tracks t on t.id = c.track join strings s on s.id = c.name_id "
            "where s.value like 'thread.%'"):
        series[(rank, name)].append((t, v))

    def per_thread_step(name):
        vals = []
        for (rank, n), s in series.items():
            if n == name:
                vals += [v for _, v in sorted(s)[1:]]  # the warm-up step left out
        return statistics.mean(vals) if vals else None

    comm = per_thread_step("thread.comm_on_cpu_s")
    if comm is None:
        raise ValueError("%s: no thread.comm_on_cpu_s counters (a CPU-engine trace recorded "
                         "with thread schedstat is needed)" % path)
    events = db.execute(
        "select t.rank, e.step, e.bytes, e.start_ns, e.end_ns, t.name from events e "
        "join tracks t on t.id = e.track where e.step is not null and e.step >= 0").fetchall()
    steps = sorted({e[1] for e in events})
    kept = set(steps[1:]) if len(steps) > 1 else set(steps)
    if not kept:
        raise ValueError("%s: no events of a training step" % path)
    ranks = {e[0] for e in events}
    calls = sum(1 for e in events if e[1] in kept and e[5] != "compute")
    nbytes = sum(e[2] for e in events if e[1] in kept and e[5] != "compute")
    # The period: from the first kept step's first event to the last step's last event,
    # over the kept steps (what a run's throughput follows; `compare` reads each rank's own
    # step span instead, shorter where the ranks' steps are skewed).
    first, last = min(kept), max(kept)
    start = min(e[3] for e in events if e[1] == first)
    end = max(e[4] for e in events if e[1] == last)
    wall = (end - start) * 1e-9 / (last - first + 1)
    n = len(ranks) * len(kept)
    on_cpu = per_thread_step("thread.on_cpu_s") or 0.0
    return {
        "trace": path, "layout": layout_name(db), "comm_cpu_s": comm, "calls": calls / n,
        "bytes": nbytes / n, "on_cpu_s": on_cpu,
        "compute_cpu_s": per_thread_step("thread.compute_on_cpu_s") or 0.0,
        "run_queue_s": per_thread_step("thread.run_queue_wait_s") or 0.0,
        "wall_s": wall, "cores_used": len(ranks) * on_cpu / wall if wall > 0 else 0.0,
    }


def main(paths):
    if not paths:
        print(__doc__)
        return 2
    try:
        rows = [measure(p) for p in paths]
    except (sqlite3.Error, ValueError) as err:
        print("error:", err, file=sys.stderr)
        return 2
    print("%-14s %9s %6s %9s %9s %9s %9s %8s %6s  %s" % (
        "layout", "comm ms", "calls", "KB", "on-CPU", "compute", "run-queue", "period ms", "cores", "trace"))
    for r in rows:
        print("%-14s %9.3f %6.1f %9.1f %9.3f %9.3f %9.3f %8.2f %6.2f  %s" % (
            r["layout"], 1e3 * r["comm_cpu_s"], r["calls"], r["bytes"] / 1e3, 1e3 * r["on_cpu_s"],
            1e3 * r["compute_cpu_s"], 1e3 * r["run_queue_s"], 1e3 * r["wall_s"], r["cores_used"], r["trace"]))
    # Per layout the median over its traces (a TP layout's CPU inside collectives ranges over
    # 4x from run to run under load), then least squares without intercept over the layouts:
    # comm = a * calls + b * bytes.
    by = collections.defaultdict(list)
    for r in rows:
        by[r["layout"]].append(r)
    meds = [{"layout": k, "n": len(v), "calls": statistics.median(r["calls"] for r in v),
             "bytes": statistics.median(r["bytes"] for r in v),
             "comm_cpu_s": statistics.median(r["comm_cpu_s"] for r in v),
             "lo": min(r["comm_cpu_s"] for r in v), "hi": max(r["comm_cpu_s"] for r in v)} for k, v in by.items()]
    s11 = sum(r["calls"] ** 2 for r in meds)
    s12 = sum(r["calls"] * r["bytes"] for r in meds)
    s22 = sum(r["bytes"] ** 2 for r in meds)
    t1 = sum(r["calls"] * r["comm_cpu_s"] for r in meds)
    t2 = sum(r["bytes"] * r["comm_cpu_s"] for r in meds)
    det = s11 * s22 - s12 * s12
    if det <= 1e-12 * s11 * s22:
        print("fit: needs layouts whose calls and bytes are not proportional (several layouts)")
        return 0
    a = (t1 * s22 - t2 * s12) / det
    b = (s11 * t2 - s12 * t1) / det
    print("fit over the medians of %d layouts: %.2f us per call + %.1f us per MB recorded" % (
        len(meds), 1e6 * a, 1e12 * b))
    for r in meds:
        pred = a * r["calls"] + b * r["bytes"]
        print("  %-14s %2d traces: median %.3f ms [%.3f .. %.3f], fit %.3f ms (%+.0f %%)" % (
            r["layout"], r["n"], 1e3 * r["comm_cpu_s"], 1e3 * r["lo"], 1e3 * r["hi"], 1e3 * pred,
            100 * (pred / r["comm_cpu_s"] - 1)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
