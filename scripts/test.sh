#!/usr/bin/env bash
# Runs every test: Rust tests (CPU), then pytest (CPU tests here; GPU tests run where CUDA is,
# and are skipped with a reason elsewhere). Sets up and builds first.
set -euo pipefail
source "$(dirname "$0")/env.sh"
"$ROOT/scripts/setup.sh"
cd "$ROOT"
cargo test --release
export MATE_LIBRARY="$ROOT/target/release/libmate.so"
.venv/bin/python -m pytest -q tests/python "$@"
