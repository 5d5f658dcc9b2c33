# Sourced by the scripts: the build environment (venv python first on PATH, tch against its torch).
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PATH="$ROOT/.venv/bin:$PATH"
export MATE_PYTHON="$ROOT/.venv/bin/python"
export LIBTORCH_USE_PYTORCH=1
export PYTHONUNBUFFERED=1
