#!/bin/bash
# Runs the benchmarks of two source trees alternately, 3 rounds, in one session, and prints
# the best time of each side and their ratio (docs/BENCHMARKS.md, "Restructure check").
# usage: bench/compare-builds.sh OLD_TREE NEW_TREE
# Each tree needs a Release build in build-bench:
#   cmake -S . -B build-bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DMESHWORK_GUI=OFF \
#     -DMESHWORK_CUDA=OFF -DMESHWORK_BUILD_BENCH=ON -DMESHWORK_BUILD_TESTS=OFF
#   cmake --build build-bench --target bench_cost bench_layout bench_search bench_engine bench_trace_store
set -u
OLD=$(realpath "$1")
NEW=$(realpath "$2")
rm -f /tmp/bench-*.json /tmp/ts-*.txt
uptime
for round in 1 2 3; do
  for b in bench_cost bench_layout bench_search bench_engine; do
    for side in old main; do
      dir=$OLD; [ $side = main ] && dir=$NEW
      (cd $dir && MESHWORK_RESOURCES=$dir/resources ./build-bench/bench/$b --benchmark_min_time=0.2 --benchmark_format=json --benchmark_out=/tmp/bench-$side-$b-$round.json > /dev/null 2>&1) || echo "fail $side $b"
    done
  done
  for side in old main; do
    dir=$OLD; [ $side = main ] && dir=$NEW
    (cd $dir && ./build-bench/bench/bench_trace_store 2000000 /tmp/ts-$side.sqlite > /tmp/ts-$side-$round.txt 2>&1) || echo "fail $side trace_store"
  done
done
uptime
python3 - <<'PY'
import json,glob,collections
res=collections.defaultdict(dict)
for f in glob.glob('/tmp/bench-*-*.json'):
    side=f.split('/')[-1].split('-')[1]
    for b in json.load(open(f))['benchmarks']:
        k=b['name']; t=b['real_time']
        res[k][side]=min(res[k].get(side,1e99),t)
print(f"{'benchmark':60s} {'old':>12s} {'main':>12s} {'main/old':>8s}")
for k in sorted(res):
    o=res[k].get('old'); n=res[k].get('main')
    if o and n: print(f"{k[:60]:60s} {o:12.1f} {n:12.1f} {n/o:8.2f}")
PY
for side in old main; do echo "== trace_store $side"; cat /tmp/ts-$side-*.txt | grep -E "^(ingest|close|window worst)"; done
