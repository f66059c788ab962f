#!/usr/bin/env python3
"""Reduces a PyTorch profiler (Kineto) trace to what a multi-rank test needs, reproducibly:

kept: every ProfilerStep#N window; every communication kernel (the classes of
realworld_traces.py); device work (kernels, copies, memsets) lasting at least --min-us
microseconds; the launch (cuda_runtime / cuda_driver / hip_runtime, by correlation id) of
every kept device event; the ops that carry collective args (record_param_comms, nccl:*);
the file's process/thread names and its top-level keys (distributedInfo, baseTimeNanoseconds,
deviceProperties, ...). Dropped: shorter compute, every other host op, python functions,
flows, instants, counters. Kernel args keep correlation, External id, device, stream and the
collective keys; the rest (grid, registers, occupancy) is dropped.

The output is gzip with a fixed mtime and sorted event order, so running it again on the same
input gives the same bytes. Usage:

    reduce_kineto_trace.py IN.json[.gz] OUT.json.gz [--min-us 50]
"""
import argparse
import gzip
import json
import sys
from decimal import Decimal
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from realworld_traces import kernel_class  # noqa: E402  (the same independent classifier)

DEVICE = {"kernel", "gpu_memcpy", "gpu_memset"}
LAUNCH = {"cuda_runtime", "cuda_driver", "hip_runtime", "runtime"}
KERNEL_ARGS = {"correlation", "External id", "device", "stream", "Collective name", "In msg nelems",
               "Out msg nelems", "Group size", "dtype", "Process Group Name", "bytes"}
TOP_KEYS = {"schemaVersion", "distributedInfo", "baseTimeNanoseconds", "deviceProperties", "displayTimeUnit",
            "traceName"}


def load(path):
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rb") as f:
        # Decimal keeps the times' text exact (1682725898094377.123 survives).
        return json.loads(f.read(), parse_float=Decimal)


def comm_args(e):
    a = e.get("args", {})
    return any(k in a for k in ("Collective name", "In msg nelems", "Group size"))


def reduce_trace(data, min_us):
    events = data["traceEvents"]
    keep_dev, corr = [], set()
    for e in events:
        if e.get("ph") != "X" or str(e.get("cat", "")).lower() not in DEVICE:
            continue
        cat = str(e.get("cat", "")).lower()
        is_comm = cat == "kernel" and kernel_class(e.get("name", ""), "kernel") == "comm"
        if is_comm or Decimal(str(e.get("dur", 0))) >= min_us:
            args = {k: v for k, v in e.get("args", {}).items() if k in KERNEL_ARGS}
            keep_dev.append(dict(e, args=args))
            if "correlation" in args:
                corr.add(args["correlation"])
    kept = []
    for e in events:
        ph, cat, name = e.get("ph"), str(e.get("cat", "")).lower(), str(e.get("name", ""))
        if ph == "M" and name in ("process_name", "thread_name"):
            kept.append(e)
        elif ph != "X":
            continue
        elif name.startswith("ProfilerStep#"):
            kept.append(e)
        elif cat in LAUNCH and e.get("args", {}).get("correlation") in corr:
            kept.append(dict(e, args={k: v for k, v in e["args"].items() if k in ("correlation", "External id")}))
        elif cat == "cpu_op" and (name == "record_param_comms" or name.startswith("nccl:") or comm_args(e)):
            kept.append(e)
    kept += keep_dev
    kept.sort(key=lambda e: (e.get("ph") != "M", Decimal(str(e.get("ts", 0))), str(e.get("cat", "")),
                             str(e.get("name", "")), to_json(e)))
    out = {k: v for k, v in data.items() if k in TOP_KEYS}
    out["traceEvents"] = kept
    return out


def to_json(o):
    """Compact JSON with sorted keys; a Decimal as the number text it was read from, so
    times keep every digit (json.dumps would round them through a float)."""
    if isinstance(o, Decimal):
        return str(o)
    if isinstance(o, dict):
        return "{" + ",".join(json.dumps(str(k)) + ":" + to_json(o[k]) for k in sorted(o)) + "}"
    if isinstance(o, list):
        return "[" + ",".join(to_json(v) for v in o) + "]"
    return json.dumps(o)


def dump(data, path):
    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as gz:
        gz.write(to_json(data).encode())


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("input")
    p.add_argument("output")
    p.add_argument("--min-us", type=Decimal, default=Decimal(50),
                   help="shortest compute or copy kept, in microseconds (communication is always kept)")
    a = p.parse_args()
    data = load(a.input)
    if not isinstance(data, dict) or "traceEvents" not in data:
        print(f"{a.input}: not a PyTorch profiler trace (no traceEvents)", file=sys.stderr)
        return 2
    dump(reduce_trace(data, a.min_us), a.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
