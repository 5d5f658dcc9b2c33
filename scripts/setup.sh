#!/usr/bin/env bash
# Creates .venv with the pinned requirements (once) and builds the library (release).
# No pip cache: the CUDA wheels would write ~3 GB twice, and CI once failed with the disk full.
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$ROOT"
if [ ! -f .venv/.mate-requirements ] || ! cmp -s requirements.txt .venv/.mate-requirements; then
  python3 -m venv .venv
  .venv/bin/python -m pip install -q --no-cache-dir --upgrade pip
  .venv/bin/python -m pip install -q --no-cache-dir -r requirements.txt
  cp requirements.txt .venv/.mate-requirements
fi
cargo build --release
echo "built: $ROOT/target/release/libmate.so"
