"""Experiment: does the order in which the GPU streams a buffer change the read bandwidth?
A: one program per 16 KB block (the read arm); B: 264 persistent programs, each a contiguous
range; C: 264 persistent programs, grid-stride over 16 KB blocks. Graph-timed over rotating copies."""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]
import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

from bench.timing import copies_for, graph_time_us  # noqa: E402


@triton.jit
def blocks(ptr, out, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(ptr + offs, mask=offs < n, other=0, cache_modifier=".cg")
    tl.store(out + pid, tl.xor_sum(v, 0))


@triton.jit
def ranges(ptr, out, n, per, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.int32)
    start = pid.to(tl.int64) * per
    for i in range(0, per, BLOCK):
        offs = start + i + tl.arange(0, BLOCK)
        acc ^= tl.load(ptr + offs, mask=offs < n, other=0, cache_modifier=".cg")
    tl.store(out + pid, tl.xor_sum(acc, 0))


@triton.jit
def strided(ptr, out, n, nprog, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.int32)
    for b in range(pid, tl.cdiv(n, BLOCK), nprog):
        offs = b.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        acc ^= tl.load(ptr + offs, mask=offs < n, other=0, cache_modifier=".cg")
    tl.store(out + pid, tl.xor_sum(acc, 0))


for mb in (8.4, 58.7):
    n = int(mb * 2**20) // 4
    bufs = [torch.randint(-(2**31), 2**31 - 1, (n,), dtype=torch.int32, device="cuda") for _ in range(copies_for(n * 4))]
    sink = torch.empty(n // 1024 + 1, dtype=torch.int32, device="cuda")
    B = 4096
    res = {}
    res["A blocks"] = graph_time_us([lambda b=b: blocks[(triton.cdiv(n, B),)](b, sink, n, BLOCK=B, num_warps=8) for b in bufs])
    for P in (264, 528, 2112):
        per = triton.cdiv(triton.cdiv(n, P), B) * B
        res[f"B ranges x{P}"] = graph_time_us([lambda b=b: ranges[(P,)](b, sink, n, per, BLOCK=B if P < 2112 else 1024, num_warps=8 if P < 2112 else 1) for b in bufs])
        res[f"C strided x{P}"] = graph_time_us([lambda b=b: strided[(P,)](b, sink, n, P, BLOCK=B if P < 2112 else 1024, num_warps=8 if P < 2112 else 1) for b in bufs])
    print(f"{mb} MB: " + "  ".join(f"{k}={v['median_us']:.2f}" for k, v in res.items()), flush=True)
