#!/usr/bin/env bash
# Checks the Ray Data recipe (scripts/scale-out/) in local mode on this machine: makes a venv outside
# the repository (default /work/venv-scale, or $SCALE_VENV) with the pinned requirements, builds
# swiftlite if needed, and runs scripts/scale-out/check_scale_out.py. Not part of `swift test`.
#
#   scripts/check-scale-out.sh                       # uses .build/release/swiftlite, else builds debug
#   SWIFTLITE=/path/to/swiftlite scripts/check-scale-out.sh
set -euo pipefail
repo=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)
venv=${SCALE_VENV:-/work/venv-scale}
case "$venv" in "$repo"/*) echo "error: the venv must be outside the repository" >&2; exit 2 ;; esac
if [ ! -x "$venv/bin/python" ]; then python3 -m venv "$venv"; fi
"$venv/bin/pip" install -q -r "$repo/scripts/scale-out/requirements.txt"

swiftlite=${SWIFTLITE:-}
if [ -z "$swiftlite" ]; then
  if [ -x "$repo/.build/release/swiftlite" ]; then
    swiftlite="$repo/.build/release/swiftlite"
  else
    (cd "$repo" && swift build --product swiftlite)
    swiftlite="$repo/.build/debug/swiftlite"
  fi
fi
echo "swiftlite: $swiftlite"
"$venv/bin/python" "$repo/scripts/scale-out/check_scale_out.py" --swiftlite "$swiftlite" \
  --model "$repo/Models/efficientnet_lite0_f32.tflite" "$@"
