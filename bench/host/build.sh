#!/usr/bin/env bash
# Builds bench/host/libempty_op.so (the empty-kernel op bench/host_cost.py compares mate against).
# nvcc: $NVCC, else `nvcc` on PATH (the GPU machine), else the pinned CUDA wheel's (this repo's .venv).
# Python (for torch's paths): $PYTHON, else .venv/bin/python, else python3.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
py=${PYTHON:-}
if [[ -z "$py" ]]; then
  if [[ -x "$root/.venv/bin/python" ]]; then py=$root/.venv/bin/python; else py=python3; fi
fi
torch_dir=$("$py" -c 'import os, torch; print(os.path.dirname(torch.__file__))')
wheel_cuda=$("$py" -c 'import os, nvidia; print(os.path.join(list(nvidia.__path__)[0], "cu13"))' 2>/dev/null || true)
nvcc=${NVCC:-}
if [[ -z "$nvcc" ]]; then
  if command -v nvcc >/dev/null; then nvcc=$(command -v nvcc)
  elif [[ -n "$wheel_cuda" && -x "$wheel_cuda/bin/nvcc" ]]; then nvcc=$wheel_cuda/bin/nvcc
  else echo "build.sh: no nvcc (set NVCC, put nvcc on PATH, or install the CUDA wheels of requirements.txt)" >&2; exit 1
  fi
fi
cuda_home=$(cd "$(dirname "$nvcc")/.." && pwd)
# Link the shared cudart torch itself uses (libcudart.so.13), found next to nvcc or in the wheel.
cudart=()
for d in "$cuda_home/lib64" "$cuda_home/lib" "$wheel_cuda/lib"; do
  if [[ -n "$d" && -e "$d/libcudart.so.13" ]]; then cudart=(-cudart none "-L$d" -l:libcudart.so.13); break; fi
done
[[ ${#cudart[@]} -gt 0 ]] || echo "build.sh: libcudart.so.13 not found; nvcc's default (static cudart)" >&2
set -x
"$nvcc" -std=c++17 -shared -Xcompiler -fPIC -D_GLIBCXX_USE_CXX11_ABI=1 -O2 \
  -gencode arch=compute_90a,code=sm_90a \
  -I "$cuda_home/include" -I "$torch_dir/include" -I "$torch_dir/include/torch/csrc/api/include" \
  "$here/empty_op.cu" -o "$here/libempty_op.so" \
  -L "$torch_dir/lib" -ltorch -ltorch_cpu -lc10 -ltorch_cuda -lc10_cuda "${cudart[@]}" \
  -Xlinker -rpath -Xlinker "$torch_dir/lib"
