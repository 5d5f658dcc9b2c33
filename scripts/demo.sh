#!/usr/bin/env bash
# Sets up, builds, and runs the demo (GPU if there is one, CPU otherwise).
set -euo pipefail
source "$(dirname "$0")/env.sh"
"$ROOT/scripts/setup.sh"
exec "$ROOT/.venv/bin/python" "$ROOT/scripts/demo.py" "$@"
