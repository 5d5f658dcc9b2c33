"""One cuBLAS fp16 linear (after warm-up) for profilers: `ncu ... python3 bench/lab/fp16_one.py K N M`
(the fp16 arm of bench/decode.py: x [M, K] @ w[N, K]^T, random normal data)."""
import sys

import torch

K, N, M = map(int, sys.argv[1:4])
g = torch.Generator(device="cuda").manual_seed(1)
x = torch.randn(M, K, device="cuda", dtype=torch.float16, generator=g)
w = torch.randn(N, K, device="cuda", dtype=torch.float16, generator=g) * 0.02
for _ in range(3):
    torch.nn.functional.linear(x, w)
torch.cuda.synchronize()
