#!/usr/bin/env bash
# The GPU path is a plugin (core/engine/cuda_plugin.h): checks of the built binaries that only
# the binaries themselves can answer. Registered in tests/cli/CMakeLists.txt.
#
#   cuda_plugin_checks.sh linkage CLI GUI PLUGIN RESOURCES
#       no executable has a CUDA library among its NEEDED entries; the plugin has cudart,
#       cuBLAS(Lt), NCCL and CUPTI; every Meshwork symbol the plugin leaves undefined is
#       exported by each executable; a CPU run maps no CUDA library, and --backend cuda
#       loads the plugin (and exits 2 here, without a GPU); `--version` stays within 40 MB
#       resident. GUI and PLUGIN may be "-" (a build without them).
#   cuda_plugin_checks.sh hidden CLI PLUGIN RESOURCES CUDA_ROOT
#       the CUDA toolkit folder hidden by an empty tmpfs in a private mount namespace (root
#       and unshare needed, else exit 77 = skipped): a CPU run with --check and --profile
#       and `stats` of its trace work, and --backend cuda exits 2 naming the missing library.
set -uo pipefail

fail() {
  echo "FAIL: $*" >&2
  exit 1
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cuda_libs='lib(cuda|cudart|cublas|cublasLt|nccl|cupti|nvrtc|nvToolsExt|nvJitLink)\.so'

needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }

mode=${1:-}
case "$mode" in
linkage)
  cli=$2 gui=$3 plugin=$4 resources=$5
  for exe in "$cli" "$gui"; do
    [[ "$exe" == - ]] && continue
    bad=$(needed "$exe" | grep -E "^$cuda_libs" | tr '\n' ' ')
    [[ -z "$bad" ]] || fail "$(basename "$exe") links CUDA libraries: $bad"
    echo "ok: $(basename "$exe") NEEDED has no CUDA library ($(needed "$exe" | wc -l) entries)"
  done
  if [[ "$plugin" != - ]]; then
    for lib in libcudart libcublas libnccl libcupti; do
      needed "$plugin" | grep -q "^$lib" || fail "the plugin does not link $lib: $(needed "$plugin" | tr '\n' ' ')"
    done
    echo "ok: the plugin links $(needed "$plugin" | grep -E "^$cuda_libs" | tr '\n' ' ')"
    # Meshwork's functions the plugin calls are resolved at dlopen time from the executable.
    nm -D --undefined-only "$plugin" | awk '{print $2}' | grep -v '@' | sort -u >"$tmp/undefined"
    for exe in "$cli" "$gui"; do
      [[ "$exe" == - ]] && continue
      nm -D --defined-only "$exe" | awk '{print $3}' | sort -u >"$tmp/defined"
      missing=$(comm -23 "$tmp/undefined" "$tmp/defined" | c++filt | grep 'meshwork' | head -5)
      [[ -z "$missing" ]] || fail "$(basename "$exe") does not export what the plugin needs: $missing"
    done
    echo "ok: every Meshwork symbol the plugin needs is exported by the executables"
  fi
  # A CPU run loads no CUDA library, even where they are installed.
  MESHWORK_RESOURCES=$resources LD_DEBUG=files "$cli" run --model tiny --seq 16 --mbs 1 --gbs 2 --steps 1 \
    >"$tmp/cpu.out" 2>"$tmp/cpu.ld" || fail "the CPU run failed: $(tail -n 3 "$tmp/cpu.out")"
  loaded=$(grep -oE "file=[^ ]*$cuda_libs[^ ]*" "$tmp/cpu.ld" | sort -u | tr '\n' ' ')
  [[ -z "$loaded" ]] || fail "a CPU run loaded CUDA libraries: $loaded"
  grep -q 'file=libmeshwork_cuda' "$tmp/cpu.ld" && fail "a CPU run loaded the CUDA plugin"
  echo "ok: a CPU run loads no CUDA library and not the plugin"
  if [[ "$plugin" != - ]]; then
    MESHWORK_RESOURCES=$resources LD_DEBUG=files "$cli" run --model tiny --seq 16 --mbs 1 --gbs 2 --steps 1 \
      --backend cuda >"$tmp/gpu.out" 2>"$tmp/gpu.ld"
    rc=$?
    grep -q 'file=.*libcudart' "$tmp/gpu.ld" || fail "--backend cuda did not load the plugin's libraries"
    if [[ $rc -eq 2 ]]; then
      err=$(grep '^error:' "$tmp/gpu.ld" | tail -n 1)
      [[ "$err" == *"--backend: no GPU"* || "$err" == *"GPU driver"* || "$err" == *"too few GPUs"* ]] ||
        fail "--backend cuda without a GPU: unexpected message: $err"
      echo "ok: --backend cuda loads the plugin and exits 2: $err"
    elif [[ $rc -eq 0 ]]; then
      echo "ok: --backend cuda ran on this machine's GPU"
    else
      fail "--backend cuda exited $rc: $(tail -n 2 "$tmp/gpu.ld")"
    fi
  fi
  if [[ -x /usr/bin/time ]]; then
    /usr/bin/time -v "$cli" --version >/dev/null 2>"$tmp/time" || fail "--version failed"
    kb=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$tmp/time")
    ((kb <= 40 * 1024)) || fail "meshwork-cli --version used $kb kB resident, over 40 MB"
    echo "ok: meshwork-cli --version: $kb kB resident (limit 40960)"
  else
    echo "note: /usr/bin/time is missing; the --version memory check did not run"
  fi
  ;;
hidden)
  cli=$2 plugin=$3 resources=$4 cuda_root=$5
  if [[ $(id -u) -ne 0 ]]; then
    echo "SKIP: hiding the CUDA toolkit needs root (unshare -m and mount)"
    exit 77
  fi
  if ! unshare -m true 2>/dev/null; then
    echo "SKIP: unshare -m is not permitted here (no CAP_SYS_ADMIN in this container)"
    exit 77
  fi
  [[ -d "$cuda_root" ]] || fail "the CUDA toolkit folder $cuda_root does not exist"
  case "$(realpath "$cuda_root")" in
  / | /usr | /usr/local | /opt)
    # A toolkit installed into the system folders cannot be hidden without hiding the system.
    echo "SKIP: the CUDA toolkit is in $cuda_root, a system folder that cannot be hidden"
    exit 77
    ;;
  esac
  # Inside: the toolkit is an empty folder; every step's outcome goes to a file read below.
  MESHWORK_RESOURCES=$resources unshare -m bash -c '
    set -u
    mount -t tmpfs none "$1" || exit 77
    cli=$2 plugin=$3 tmp=$4
    if [[ "$plugin" != - ]]; then
      ldd "$plugin" >"$tmp/ldd" 2>&1
      grep -q "libcudart.* => not found" "$tmp/ldd" || { echo "the toolkit is still visible: $(grep cudart "$tmp/ldd")"; exit 1; }
    fi
    "$cli" run --model tiny --tp 2 --seq 16 --mbs 1 --gbs 2 --steps 2 --check --profile "$tmp/run.sqlite" >"$tmp/run.out" 2>&1
    echo "run $?" >>"$tmp/rc"
    "$cli" stats "$tmp/run.sqlite" --json >"$tmp/stats.json" 2>&1
    echo "stats $?" >>"$tmp/rc"
    "$cli" run --model tiny --seq 16 --mbs 1 --gbs 2 --steps 1 --backend cuda >"$tmp/cuda.out" 2>&1
    echo "cuda $?" >>"$tmp/rc"
  ' hide "$cuda_root" "$cli" "$plugin" "$tmp"
  rc=$?
  [[ $rc -eq 77 ]] && { echo "SKIP: mounting over $cuda_root is not permitted here"; exit 77; }
  [[ $rc -eq 0 ]] || fail "hiding $cuda_root: exit $rc"
  grep -q '^run 0$' "$tmp/rc" || fail "the CPU run with the toolkit hidden failed: $(tail -n 3 "$tmp/run.out")"
  grep -q 'check passed' "$tmp/run.out" || fail "the CPU run's check did not pass: $(tail -n 3 "$tmp/run.out")"
  echo "ok: CPU run (tp 2, --check, --profile) with $cuda_root hidden"
  grep -q '^stats 0$' "$tmp/rc" || fail "stats of its trace failed: $(tail -n 3 "$tmp/stats.json")"
  echo "ok: stats of its trace"
  grep -q '^cuda 2$' "$tmp/rc" || fail "--backend cuda with the toolkit hidden: $(cat "$tmp/rc"): $(cat "$tmp/cuda.out")"
  msg=$(cat "$tmp/cuda.out")
  if [[ "$plugin" != - ]]; then
    [[ "$msg" == *"needs libcudart.so"* ]] || fail "--backend cuda does not name the missing library: $msg"
  else
    [[ "$msg" == *"CUDA plugin is not installed"* ]] || fail "--backend cuda does not name the missing plugin: $msg"
  fi
  echo "ok: --backend cuda exits 2: $msg"
  ;;
*)
  echo "usage: $0 linkage CLI GUI PLUGIN RESOURCES | hidden CLI PLUGIN RESOURCES CUDA_ROOT" >&2
  exit 2
  ;;
esac
