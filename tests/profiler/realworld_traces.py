#!/usr/bin/env python3
"""Imports every profile of ../shared/realworld/{kineto,nsys} with meshwork-cli and checks the
result against figures computed here, independently, from the raw files:

- exit 0, or exit 2 with "not a profiler trace"-style wording for files that are not profiles
  (an execution trace: top-level nodes[]);
- device events > 0 where the file has device activity;
- communication > 0 where it has collective kernels;
- compute and communication time (the union of their kernels' intervals, HTA's definition)
  equal to the sums computed here from the raw JSON / SQLite, to the nanosecond.

Usage: realworld_traces.py MESHWORK_CLI CORPUS_DIR WORK_DIR
Exit 0 when every file passes, 1 when one fails, 77 (ctest SKIP) when CORPUS_DIR is absent.
"""
import gzip
import json
import re
import sqlite3
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

SKIP = 77

# HTA's classes, extended to RCCL, MSCCL(++), DeepEP, symmetric-memory and custom all-reduce
# kernels (docs/profiler.md "Communication kernels"), written here from the table, not from
# the C++: the qualified name is the last word before the argument list, template arguments
# removed.
DEVICE_CATS = {"kernel", "gpu_memcpy", "memcpy", "gpu_memset", "memset", "mtia_ccp_events"}
CUSTOM_ALL_REDUCE = re.compile(r"cross_device_reduce|custom_all_reduce|^allreduce_prototype|"
                               r"shotallreducekernel|^allreduce_fusion_kernel")
SYMMETRIC = re.compile(r"^multimem_|one_shot_all_reduce|two_shot_all_reduce")


def qualified_name(name):
    """['dpsk', 'ep', 'internode', 'combine'] of 'void dpsk::ep::internode::combine<...>(...)'."""
    flat, depth, i = [], 0, 0
    anon = "(anonymous namespace)"
    while i < len(name):
        if depth == 0 and name.startswith(anon, i):
            flat.append("@anon@")
            i += len(anon)
            continue
        c = name[i]
        if c in "<({[":
            if depth == 0 and c in "([":
                break
            depth += 1
        elif c in ">)}]":
            depth -= 1
        elif depth == 0:
            flat.append(c)
        i += 1
    words = re.split(r"[ *&]+", "".join(flat).strip())
    last = words[-1] if words and words[-1] else name
    return [w.replace("@anon@", "(anonymous namespace)") for w in last.split("::")]


def is_comm_kernel(name):
    if name.endswith("]") and re.search(r" \[[a-z_]+\]$", name):
        name = name[:name.rindex(" [")]
    q = qualified_name(name)
    fn, scopes = q[-1], q[:-1]
    if re.match(r"nccl|rccl", fn) or "ncclKernel" in fn or "ncclDevKernel" in fn:
        return True
    if fn.startswith("msccl") or "mscclpp" in scopes:
        return True
    if scopes[:1] == ["deep_ep"] or scopes[:2] == ["dpsk", "ep"]:
        f = fn[:-5] if fn.endswith("_impl") else fn
        if "layout" in f or "epilogue" in f:
            return False
        return bool(re.search(r"dispatch|combine|notify|barrier|^pp_send|^pp_recv|^engram_fetch", f))
    f = fn.lower()
    return bool(SYMMETRIC.search(f) or "symmetric_memory" in scopes or CUSTOM_ALL_REDUCE.search(f))


def kernel_class(name, cat):
    if cat in ("gpu_memcpy", "memcpy", "gpu_memset", "memset"):
        return "memory"
    if name.startswith("Memcpy") or name.startswith("Memset"):
        return "memory"
    if is_comm_kernel(name):
        return "comm"
    if cat == "mtia_ccp_events" and "dma" in name:
        return "memory"
    if "Sync" in name and "wait" in name:
        return "sync"
    return "compute"


def union_ns(intervals):
    total, cur_s, cur_e = 0, None, None
    for s, e in sorted(intervals):
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    if cur_e is not None:
        total += cur_e - cur_s
    return total


def us_to_ns(v):
    return int((Decimal(repr(v)) * 1000).to_integral_value(rounding="ROUND_HALF_UP")) if isinstance(v, float) \
        else int(v) * 1000


def kineto_expect(path):
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as f:
        data = json.loads(f.read(), parse_float=Decimal)
    if isinstance(data, dict) and "traceEvents" not in data:
        return {"refused": True}
    events = data["traceEvents"] if isinstance(data, dict) else data
    by_class = {"compute": [], "comm": []}
    device = 0
    for ev in events:
        if not isinstance(ev, dict) or ev.get("ph") != "X":
            continue
        cat = str(ev.get("cat", "")).lower()
        if cat not in DEVICE_CATS:
            continue
        device += 1
        start = int(Decimal(ev["ts"]) * 1000)
        start = int((Decimal(ev["ts"]) * 1000).to_integral_value(rounding="ROUND_HALF_UP"))
        dur = int((Decimal(ev.get("dur", 0)) * 1000).to_integral_value(rounding="ROUND_HALF_UP"))
        cls = kernel_class(ev.get("name", ""), cat)
        if cls in by_class:
            by_class[cls].append((start, start + dur))
    return {"refused": False, "device": device, "compute_ns": union_ns(by_class["compute"]),
            "comm_ns": union_ns(by_class["comm"])}


def nsys_expect(path):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    by_class = {"compute": [], "comm": []}
    device = 0
    if "CUPTI_ACTIVITY_KIND_KERNEL" in tables:
        cols = {r[1] for r in db.execute("PRAGMA table_info(CUPTI_ACTIVITY_KIND_KERNEL)")}
        name_col = "demangledName" if "demangledName" in cols else "shortName"
        for start, end, name in db.execute(
                f"SELECT k.start, k.end, s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k "
                f"JOIN StringIds s ON s.id = k.{name_col}"):
            device += 1
            cls = kernel_class(name, "kernel")
            if cls in by_class:
                by_class[cls].append((start, end))
    for t in ("CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"):
        if t in tables:
            device += db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
    return {"refused": False, "device": device, "compute_ns": union_ns(by_class["compute"]),
            "comm_ns": union_ns(by_class["comm"])}


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600)


def main():
    cli, corpus, work = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    if not corpus.is_dir():
        print(f"SKIP: {corpus} is absent (the real-world corpus sits beside the checkout)")
        return SKIP
    work.mkdir(parents=True, exist_ok=True)
    files = sorted(p for kind in ("kineto", "nsys") if (corpus / kind).is_dir()
                   for p in (corpus / kind).iterdir() if p.name != "SOURCES.txt")
    failures = 0
    print(f"{'file':<70} {'result':<8} {'device':>7} {'compute ms':>11} {'comm ms':>9}")
    for path in files:
        expect = nsys_expect(path) if path.suffix == ".sqlite" else kineto_expect(path)
        out = work / (path.name + ".mw.sqlite")
        r = run([cli, "import-trace", str(path), "--out", str(out)])
        problems = []
        if expect["refused"]:
            if r.returncode != 2 or "not a profiler trace" not in r.stderr:
                problems.append(f"expected exit 2 naming what the file is, got {r.returncode}: {r.stderr.strip()}")
            status, stats = "refused", None
        elif r.returncode != 0:
            problems.append(f"import exit {r.returncode}: {r.stderr.strip()}")
            status, stats = "FAILED", None
        else:
            s = run([cli, "stats", str(out), "--json"])
            if s.returncode != 0:
                problems.append(f"stats exit {s.returncode}: {s.stderr.strip()}")
                stats = None
            else:
                stats = json.loads(s.stdout)
            status = "ok"
        if stats is not None:
            ranks = stats["ranks"]
            got_device = sum(r_["events"] for r_ in ranks)
            got_compute = round(sum(r_["compute_s"] for r_ in ranks) * 1e9)
            got_comm = round(sum(r_["comm_s"] for r_ in ranks) * 1e9)
            if expect["device"] > 0 and got_device == 0:
                problems.append(f"no device events; the file has {expect['device']}")
            if expect["comm_ns"] > 0 and got_comm == 0:
                problems.append("no communication; the file has collective kernels")
            # Seconds travel through JSON doubles: allow 2 ns of rounding.
            if abs(got_compute - expect["compute_ns"]) > 2:
                problems.append(f"compute {got_compute} ns, expected {expect['compute_ns']} ns")
            if abs(got_comm - expect["comm_ns"]) > 2:
                problems.append(f"communication {got_comm} ns, expected {expect['comm_ns']} ns")
        if problems:
            status = "FAILED"
            failures += 1
        shown = path.parent.name + "/" + path.name
        if expect["refused"]:
            print(f"{shown:<70} {status:<8}")
        else:
            print(f"{shown:<70} {status:<8} {expect['device']:>7} {expect['compute_ns'] / 1e6:>11.3f} "
                  f"{expect['comm_ns'] / 1e6:>9.3f}")
        for p in problems:
            print(f"    {p}")
    print(f"{len(files) - failures} of {len(files)} files pass")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
