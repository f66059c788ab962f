#!/usr/bin/env python3
"""Achieved HBM bandwidth of memory-bound PyTorch kernels, from a Kineto trace recorded with
shapes (record_shapes=True), by kernel class.

Each elementwise CPU op with exactly one kernel (aten::add, mul, silu, neg, pow, rsqrt: the
tensor inputs read and an output of the largest input's size in the widest input dtype
written; aten::copy_: its destination written and its source read) gives bytes moved over its
kernel's duration. Only kernels that move at least 16 MB count (launch and tail effects under
a few per cent). The class is PyTorch's kernel template:
  vectorized  vectorized_elementwise_kernel: contiguous, aligned operands (what a fused kernel
              over contiguous tensors does);
  unrolled    unrolled_elementwise_kernel: contiguous, with a dtype cast on the way;
  strided     elementwise_kernel: broadcast or strided operands (TensorIterator's general path).
Prints, per class, the kernels counted and the achieved fraction of the GPU's HBM bandwidth
(median and quartiles): the measured range that a memory efficiency (the cluster presets'
`efficiency.memory`, docs/cost-model.md "Memory-bound kernels") lies in.

usage: bench/memory-rates.py TRACE.json[.gz] HBM_BYTES_PER_S
  e.g. bench/memory-rates.py \
         tests/fixtures/kineto/tracelens__h100__Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz 3.35e12
"""
import collections
import gzip
import json
import statistics
import sys

ELEMENT_BYTES = {"c10::BFloat16": 2, "c10::Half": 2, "float": 4, "double": 8, "int": 4,
                 "long int": 8, "bool": 1}
ELEMENTWISE = ("aten::add", "aten::mul", "aten::silu", "aten::neg", "aten::pow", "aten::rsqrt")
MIN_BYTES = 16e6


def events(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        data = json.load(f)
    return data["traceEvents"] if isinstance(data, dict) else data


def numel(dims):
    n = 1
    for x in dims:
        n *= x
    return n


def op_bytes(op):
    args = op.get("args", {})
    tensors = [(numel(d), ELEMENT_BYTES[t]) for d, t in zip(args.get("Input Dims", []), args.get("Input type", []))
               if isinstance(d, list) and d and all(isinstance(x, int) for x in d) and t in ELEMENT_BYTES]
    if not tensors:
        return 0
    if op["name"] in ELEMENTWISE:
        largest = max(n for n, _ in tensors)
        widest = max(b for _, b in tensors)
        return sum(n * b for n, b in tensors) + largest * widest
    if op["name"] == "aten::copy_":
        return sum(n * b for n, b in tensors[:2])
    return 0


def kernel_class(name):
    if "vectorized_elementwise_kernel" in name:
        return "vectorized"
    if "unrolled_elementwise_kernel" in name:
        return "unrolled"
    if "elementwise_kernel" in name:
        return "strided"
    return None


def rates(trace, hbm_bytes_per_s):
    ops = {e["args"].get("External id"): e for e in trace if e.get("cat") == "cpu_op"}
    kernels = collections.defaultdict(list)
    for e in trace:
        if e.get("cat") == "kernel":
            kernels[e["args"].get("External id")].append(e)
    out = collections.defaultdict(list)
    for ext, ks in kernels.items():
        op = ops.get(ext)
        if op is None or len(ks) != 1 or ks[0].get("dur", 0) <= 0:
            continue
        moved = op_bytes(op)
        cls = kernel_class(ks[0]["name"])
        if moved < MIN_BYTES or cls is None:
            continue
        out[cls].append(moved / (ks[0]["dur"] * 1e-6) / hbm_bytes_per_s)
    return out


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    by_class = rates(events(argv[1]), float(argv[2]))
    if not by_class:
        print("no elementwise kernel of 16 MB or more with recorded shapes", file=sys.stderr)
        return 1
    print("class       kernels  median  quartiles (fraction of HBM bandwidth)")
    for cls in ("vectorized", "unrolled", "strided"):
        f = by_class.get(cls, [])
        if len(f) < 2:
            continue
        q = statistics.quantiles(f, n=4)
        print(f"{cls:<11} {len(f):>7}  {statistics.median(f):.3f}   {q[0]:.3f} .. {q[2]:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
