#!/usr/bin/env python3
"""Where the published Megatron-Bridge production layouts rank in `meshwork-cli search` for
their own job (docs/cost-model.md, "Search against the published layouts").

For each row of the Megatron-Bridge 25.11 performance summary that tst_cost_h100_runs holds
(NVIDIA-NeMo/Megatron-Bridge 00b7660b docs/performance-summary.md and the recipes it cites),
and the rows of tst_cost_published_heldout that fit in the model,
estimate the published layout, run `search --dtype DTYPE --no-sim --top TOP` for the same
model, cluster, GPUs, global batch and sequence (with the recipes' TP overlap as the job's
setting, --tp-comm-overlap ring, unless --no-overlap is given, and their gradients reduced in
bf16, --grad-reduce-dtype bf16, as every performance config sets), and print the layout's
estimate, search's best, and its rank: 1 + the layouts search finds strictly faster.
Usage: bench/published-rank.py [MESHWORK_CLI] [--top N] [--no-overlap]
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# name, model, cluster, gpus, gbs, mbs, tp, pp, cp, vpp, zero, recomputed layers
# [, seq, dtype, ep [, recompute modules]] (default 8192, fp8, 1, none)
ROWS = [
    ("H100 LLAMA3_8B FSDP 8", "llama3-8b", "dgx-h100", 8, 128, 1, 1, 1, 1, 1, 3, 5),
    ("H100 LLAMA3_70B TP4 PP8 VP5", "llama3-70b", "dgx-h100", 64, 128, 1, 4, 8, 1, 5, 1, 0),
    ("H100 LLAMA3.1_405B TP8 PP8 CP2 VP8", "llama3.1-405b", "dgx-h100", 1024, 512, 1, 8, 8, 2, 8, 1, 0),
    ("B200 LLAMA3_8B DP8 MBS2", "llama3-8b", "dgx-b200", 8, 128, 2, 1, 1, 1, 1, 1, 0),
    ("B200 LLAMA3.1_405B TP4 PP8 CP2 VP8", "llama3.1-405b", "dgx-b200", 128, 64, 1, 4, 8, 2, 8, 1, 0),
    # The held-back set of tst_cost_published_heldout (release 26.04.01; GB200 LLAMA3_8B of
    # 25.11). Left out: the DeepSeek-V3 rows (their recipes' pp_layout, an uneven split search
    # does not generate) and the Qwen3 rows (not presets).
    ("H100 LLAMA3_70B TP4 PP8 VP5 GBS 256", "llama3-70b", "dgx-h100", 64, 256, 1, 4, 8, 1, 5, 1, 0),
    ("H100 LLAMA3.1_405B TP8 PP8 CP2 VP8 GBS 1536", "llama3.1-405b", "dgx-h100", 1024, 1536, 1, 8, 8, 2, 8, 1, 0),
    ("GB200 LLAMA3_8B DP8 MBS2", "llama3-8b", "gb200-nvl72", 8, 128, 2, 1, 1, 1, 1, 1, 0),
    ("GB200 LLAMA3_70B TP2 PP4 VP5", "llama3-70b", "gb200-nvl72", 64, 256, 1, 2, 4, 1, 5, 1, 0),
    ("GB200 LLAMA3.1_405B TP4 PP16 VP4 GBS 1536", "llama3.1-405b", "gb200-nvl72", 256, 1536, 1, 4, 16, 1, 4, 1, 0),
    # recompute_modules=["layernorm", "moe_act"] (gpt_oss_workload_base_configs.py:82 at 21d102f5e)
    ("H100 GPT OSS 120B PP4 EP8 bf16", "gpt-oss-120b", "dgx-h100", 64, 1280, 1, 1, 4, 1, 1, 1, 0, 4096, "bf16", 8,
     "layernorm,moe_act"),
    # recompute_modules=["layernorm", "moe_act"] (:75, the B200 V1 preset the V2 one of GBS
    # 1280 and EP8 inherits, :117-121; :58 and :102-106 for GB200, EP64).
    ("B200 GPT OSS 120B EP8 MBS4 bf16", "gpt-oss-120b", "dgx-b200", 64, 1280, 4, 1, 1, 1, 1, 1, 0, 4096, "bf16", 8,
     "layernorm,moe_act"),
    ("GB200 GPT OSS 120B EP64 MBS4 bf16", "gpt-oss-120b", "gb200-nvl72", 64, 1280, 4, 1, 1, 1, 1, 1, 0, 4096, "bf16",
     64, "layernorm,moe_act"),
]


def run(cli, args):
    out = subprocess.run([cli] + args, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{' '.join(args)}: exit {out.returncode}\n{out.stderr}")
    return json.loads(out.stdout)


def main():
    argv = sys.argv[1:]
    overlap = "--no-overlap" not in argv
    argv = [a for a in argv if a != "--no-overlap"]
    top = 400
    if "--top" in argv:
        i = argv.index("--top")
        top = int(argv[i + 1])
        del argv[i:i + 2]
    cli = argv[0] if argv else os.path.join(HERE, "build-ci/app/meshwork-cli")
    mode = "ring" if overlap else "none"
    print(f"TP overlap of the job: {mode}; search --top {top}")
    print("| layout | its estimate | search's best | rank |")
    print("|---|---|---|---|")
    with tempfile.TemporaryDirectory() as work:
        for row in ROWS:
            name, model, cluster, gpus, gbs, mbs, tp, pp, cp, vpp, zero, rec = row[:12]
            seq, dtype, ep = row[12:15] if len(row) > 12 else (8192, "fp8", 1)
            modules = row[15] if len(row) > 15 else ""
            dp = gpus // (tp * pp * cp)
            layout = {
                "format": "meshwork-layout", "version": 1, "name": name, "model": model,
                "cluster": cluster, "gpus": gpus,
                "parallel": {"tp": tp, "pp": pp, "cp": cp, "dp": dp, "vpp": vpp,
                             **({"ep": ep, "etp": 1} if ep > 1 else {}),
                             "sequence_parallel": tp > 1,
                             "tp_comm_overlap": mode if tp > 1 else "none"},
                "training": {"micro_batch_size": mbs, "global_batch_size": gbs, "seq_length": seq,
                             "dtype": dtype, "schedule": "interleaved" if vpp > 1 else "1f1b",
                             "recompute": "full" if rec else "none", "recompute_num_layers": rec,
                             "zero_stage": zero, "grad_reduce_in_bf16": True},
            }
            if modules:
                layout["training"]["recompute"] = "selective"
                layout["training"]["recompute_modules"] = modules.split(",")
            path = os.path.join(work, "layout.json")
            with open(path, "w") as f:
                json.dump(layout, f)
            # The 405B recipe counts the embedding and the loss as a layer each in the split
            # (Megatron-Bridge recipes/llama/llama3.py:413-414 at 00b7660b, :1146-1147 at 21d102f5e).
            split = ["--account-for-embedding", "--account-for-loss"] if model == "llama3.1-405b" else []
            mine = run(cli, ["estimate", path, "--json"] + split)["step_time_s"]
            found = run(cli, ["search", "--model", model, "--cluster", cluster, "--gpus", str(gpus),
                              "--gbs", str(gbs), "--seq", str(seq), "--dtype", dtype, "--no-sim",
                              "--top", str(top), "--tp-comm-overlap", mode,
                              "--grad-reduce-dtype", "bf16", "--json"]
                        + (["--recompute-modules", modules] if modules else []))
            times = [r["step_time_s"] for r in found["results"]]
            faster = sum(1 for t in times if t < mine * (1 - 1e-9))
            rank = f"{faster + 1}" if faster < len(times) else f"> {len(times)}"
            best = found["results"][0]
            label = best.get("label") or best["layout"].get("description", "")
            print(f"| {name} | {mine:.2f} s | {times[0]:.2f} s ({label}) | {rank} |")


if __name__ == "__main__":
    main()
