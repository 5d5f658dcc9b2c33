"""A straightforward Triton W4A16 GEMM, kept as a peer arm for the benchmarks (not part of mate).

Layout it owns (GPTQ-style, symmetric): `qweight` int32 [K/8, N], nibble j (bits 4j..4j+3) of
word r holds row 8r + j; `scales` [K/G, N] in the activation dtype; the zero is 8, so
W[k, n] = (q[k, n] - 8) * scales[k // G, n] and out = x @ W.

The kernel: one program per BLOCK_M x BLOCK_N output tile and K range; each K block loads the
packed words (every word once per nibble, from L1), shifts and masks them to int4, subtracts the
zero, runs tl.dot in fp32 and applies the group's scale to the partial sum (BLOCK_K divides G, so
one scale row per block). Small M x N grids split K over programs that add fp32 partials
atomically into a zeroed workspace, then one cast writes the output (three launches instead of one;
the order of the atomic adds is not fixed, so reruns may differ in the last bits)."""

from __future__ import annotations

from dataclasses import dataclass

import torch
import triton
import triton.language as tl

ZERO = 8


@triton.jit
def _w4a16_kernel(x_ptr, qw_ptr, s_ptr, out_ptr, M, N, K, stride_xm, stride_om,
                  G: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                  ATOMIC: tl.constexpr, KB_PER_SPLIT: tl.constexpr):
    pid = tl.program_id(0)
    pid_k = tl.program_id(1)
    n_tiles = tl.cdiv(N, BLOCK_N)
    pid_m = pid // n_tiles
    pid_n = pid % n_tiles
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    mask_m = offs_m < M
    mask_n = offs_n < N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    # A constexpr trip count: the split divides the K blocks evenly (and Triton's interpreter
    # cannot take a runtime loop bound under numpy >= 2.4).
    kb0 = pid_k * KB_PER_SPLIT
    for i in range(0, KB_PER_SPLIT):
        kb = kb0 + i
        k = kb * BLOCK_K + rk
        a = tl.load(x_ptr + offs_m[:, None] * stride_xm + k[None, :], mask=mask_m[:, None], other=0.0)
        packed = tl.load(qw_ptr + (k[:, None] // 8).to(tl.int64) * N + offs_n[None, :], mask=mask_n[None, :], other=0)
        q = (packed >> ((k[:, None] % 8) * 4)) & 0xF
        w = (q - 8).to(a.dtype)  # integers in [-8, 7]: exact in fp16 and bf16
        s = tl.load(s_ptr + ((kb * BLOCK_K) // G) * N + offs_n, mask=mask_n, other=0.0).to(tl.float32)
        acc += tl.dot(a, w) * s[None, :]
    ptrs = out_ptr + offs_m[:, None] * stride_om + offs_n[None, :]
    mask = mask_m[:, None] & mask_n[None, :]
    if ATOMIC:
        tl.atomic_add(ptrs, acc, mask=mask)
    else:
        tl.store(ptrs, acc.to(out_ptr.dtype.element_ty), mask=mask)


@dataclass(frozen=True)
class Config:
    block_m: int
    block_n: int
    block_k: int
    num_warps: int
    num_stages: int
    split_k: int
    kb_per_split: int


def choose(M: int, N: int, K: int, group_size: int, sms: int = 132) -> Config:
    """Tiles by M (no autotuning, so the arm is the same in every run), then split K until the grid
    has about two programs per SM (the smallest divisor of the K blocks that gets there, at most 16)."""
    G = K if group_size == -1 else group_size
    if M <= 16:
        bm, bn, bk, warps, stages = 16, 64, 128, 4, 4
    elif M <= 32:
        bm, bn, bk, warps, stages = 32, 64, 128, 4, 4
    else:
        bm, bn, bk, warps, stages = 64, 128, 64, 4, 3
    while G % bk:  # one scale row per K block
        bk //= 2
    if bk < 16:
        raise ValueError(f"triton_w4a16: group size {G} must be a multiple of 16")
    kblocks = K // bk
    tiles = triton.cdiv(M, bm) * triton.cdiv(N, bn)
    want = min(16, triton.cdiv(2 * sms, tiles))
    split = next((d for d in range(max(1, want), kblocks + 1) if kblocks % d == 0 and d <= 16), None)
    if split is None:  # no divisor in [want, 16]: the largest one below
        split = max(d for d in range(1, min(want, kblocks) + 1) if kblocks % d == 0)
    return Config(bm, bn, bk, warps, stages, split, kblocks // split)


def check_shapes(x, qweight, scales, group_size):
    K = x.shape[-1]
    G = K if group_size == -1 else group_size
    if x.dim() != 2 or x.stride(1) != 1:
        raise ValueError(f"triton_w4a16: x must be 2-D with unit column stride, got shape {tuple(x.shape)} strides {x.stride()}")
    if K % G or K % 8 or qweight.shape[0] * 8 != K or qweight.dtype != torch.int32 or not qweight.is_contiguous():
        raise ValueError(f"triton_w4a16: qweight {tuple(qweight.shape)} {qweight.dtype} must be contiguous int32 [K/8, N] with K={K} a multiple of the group {G}")
    N = qweight.shape[1]
    if tuple(scales.shape) != (K // G, N) or scales.dtype != x.dtype or not scales.is_contiguous():
        raise ValueError(f"triton_w4a16: scales {tuple(scales.shape)} {scales.dtype} must be contiguous [{K // G}, {N}] in x's dtype {x.dtype}")
    return K, N, G


def w4a16_mm(x, qweight, scales, group_size, out=None, workspace=None, config: Config | None = None, sms: int | None = None):
    """out = x @ W. `out` [M, N] in x's dtype; `workspace` fp32 [M, N] (needed when the config splits
    K; allocated here when missing). Both may be preallocated for graph capture."""
    K, N, G = check_shapes(x, qweight, scales, group_size)
    M = x.shape[0]
    if config is None:
        if sms is None:
            sms = torch.cuda.get_device_properties(x.device).multi_processor_count if x.is_cuda else 132
        config = choose(M, N, K, group_size, sms)
    c = config
    if out is None:
        out = torch.empty(M, N, dtype=x.dtype, device=x.device)
    atomic = c.split_k > 1
    if atomic:
        if workspace is None:
            workspace = torch.empty(M, N, dtype=torch.float32, device=x.device)
        workspace.zero_()
    dst = workspace if atomic else out
    grid = (triton.cdiv(M, c.block_m) * triton.cdiv(N, c.block_n), c.split_k)
    _w4a16_kernel[grid](x, qweight, scales, dst, M, N, K, x.stride(0), dst.stride(0),
                        G=G, BLOCK_M=c.block_m, BLOCK_N=c.block_n, BLOCK_K=c.block_k, ATOMIC=atomic, KB_PER_SPLIT=c.kb_per_split,
                        num_warps=c.num_warps, num_stages=c.num_stages)
    if atomic:
        out.copy_(workspace)
    return out


def pack(q: torch.Tensor) -> torch.Tensor:
    """int [K, N] values 0..15 -> int32 [K/8, N], nibble j of word r = row 8r + j."""
    K, N = q.shape
    if K % 8:
        raise ValueError(f"triton_w4a16.pack: K={K} must be a multiple of 8")
    v = q.to(torch.int64).reshape(K // 8, 8, N)
    w = torch.zeros(K // 8, N, dtype=torch.int64, device=q.device)
    for j in range(8):
        w |= v[:, j, :] << (4 * j)
    return torch.where(w >= 2**31, w - 2**32, w).to(torch.int32)


def quantize(w: torch.Tensor, group_size: int, dtype=torch.float16):
    """Symmetric round-to-nearest of a float weight W [K, N] (x @ W): per group of G rows and each
    column, scale = max|W| / 7 and q = clamp(round(W / scale) + 8, 0, 15). Returns (q int64 [K, N],
    scales [K/G, N] in `dtype`); dequantize with the scales as returned (rounded to `dtype`)."""
    K, N = w.shape
    G = K if group_size == -1 else group_size
    if K % G:
        raise ValueError(f"triton_w4a16.quantize: K={K} must be a multiple of the group {G}")
    wg = w.double().reshape(K // G, G, N)
    s = (wg.abs().amax(dim=1) / 7).clamp(min=1e-8).to(dtype)
    q = torch.round(wg / s.double()[:, None, :]) + ZERO
    return q.clamp(0, 15).to(torch.int64).reshape(K, N), s


def pack_from_float(w: torch.Tensor, group_size: int, dtype=torch.float16):
    """W [K, N] float -> (qweight, scales) in this kernel's layout."""
    q, s = quantize(w, group_size, dtype)
    return pack(q), s


def dequantize(q: torch.Tensor, scales: torch.Tensor, group_size: int) -> torch.Tensor:
    """float64 W [K, N] from values q [K, N] and scales [K/G, N]."""
    K = q.shape[0]
    G = K if group_size == -1 else group_size
    return (q.double() - ZERO) * scales.double().repeat_interleave(G, dim=0)
