"""One mate call (after warm-up) for profilers: `ncu ... python3 bench/profile_one.py K N M [variant]`."""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "torch_ops"), str(ROOT / "tests" / "python")]
import torch  # noqa: E402

from random_frame import random_call  # noqa: E402

K, N, M = map(int, sys.argv[1:4])
if len(sys.argv) > 4:
    torch.ops.mate._force_variant(sys.argv[4])
f = random_call(K, N, M)
for _ in range(3):
    f.call()
torch.cuda.synchronize()
