"""One act-order bwg call per case (x gathered into the workspace first, kernels/gather.cuh), no
graphs, for compute-sanitizer. On the GPU machine, from the repo root:
  MATE_LIBRARY=$PWD/target/release/libmate.so PYTORCH_NO_CUDA_MEMORY_CACHING=1 \\
    compute-sanitizer --tool racecheck python3 bench/lab/act_gather_once.py [M ...]
Without arguments: M = 700 / 100 / 300 (the shared-memory row gather); M <= 64 takes the
element-parallel gather (launched programmatically on Hopper)."""
import sys
sys.path[:0] = ["torch_ops", "tests/python"]
import torch, mate  # noqa
from checkpoints import random_gptq, frame_from_gptq_v2, run_out, reference, errors
cases = ((700, 1536, torch.float16), (100, 4096, torch.bfloat16), (300, 1536, torch.float16))
if len(sys.argv) > 1:
    dts = (torch.float16, torch.bfloat16)
    cases = tuple((int(m), 4096, dts[i % 2]) for i, m in enumerate(sys.argv[1:]))
for M, K, dt in cases:
    ck = random_gptq(K, 256, 128, True, dt, "cuda", desc_act=True)
    fr = frame_from_gptq_v2(ck)
    x = torch.randn(M, K, device="cuda").to(dt)
    out = run_out(x, fr)
    torch.cuda.synchronize()
    print(M, K, dt, "err", errors(out, reference(ck, x, None))[0], flush=True)
