#!/usr/bin/env bash
# The headless demo: what meshwork-cli does, end to end, on bundled examples.
# Usage: .ci/demo.sh PATH/TO/meshwork-cli
set -euo pipefail
cli="${1:?usage: $0 PATH/TO/meshwork-cli}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
layouts="$root/resources/layouts"
out="$(mktemp -d -t meshwork-demo.XXXXXX)"
has_verb() { "$cli" --help | grep -qE "^  $1 "; }
step() { printf '\n\033[1m$ meshwork-cli %s\033[0m\n' "$*"; "$cli" "$@"; }

step presets
step describe --model llama3.1-405b --cluster dgx-h100 --gpus 16384 --tp 8 --pp 16
step validate "$layouts/llama3.1-405b-h100-16384.json"
if has_verb estimate; then
  step estimate "$layouts/llama3-70b-h100-64.json"
fi
if has_verb run; then
  if has_verb stats; then
    step run "$layouts/tiny-cpu.json" --steps 3 --check --profile "$out/tiny-cpu.sqlite"
    step stats "$out/tiny-cpu.sqlite"
  else
    step run "$layouts/tiny-cpu.json" --steps 3 --check
  fi
fi
if has_verb export; then
  step export "$layouts/llama3-70b-h100-64.json" --format megatron
fi
echo
echo "demo outputs in $out"
