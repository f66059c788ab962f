#!/usr/bin/env bash
# Meshwork set-up on Debian 12: installs what is missing (idempotent, no prompts), builds,
# then runs the main job.
#
#   .ci/bootstrap.sh demo   GUI with the bundled example layout when a display is present,
#                           otherwise the headless demo (describe, estimate, CPU run with a
#                           profile, stats) on the bundled tiny model
#   .ci/bootstrap.sh test   every test through CTest (prints ctest's summary)
#
# Environment: MESHWORK_PRESET (default: ci when the CUDA toolkit is at /usr/local/cuda,
# otherwise default), MESHWORK_SKIP_INSTALL=1 to skip the package step.
set -euo pipefail

job="${1:-demo}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

# ---- Packages ------------------------------------------------------------------------
packages=(
  build-essential cmake ninja-build pkg-config git
  qt6-base-dev qt6-base-dev-tools libqt6sql6-sqlite qt6-charts-dev qt6-svg-dev
  libqt6opengl6-dev libgl1-mesa-dev libsqlite3-dev sqlite3 libopenblas-dev libopenmpi-dev
  openmpi-bin nlohmann-json3-dev libcli11-dev zlib1g-dev libbenchmark-dev libtomlplusplus-dev
  libsimdjson-dev libdeflate-dev python3
  xvfb xauth fonts-dejavu-core
)
if [[ "${MESHWORK_SKIP_INSTALL:-0}" != 1 ]]; then
  missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if ((${#missing[@]})); then
    echo "meshwork: installing ${missing[*]}"
    sudo=""
    [[ $(id -u) -ne 0 ]] && sudo="sudo"
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      "${missing[@]}" >/dev/null
  fi
fi

# ---- Build ---------------------------------------------------------------------------
if [[ -n "${MESHWORK_PRESET:-}" ]]; then
  preset="$MESHWORK_PRESET"
elif [[ -x /usr/local/cuda/bin/nvcc ]]; then
  preset=ci
else
  preset=default
fi
jobs="$(nproc)"
cmake --preset "$preset"
cmake --build --preset "$preset" -j "$jobs"
case "$preset" in
  default) build_dir="$root/build" ;;
  *) build_dir="$root/build-$preset" ;;
esac
cli="$build_dir/app/meshwork-cli"

case "$job" in
  test)
    export QT_QPA_PLATFORM=offscreen
    ctest --preset "$preset" -j "$jobs"
    ;;
  demo)
    if [[ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" && -x "$build_dir/app/meshwork" ]]; then
      exec "$build_dir/app/meshwork" "$root/resources/layouts/llama3-70b-h100-64.json"
    fi
    exec "$root/.ci/demo.sh" "$cli"
    ;;
  *)
    echo "usage: $0 demo|test" >&2
    exit 2
    ;;
esac
