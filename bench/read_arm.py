"""The pure streaming read: the practical floor of a GEMM that must read a given number of weight
bytes once (../shared/DESIGN.md). One Triton program per 16 KB block, `.cg` loads (L2 only, no
L1), an xor-reduction per program into a small sink so the loads cannot be elided."""

from __future__ import annotations

import torch
import triton
import triton.language as tl

BLOCK = 4096  # int32 words per program (16 KB)
NUM_WARPS = 8


@triton.jit
def _read(ptr, out, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(ptr + offs, mask=offs < n, other=0, cache_modifier=".cg")
    tl.store(out + pid, tl.xor_sum(v, 0))


def words_of(buf: torch.Tensor) -> torch.Tensor:
    """A contiguous buffer as int32 words (the unit the kernel streams)."""
    if not buf.is_contiguous() or buf.numel() * buf.element_size() % 4:
        raise ValueError(f"read arm: buffer of shape {tuple(buf.shape)} / {buf.dtype} must be contiguous and a whole number of int32 words")
    return buf.view(-1).view(torch.int32)


def sink_for(max_words: int, device) -> torch.Tensor:
    """One int32 per program of the largest buffer read with it."""
    return torch.empty(triton.cdiv(max_words, BLOCK), dtype=torch.int32, device=device)


def read(words: torch.Tensor, sink: torch.Tensor) -> None:
    """Streams `words` (int32, contiguous) once; `sink` from sink_for()."""
    n = words.numel()
    _read[(triton.cdiv(n, BLOCK),)](words, sink, n, BLOCK=BLOCK, num_warps=NUM_WARPS)


def expected_sink(words: torch.Tensor) -> torch.Tensor:
    """What read() leaves in the sink: the xor of each 16 KB block (a check that it read it all)."""
    n = words.numel()
    pad = torch.zeros(triton.cdiv(n, BLOCK) * BLOCK, dtype=torch.int64, device=words.device)
    pad[:n] = words.to(torch.int64)
    acc = pad.view(-1, BLOCK)
    while acc.shape[1] > 1:  # torch has no xor reduction: fold halves (BLOCK is a power of two)
        h = acc.shape[1] // 2
        acc = acc[:, :h] ^ acc[:, h:]
    return acc[:, 0].to(torch.int32)
