#!/usr/bin/env python3
"""Interleaved 1F1B with a micro-batch count that pp does not divide: what Megatron-LM's
schedule does with its default micro-batch group (pp) and with the larger group it needs.

Follows Megatron-LM d98e8a64 pipeline_parallel/schedules.py: the schedule table
(get_schedule_table, :989-1016), the warm-up 2(p - r - 1) + (v - 1)·N (:964-965), then one
forward and one backward, then the remaining backwards. Each pass waits for the pass before
it in the model (the previous chunk's forward, the next chunk's backward); uniform stages,
forward 1/v and backward 2/v per chunk, no transfer time. Prints, per (p, v, m), the extra
time over the closed form m·W + (p - 1)·W/v in chunk passes (W/v), for the default group
N = p ("deadlock" when no rank can proceed) and for the group Meshwork schedules
(core/schedule/pipeline_schedule.cpp, interleaved_group_size), next to Calculon's
(v - 1)·(p - m mod p) (calculon/llm/llm.py:1653-1669 at caa4b11f). Used for the figures in
docs/cost-model.md ("Interleaved with m not a multiple of p"); not run by the tests.
"""


def table(v, m, group):
    out = []
    for first in range(0, m, group):
        last = m if first + group >= m else first + group
        for c in range(v):
            out.extend((mb, c) for mb in range(first, last))
    return out


def rank_ops(r, p, v, m, group):
    t = table(v, m, group)
    total = m * v
    warm = min(total, (p - r - 1) * 2 + (v - 1) * group)
    ops, f, b = [], 0, 0
    while f < warm:
        ops.append(("F",) + t[f]); f += 1
    while f < total:
        ops.append(("F",) + t[f]); f += 1
        mb, c = t[b]; ops.append(("B", mb, v - 1 - c)); b += 1
    while b < total:
        mb, c = t[b]; ops.append(("B", mb, v - 1 - c)); b += 1
    return ops


def span(p, v, m, group):
    ops = [rank_ops(r, p, v, m, group) for r in range(p)]
    done, free, idx, chunks = {}, [0.0] * p, [0] * p, p * v
    progress = True
    while progress:
        progress = False
        for r in range(p):
            while idx[r] < len(ops[r]):
                kind, mb, c = ops[r][idx[r]]
                g = c * p + r
                if kind == "F":
                    dep = None if g == 0 else ("F", mb, g - 1)
                else:
                    dep = ("F", mb, g) if g == chunks - 1 else ("B", mb, g + 1)
                if dep is not None and dep not in done:
                    break
                start = max(free[r], done[dep] if dep else 0.0)
                end = start + (1.0 if kind == "F" else 2.0) / v
                done[(kind, mb, g)] = end
                free[r] = end
                idx[r] += 1
                progress = True
    if any(idx[r] < len(ops[r]) for r in range(p)):
        return None
    return max(free)


def group_size(p, m):
    if m < p:
        return 0
    for n in range(p, m):
        if m % n == 0 or m % n >= p:
            return n
    return m


def main():
    print("p v m | default group: extra chunk passes | Meshwork's group N: extra | Calculon")
    for p, v, m in [(4, 2, 8), (4, 2, 6), (4, 2, 5), (4, 3, 6), (4, 2, 7), (8, 2, 9),
                    (8, 2, 12), (8, 4, 12), (4, 2, 10)]:
        closed = m * 3.0 + (p - 1) * 3.0 / v
        chunk = 3.0 / v
        s_default = span(p, v, m, p)
        n = group_size(p, m)
        s_group = span(p, v, m, n)
        calculon = (v - 1) * (p - m % p) if m % p else 0
        d = "deadlock" if s_default is None else f"{(s_default - closed) / chunk:.2f}"
        g = "deadlock" if s_group is None else f"{(s_group - closed) / chunk:.2f}"
        print(f"{p} {v} {m} | {d} | N={n}: {g} | {calculon}")


if __name__ == "__main__":
    main()
