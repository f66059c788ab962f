#!/usr/bin/env python3
"""The held-back error table of docs/cost-model.md in one command.

Runs the published-run tests of a build (tst_cost_h100_runs, tst_cost_published_heldout,
tst_cost_verification_cards, tst_cost_bridge_recipes_published, tst_cost_torchtitan_published,
tst_cost_llmfoundry_published),
reads the line each prints per row ("<row> [<tag>...]: published X s, estimate Y s (+Z%)"), and
prints a Markdown table of every row with its group (dense or MoE; the verification cards, the
recipes imported at their release, torchtitan's own benchmarks and llm-foundry's MPT tables each a
set of their own), then
the median and the worst |error| of the estimate per group. Bridge's measured A/B pair (the rows tagged "SKILL.md") is diagnostic and kept out
of the groups, as in the test's own summary.

Usage: bench/heldout-errors.py [BUILD_DIR]   (default build-ci)
"""
import re
import statistics
import subprocess
import sys
from pathlib import Path

TESTS = ["tst_cost_h100_runs", "tst_cost_published_heldout", "tst_cost_verification_cards",
         "tst_cost_bridge_recipes_published", "tst_cost_torchtitan_published", "tst_cost_llmfoundry_published"]
LINE = re.compile(r"(?:QINFO\s*:\s*\w+::\w+\()?(?P<row>.+?) \[(?P<tag>[^\]]*)\]: published (?P<pub>[\d.]+) s, "
                  r"estimate (?P<est>[\d.]+) s \((?P<err>[+-]?[\d.]+)%\)")


def label(row: str) -> str:
    """QtTest prefixes a data row's message with "Class::function(TAG) "; the message itself
    starts with the same label, so "TAG) TAG" keeps its second half."""
    half = (len(row) - 2) // 2
    if len(row) % 2 == 0 and row[half:half + 2] == ") " and row[:half] == row[half + 2:]:
        return row[half + 2:]
    return row
MOE = re.compile(r"qwen3[_-]\d+b[_-]a|deepseek|gpt[ _-]oss|mixtral|moe|moonlight", re.IGNORECASE)


def rows(build: Path):
    for test in TESTS:
        exe = build / "tests" / "core" / "cost" / test
        out = subprocess.run([str(exe)], capture_output=True, text=True, check=False)
        for line in (out.stdout + out.stderr).splitlines():
            m = LINE.search(line)
            if not m:
                continue
            yield test, label(m["row"].strip()), m["tag"], float(m["pub"]), float(m["est"]), float(m["err"])


def main() -> int:
    build = Path(sys.argv[1] if len(sys.argv) > 1 else "build-ci")
    # The verification cards (untuned, naturally routed runs) are a set of their own.
    # So are the recipes imported at their release (tst_cost_bridge_recipes_published).
    groups = {"dense": [], "MoE": [], "cards, dense": [], "cards, MoE": [], "recipes, dense": [], "recipes, MoE": [],
              "torchtitan, dense": [], "llm-foundry, dense": []}
    print("| test | row | tag | published (s) | estimate (s) | error |")
    print("|---|---|---|---|---|---|")
    seen = 0
    for test, row, tag, pub, est, err in rows(build):
        seen += 1
        print(f"| {test} | {row} | {tag} | {pub:.3f} | {est:.3f} | {err:+.1f} % |")
        if "SKILL.md" in tag:
            continue  # the diagnostic A/B pair
        prefix = {"tst_cost_verification_cards": "cards, ", "tst_cost_bridge_recipes_published": "recipes, ",
                  "tst_cost_torchtitan_published": "torchtitan, ",
                  "tst_cost_llmfoundry_published": "llm-foundry, "}.get(test, "")
        groups[prefix + ("MoE" if MOE.search(row) else "dense")].append(err)
    if seen == 0:
        print(f"no rows read: are {', '.join(TESTS)} built under {build}?", file=sys.stderr)
        return 1
    print()
    for name, errs in groups.items():
        if not errs:
            continue
        worst = max(errs, key=abs)
        print(f"{name}: {len(errs)} rows, median |error| {statistics.median(abs(e) for e in errs):.1f} %, "
              f"worst {worst:+.1f} %")
    return 0


if __name__ == "__main__":
    sys.exit(main())
