#!/usr/bin/env bash
# The library's wg x-by-TMA path (branch wg-tma-x): its GPU tests, then prefill timing. On the GPU
# machine, from the repository root, with the library built from this branch:
#   MATE_LIBRARY=$PWD/target/release/libmate.so OUT=/tmp/out bash bench/lab/wg_tma_lib.sh
# BASE_LIBRARY=<main's libmate.so> also times main's build (cp.async x) in alternating rounds.
set -uo pipefail
: "${MATE_LIBRARY:?set MATE_LIBRARY to the branch's libmate.so}"
OUT="${OUT:-$(mktemp -d)}"
export MATE_LIBRARY
echo "### GPU tests (x paths, launch log, every forced variant)"
timeout 400 python3 -m pytest -q -m gpu tests/python/test_wg_x_path.py tests/python/test_launch_log.py \
  "tests/python/test_gpu_matrix.py::test_every_variant_forced" 2>&1 | tail -15
echo "### the x path the planned prefill launches use"
python3 - <<'PY'
import os, sys, torch
sys.path.insert(0, "tests/python"); sys.path.insert(0, "torch_ops")
import mate  # noqa: F401
from checkpoints import frame_from_gptq_v2, random_gptq, run_out
fr = frame_from_gptq_v2(random_gptq(4096, 28672, 128, True, torch.float16, "cuda"))
for M in (128, 256, 1024, 4096):
    x = torch.randn(M, 4096, device="cuda").half()
    run_out(x, fr)
    torch.ops.mate._launch_log(True); run_out(x, fr); torch.cuda.synchronize()
    print(M, torch.ops.mate._launch_log(False))
PY
SH=llama8b.gate_up,llama70b.o,llama70b.down
echo "### prefill timing"
timeout 240 python3 bench/decode.py --shapes $SH --m 128,256,1024,4096 --arms mate,fp16 --json "$OUT/prefill-tma.json" 2>&1 | tail -20
if [ -n "${BASE_LIBRARY:-}" ]; then
  for r in 1 2; do
    for lib in "$BASE_LIBRARY" "$MATE_LIBRARY"; do
      tag=$([ "$lib" = "$MATE_LIBRARY" ] && echo tma || echo base)
      echo "-- round $r $tag"
      timeout 120 python3 bench/decode.py --library "$lib" --shapes $SH --m 128,256,1024,4096 --arms mate \
        --json "$OUT/prefill-ab-$r-$tag.json" 2>&1 | grep -E "M= *[0-9]+"
    done
  done
fi
echo "results in $OUT"
