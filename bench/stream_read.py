"""The pure streaming read every benchmark compares against (DESIGN.md: "Always run a pure streaming
read of the same weight bytes"): one Triton program per BLOCK int32 words, loads bypassing L1
(.cg), one xor-reduced word stored per program so the loads cannot be elided.

Importable (bench/decode.py and bench/e2e.py share it); needs Triton and CUDA."""

from __future__ import annotations

import torch
import triton
import triton.language as tl

BLOCK = 4096


@triton.jit
def read_kernel(ptr, out, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(ptr + offs, mask=offs < n, other=0, cache_modifier=".cg")
    tl.store(out + pid, tl.xor_sum(v, 0))


def programs(n_words: int) -> int:
    return triton.cdiv(n_words, BLOCK)


def read(buf: torch.Tensor, sink: torch.Tensor) -> None:
    """Reads every word of the int32 tensor ``buf``; ``sink`` holds at least ``programs(buf.numel())`` int32."""
    read_kernel[(programs(buf.numel()),)](buf, sink, buf.numel(), BLOCK=BLOCK, num_warps=8)
