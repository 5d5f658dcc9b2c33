"""One mate call (after warm-up) for profilers: `ncu ... python3 bench/profile_one.py K N M [variant]`."""
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "torch_ops"), str(ROOT / "tests" / "python")]
import torch  # noqa: E402

import mate  # noqa: E402,F401
from checkpoints import pack_frame_v2  # noqa: E402

K, N, M = map(int, sys.argv[1:4])
if len(sys.argv) > 4:
    torch.ops.mate._force_variant(sys.argv[4])
q = torch.randint(0, 16, (K, N), device="cuda")
qw = pack_frame_v2(q)
s = (torch.rand(K // 128, N, device="cuda") * 0.02).half()
meta = torch.ops.mate.frame_meta(K, N, 128, False, False)
x = torch.randn(M, K, device="cuda").half()
out = torch.empty(M, N, device="cuda").half()
need = torch.ops.mate.w4a16_workspace_size(x, meta)
ws = torch.zeros(max(need, 1), dtype=torch.uint8, device="cuda")
for _ in range(3):
    torch.ops.mate.w4a16_gemm.out(x, qw, meta, s, None, None, None, 128, workspace=ws, out=out)
torch.cuda.synchronize()
