#!/usr/bin/env bash
# One-shot GPU check (docs/gpu.md): on a machine with NVIDIA GPUs, builds Meshwork with CUDA,
# runs the GPU test suites, then measures and writes everything into one results folder:
#   device.txt     nvidia-smi and the CUDA device summary
#   build.log      configure + build
#   tests.txt      ctest -L gpu (each suite passes, fails or is skipped with its reason)
#   gemm.txt       GEMM TFLOP/s at 4096³ and 8192³ against the dense peak (bench_gpu_gemm)
#   model-1b.json  the ~1B dense model (Llama-3.2-1B shape) the step-time runs use
#   step.txt/.json meshwork-cli run --backend cuda on one GPU: step time, tokens/s; MFU
#   nccl.txt       bus bandwidth per collective when there are 2+ GPUs (bench_gpu_nccl)
#   profile.*      the same run with --profile: the CUPTI collector of the CUDA plugin
#                  records kernels, NCCL kernels, copies and NVTX ranges into the trace
#                  beside the host events; its GPU tracks counted, `stats`, and the
#                  profiler overhead (step time with --profile against the same run without)
#   summary.txt    one line per step: ok / FAILED / skipped / dry-run, and the headline
#                  figures; the script exits 1 when a step FAILED
# Usage: bench/gpu-check.sh [--dry-run] [RESULTS_DIR]
#   --dry-run                no GPU needed (CI runs it): every step with its paths and the
#                            summary format; the build is planned (ninja -n) in an existing
#                            build folder, the GPU suites run and skip, the CUDA runs must
#                            be refused with exit 2 and their reason and leave no trace
#                            file, and the overhead arithmetic runs on the CPU engine
#   MESHWORK_GPU_BUILD=DIR   build folder (default build-gpu-check, with --dry-run
#                            build-ci); an existing build is reused,
#                            MESHWORK_GPU_NO_BUILD=1 skips building altogether
#   MESHWORK_CUDA_ARCH=90    architectures (default: the GPU's own compute capability)
# Every step has its own time limit; the whole script stays under 8 minutes on one H200.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dry=0
if [[ "${1:-}" == --dry-run ]]; then
  dry=1
  shift
fi
out=${1:-$root/gpu-results/$(date +%Y%m%d-%H%M%S)}
if [[ $dry == 1 ]]; then
  build=${MESHWORK_GPU_BUILD:-$root/build-ci}
else
  build=${MESHWORK_GPU_BUILD:-$root/build-gpu-check}
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
summary=$out/summary.txt
: >"$summary"
start_s=$(date +%s)

note() { echo "$*" | tee -a "$summary"; }
# step NAME LIMIT_S LOGFILE CMD...: runs CMD under a time limit, records the outcome.
step() {
  local name=$1 limit=$2 log=$3
  shift 3
  local t0=$(date +%s)
  timeout --kill-after=10 "$limit" "$@" >"$log" 2>&1
  local rc=$?
  local took=$(( $(date +%s) - t0 ))
  if [[ $rc -eq 0 ]]; then
    note "ok       $name (${took} s)"
  elif [[ $rc -eq 124 || $rc -eq 137 ]]; then
    note "FAILED   $name: over its ${limit} s limit (log: $(basename "$log"))"
  else
    note "FAILED   $name: exit $rc (log: $(basename "$log")): $(tail -n 1 "$log")"
  fi
  return $rc
}
# gpu_step NAME LIMIT_S LOGFILE CMD...: a step that needs a GPU. With --dry-run it must be
# refused the way a machine without a GPU refuses it: exit 2 and an "error: ... --backend:"
# line naming the reason (no plugin, a library, no driver, no device).
gpu_step() {
  if [[ $dry == 0 ]]; then
    step "$@"
    return
  fi
  local name=$1 limit=$2 log=$3
  shift 3
  timeout --kill-after=10 "$limit" "$@" >"$log" 2>&1
  local rc=$?
  local why
  why=$(grep -m1 -- '--backend:' "$log")
  if [[ $rc -eq 2 && -n "$why" ]]; then
    note "dry-run  $name: refused without a GPU (exit 2): ${why#error: }"
  else
    note "FAILED   $name: expected exit 2 naming why there is no GPU, got exit $rc: $(tail -n 1 "$log")"
  fi
  return 1  # nothing measured
}
# num KEY FILE: the last number after "KEY" (JSON "KEY": N or plain "KEY N") in FILE.
num() {
  grep -oE "\"?$1\"?[: ]+[-+0-9.eE]+" "$2" 2>/dev/null | tail -n 1 | grep -oE '[-+0-9.eE]+$'
}

# ---- the device -------------------------------------------------------------------------
{ nvidia-smi || echo "nvidia-smi: not available"; } >"$out/device.txt" 2>&1
gpus=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | wc -l)
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 | tr -d ' .')
arch=${MESHWORK_CUDA_ARCH:-${cc:-"80;90;100"}}
note "device   $gpus GPU(s), compute capability ${cc:-unknown}, building for $arch"

# ---- build ------------------------------------------------------------------------------
cli=$build/app/meshwork-cli
plugin=$build/app/libmeshwork_cuda.so
# The targets of the check that this build folder defines (the benchmarks need Google
# Benchmark, the GPU suites Qt 6 Test).
gpu_targets() {
  local t all
  all=$(ninja -C "$build" -t targets all 2>/dev/null | cut -d: -f1)
  for t in meshwork-cli meshwork_cuda bench_gpu_gemm bench_gpu_nccl tst_gpu_kernels tst_gpu_backend tst_gpu_nccl tst_gpu_layouts; do
    grep -qx -- "$t" <<<"$all" && echo "$t"
  done
}
if [[ $dry == 1 && "${MESHWORK_GPU_NO_BUILD:-0}" != 1 ]]; then
  # The configure line a GPU machine runs, and the build plan in the existing folder.
  note "dry-run  configure: cmake -S $root -B $build -G Ninja -DMESHWORK_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=$arch ..."
  mapfile -t targets < <(gpu_targets)
  if [[ " ${targets[*]} " != *" meshwork-cli "* || " ${targets[*]} " != *" meshwork_cuda "* ]]; then
    note "FAILED   build plan: $build defines no meshwork-cli or meshwork_cuda target (configure with -DMESHWORK_CUDA=ON)"
  fi
  step "build plan (${targets[*]})" 60 "$out/build.log" ninja -C "$build" -n "${targets[@]}"
elif [[ "${MESHWORK_GPU_NO_BUILD:-0}" != 1 ]]; then
  step "configure" 120 "$out/configure.log" \
    cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DMESHWORK_GUI=OFF \
      -DMESHWORK_CUDA=ON "-DCMAKE_CUDA_ARCHITECTURES=$arch" -DMESHWORK_BUILD_TESTS=ON \
      -DMESHWORK_BUILD_BENCH=ON
  mapfile -t targets < <(gpu_targets)
  step "build (${targets[*]})" 300 "$out/build.log" ninja -C "$build" -j "$(nproc)" "${targets[@]}"
fi
{
  echo "--- as the CUDA backend sees it"
  if [[ -x "$build/bench/bench_gpu_gemm" ]]; then "$build/bench/bench_gpu_gemm" --info; fi
  "$cli" --version
} >>"$out/device.txt" 2>&1
if [[ -x "$cli" ]]; then
  note "ok       meshwork-cli: $cli"
else
  note "FAILED   meshwork-cli: $cli is missing"
fi
if [[ -f "$plugin" ]]; then
  note "ok       CUDA plugin: $plugin ($(readelf -d "$plugin" | grep -oE 'lib(cudart|cublasLt|nccl|cupti)[^]]*' | tr '\n' ' '))"
else
  note "FAILED   CUDA plugin: $plugin is missing (configure with -DMESHWORK_CUDA=ON)"
fi

# ---- GPU tests ----------------------------------------------------------------------------
if ls "$build"/tests/gpu/tst_gpu_* >/dev/null 2>&1; then
  step "gpu tests" 240 "$out/tests.txt" ctest --test-dir "$build" -L gpu --output-on-failure
else
  note "skipped  gpu tests: not built (Qt 6 Test missing on this machine?)"
fi

# ---- GEMM rate ----------------------------------------------------------------------------
if [[ ! -x "$build/bench/bench_gpu_gemm" ]]; then
  note "skipped  gemm: bench_gpu_gemm is not built (MESHWORK_BUILD_BENCH=OFF, or Google Benchmark missing)"
elif step "gemm" 90 "$out/gemm.txt" "$build/bench/bench_gpu_gemm" --size 4096 --size 8192; then
  line=$(grep -E '^gemm bf16 8192x' "$out/gemm.txt")
  note "         bf16 8192³: $(echo "$line" | awk '{print $7 " TFLOP/s, " $11*100 "% of " $9 " dense peak"}')"
fi

# ---- a ~1B dense model on one GPU ------------------------------------------------------------
# Llama-3.2-1B's shape (1.24 B parameters with tied embeddings): hidden 2048, 16 layers,
# 32 heads with 8 KV heads, SwiGLU 8192, vocabulary 128256.
cat >"$out/model-1b.json" <<'JSON'
{
  "architectures": ["LlamaForCausalLM"], "model_type": "llama",
  "hidden_size": 2048, "intermediate_size": 8192, "num_hidden_layers": 16,
  "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256,
  "max_position_embeddings": 8192, "rms_norm_eps": 1e-05, "rope_theta": 500000.0,
  "hidden_act": "silu", "tie_word_embeddings": true, "torch_dtype": "bfloat16",
  "_source": "Llama-3.2-1B shape for bench/gpu-check.sh"
}
JSON
layout=(--model "$out/model-1b.json" --cluster dgx-h200 --gpus 1 --mbs 2 --gbs 8 --seq 2048)
step "estimate 1B" 30 "$out/estimate.json" "$cli" estimate "${layout[@]}" --dtype bf16 --json
est_step=$(num step_time_s "$out/estimate.json")
est_mfu=$(num mfu "$out/estimate.json")
# Measured MFU = predicted MFU × predicted step time / measured step time: the same model
# FLOPs and peak as `estimate`, so the two are comparable.
mfu_of() {
  awk -v m="$1" -v e="$est_mfu" -v t="$est_step" 'BEGIN { if (m > 0 && e > 0) printf "%.3f", e * t / m; else print "n/a" }'
}
# Step time: mean of the steps after the first (warm-up: allocator, cuBLASLt heuristics).
mean_step() {
  grep -oE '"step_time_s"[: ]+[0-9.eE+-]+' "$1" | grep -oE '[0-9.eE+-]+$' | tail -n +2 |
    awk '{ s += $1; n++ } END { if (n) printf "%.4f", s / n; else print 0 }'
}
for mode in tf32 bf16; do
  if MESHWORK_CUDA_GEMM=$mode gpu_step "run 1B ($mode GEMMs)" 150 "$out/step-$mode.json" \
      "$cli" run "${layout[@]}" --backend cuda --steps 4 --json; then
    t=$(mean_step "$out/step-$mode.json")
    note "         1B step ${t} s with $mode GEMMs, MFU $(mfu_of "$t") (predicted step ${est_step:-?} s, MFU ${est_mfu:-?})"
  fi
done

# ---- NCCL bus bandwidth -------------------------------------------------------------------
if [[ "$gpus" -ge 2 && ! -x "$build/bench/bench_gpu_nccl" ]]; then
  note "skipped  nccl busbw: bench_gpu_nccl is not built"
elif [[ "$gpus" -ge 2 ]]; then
  step "nccl busbw ($gpus GPUs)" 120 "$out/nccl.txt" "$build/bench/bench_gpu_nccl" --max-bytes 268435456
  grep -E 'bytes 268435456' "$out/nccl.txt" | awk '{print "         " $2 " 256 MiB busbw " $12 " GB/s"}' | tee -a "$summary"
else
  note "skipped  nccl busbw: one GPU"
fi

# ---- profiled run ---------------------------------------------------------------------------
# The same run with --profile: CUPTI (from the plugin) records the GPUs into the trace beside
# the engine's host events. Overhead = profiled step time / plain step time - 1.
overhead() {
  awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0) printf "%.1f%%", (b / a - 1) * 100; else print "n/a" }'
}
rm -f "$out/profile.sqlite"
if MESHWORK_CUDA_GEMM=bf16 gpu_step "run 1B --profile" 150 "$out/profile-run.json" \
    "$cli" run "${layout[@]}" --backend cuda --steps 4 --json --profile "$out/profile.sqlite"; then
  step "stats of the profile" 60 "$out/profile-stats.json" "$cli" stats "$out/profile.sqlite" --json
  if command -v sqlite3 >/dev/null; then
    gpu_tracks=$(sqlite3 "$out/profile.sqlite" "SELECT count(*) FROM tracks WHERE name LIKE 'gpu %'")
    kernels=$(sqlite3 "$out/profile.sqlite" "SELECT count(*) FROM events e JOIN tracks t ON e.track = t.id WHERE t.name LIKE 'gpu %'")
    nccl=$(sqlite3 "$out/profile.sqlite" "SELECT count(*) FROM events e JOIN tracks t ON e.track = t.id WHERE t.name LIKE 'gpu %' AND e.kind = 1")
    in_layers=$(sqlite3 "$out/profile.sqlite" "SELECT count(*) FROM events e JOIN tracks t ON e.track = t.id WHERE t.name LIKE 'gpu %' AND e.layer >= 0")
    ranges=$(sqlite3 "$out/profile.sqlite" "SELECT count(*) FROM events e JOIN tracks t ON e.track = t.id WHERE t.name LIKE 'host thread %' AND e.kind = 4")
    if [[ "${kernels:-0}" -gt 0 ]]; then
      note "ok       CUPTI in the profile: $gpu_tracks GPU stream tracks, $kernels device events ($nccl communication, $in_layers with a layer), $ranges NVTX ranges"
    else
      note "FAILED   CUPTI in the profile: no device events on GPU tracks"
    fi
  fi
  plain=$(mean_step "$out/step-bf16.json")
  prof=$(mean_step "$out/profile-run.json")
  note "         profiler overhead $(overhead "$plain" "$prof") of step time (bf16, ${plain} s without --profile, ${prof} s with)"
elif [[ $dry == 1 ]]; then
  if [[ -e "$out/profile.sqlite" ]]; then
    note "FAILED   the refused profiled run left $out/profile.sqlite behind"
  else
    note "ok       the refused profiled run left no trace file"
  fi
  # The overhead arithmetic and the stats step, on the CPU engine's own events.
  tiny=(--model tiny --seq 32 --mbs 2 --gbs 8 --steps 4 --json)
  if step "cpu run (dry-run overhead baseline)" 60 "$out/cpu-run.json" "$cli" run "${tiny[@]}" &&
     step "cpu run --profile (dry-run)" 60 "$out/cpu-profile-run.json" "$cli" run "${tiny[@]}" --profile "$out/cpu-profile.sqlite" &&
     step "stats of the CPU profile" 60 "$out/cpu-profile-stats.json" "$cli" stats "$out/cpu-profile.sqlite" --json; then
    note "         profiler overhead $(overhead "$(mean_step "$out/cpu-run.json")" "$(mean_step "$out/cpu-profile-run.json")") of step time (CPU engine, dry-run)"
  fi
fi

note "total    $(( $(date +%s) - start_s )) s; results in $out"
if grep -q '^FAILED' "$summary"; then
  exit 1
fi
