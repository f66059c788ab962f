#!/usr/bin/env python3
"""bench/comm-cpu-per-layout.py on real CPU-engine runs (docs/BENCHMARKS.md, "CPU outside and
inside compute ops"): two layouts of the tiny model whose collectives differ (TP2xPP2: TP
all-reduces and stage-to-stage sends; DP4: one gradient all-reduce), 3 steps each. The script must read the
CPU inside collectives of each (> 0 on Linux), the calls its collectives record a rank and
step, the warm-up step left out (51 in TP2xPP2: 42 TP all-reduces, 4 sends, 4 receives, the
loss all-reduce; 2 in DP4: the gradients' and the loss's all-reduces), fit a per-call and per-byte figure over the two, and refuse an unreadable trace with
exit code 2 naming the file.
Usage: comm_cpu_per_layout.py MESHWORK_CLI SOURCE_DIR WORK_DIR"""
import os
import re
import subprocess
import sys

cli, src, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
layout = os.path.join(src, "resources", "layouts", "tiny-cpu.json")
script = os.path.join(src, "bench", "comm-cpu-per-layout.py")
traces = []
for name, flags in (("tp2pp2", []), ("dp4", ["--tp", "1", "--pp", "1", "--dp", "4"])):
    t = os.path.join(work, name + ".sqlite")
    for f in (t, t + "-wal", t + "-shm"):
        if os.path.exists(f):
            os.remove(f)
    subprocess.run([cli, "run", layout, *flags, "--steps", "3", "--profile", t], check=True,
                   stdout=subprocess.DEVNULL)
    traces.append(t)
out = subprocess.run([sys.executable, script, *traces], capture_output=True, text=True)
print(out.stdout, out.stderr)
failures = []
if out.returncode != 0:
    failures.append("exit code %d" % out.returncode)
rows = {}
for line in out.stdout.splitlines():
    m = re.match(r"(TP\d PP\d DP\d)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)", line)
    if m:
        rows[m.group(1)] = (float(m.group(2)), float(m.group(3)), float(m.group(4)))
for layout_name, calls in (("TP2 PP2 DP1", 51.0), ("TP1 PP1 DP4", 2.0)):
    if layout_name not in rows:
        failures.append("no row for " + layout_name)
        continue
    comm_ms, got_calls, kb = rows[layout_name]
    if sys.platform.startswith("linux") and comm_ms <= 0:
        failures.append("%s: no CPU inside collectives read" % layout_name)
    if got_calls != calls:
        failures.append("%s: %.1f calls a rank and step, expected %.0f" % (layout_name, got_calls, calls))
    if kb <= 0:
        failures.append("%s: no bytes read" % layout_name)
if not re.search(r"fit over the medians of 2 layouts: -?[\d.]+ us per call \+ -?[\d.]+ us per MB", out.stdout):
    failures.append("no per-call and per-byte fit")
bad = subprocess.run([sys.executable, script, layout], capture_output=True, text=True)
if bad.returncode != 2 or layout not in bad.stderr:
    failures.append("a layout file given as a trace: exit %d, stderr %r" % (bad.returncode, bad.stderr))
for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
