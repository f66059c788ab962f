#!/usr/bin/env python3
"""GPU idle time between back-to-back kernels of one stream, from PyTorch profiler (Kineto) traces.

A pair of consecutive kernels on one stream counts when the second one's launch call had
returned before the first one ended (the kernel was queued, so the host did not delay it) and no
other stream's GPU activity ended between the two (no cross-stream event wait). The gap is
the second kernel's start less the first one's end. Prints, per trace, the pairs counted and
the gap's median and quartiles in microseconds: the GPU-side cost of one more kernel
(core/cost/launch_cost.h, kKernelGapS; docs/cost-model.md, "Host and launch cost").

usage: bench/kernel-gaps.py [--check HEADER] TRACE.json[.gz] ...
  --check HEADER  exit 1 unless HEADER's kKernelGapS (seconds) is the first trace's median
                  gap to the hundredth of a microsecond (the ctest kernel_gap_measured)
"""
import bisect
import re
import collections
import gzip
import json
import statistics
import sys

LAUNCH_CATS = ("cuda_runtime", "cuda_driver")
GPU_CATS = ("kernel", "gpu_memcpy", "gpu_memset")


def events(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        data = json.load(f)
    return data["traceEvents"] if isinstance(data, dict) else data


def gaps_us(trace):
    launch_end = {}
    for e in trace:
        if e.get("cat") in LAUNCH_CATS and "correlation" in e.get("args", {}):
            launch_end[e["args"]["correlation"]] = e["ts"] + e.get("dur", 0)
    gpu = [e for e in trace if e.get("cat") in GPU_CATS and e.get("ph") == "X"]
    by_stream = collections.defaultdict(list)
    for e in gpu:
        by_stream[(e.get("pid"), e["args"].get("stream", e.get("tid")))].append(e)
    out = []
    for key, ks in by_stream.items():
        others = sorted(e["ts"] + e["dur"] for e in gpu
                        if (e.get("pid"), e["args"].get("stream", e.get("tid"))) != key)
        ks.sort(key=lambda e: e["ts"])
        for a, b in zip(ks, ks[1:]):
            if a.get("cat") != "kernel" or b.get("cat") != "kernel":
                continue
            a_end = a["ts"] + a["dur"]
            launched = launch_end.get(b["args"].get("correlation"))
            if launched is None or launched >= a_end:
                continue  # not queued: the host set its start
            i = bisect.bisect_right(others, a_end)
            if i < len(others) and others[i] <= b["ts"]:
                continue  # another stream finished in between: possibly an event wait
            out.append(b["ts"] - a_end)
    return out


def stated_gap_us(header):
    with open(header) as f:
        m = re.search(r"kKernelGapS\s*=\s*([0-9.eE+-]+)", f.read())
    if not m:
        raise SystemExit(f"{header}: no kKernelGapS")
    return float(m.group(1)) * 1e6


def main(args):
    header = None
    if args[:1] == ["--check"]:
        if len(args) < 3:
            print(__doc__, file=sys.stderr)
            return 2
        header, args = args[1], args[2:]
    paths = args
    if not paths:
        print(__doc__, file=sys.stderr)
        return 2
    medians = []
    for p in paths:
        g = sorted(gaps_us(events(p)))
        if not g:
            print(f"{p}: no queued kernel pairs")
            continue
        medians.append(statistics.median(g))
        q = statistics.quantiles(g, n=4) if len(g) > 1 else [g[0]] * 3
        print(f"{p}: {len(g)} queued pairs, gap median {statistics.median(g):.2f} us "
              f"(quartiles {q[0]:.2f}, {q[2]:.2f})")
    if header is not None:
        stated = stated_gap_us(header)
        if not medians or abs(round(medians[0], 2) - stated) > 1e-9:
            print(f"{header}: kKernelGapS {stated:.2f} us, measured "
                  f"{medians[0] if medians else float('nan'):.2f} us", file=sys.stderr)
            return 1
        print(f"{header}: kKernelGapS {stated:.2f} us = the measured median")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
