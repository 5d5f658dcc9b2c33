"""torch's tinygemm int4 kernel as a benchmark arm (`torch._weight_int4pack_mm`), fed the same
symmetric int4 weights as the other arms.

Conventions (read from torch's aten/src/ATen/native/cuda/int4mm.cu and its meta registrations;
the CPU variants are checked numerically in tests/python/test_bench_peers.py):

* the weight is W^T, [N, K]; each value q in 0..15 dequantizes to (q - 8) * scale + zero, so a
  symmetric checkpoint (zero point 8) has zero = 0;
* `scales_and_zeros` [K/G, N, 2]: [..., 0] the scale, [..., 1] that zero, read by the CUDA kernel
  as bf16 (it checks only the shape: other dtypes would be misread silently);
* CUDA: `_convert_weight_to_int4pack(w, inner_k_tiles)` takes uint8 [N, K/2] with row k = 2i in
  the high nibble of byte i and k = 2i + 1 in the low one, and returns int32
  [N/8, K/(16 inner_k_tiles), 32, inner_k_tiles/2]; `_weight_int4pack_mm` wants bf16 activations,
  G in {32, 64, 128, 256}, inner_k_tiles in {2, 4, 8};
* CPU: `_convert_weight_to_int4pack_for_cpu(w, inner_k_tiles)` takes int32 [N, K] values and
  `_weight_int4pack_mm_for_cpu` takes the scales_and_zeros in the activation dtype.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

INNER_K_TILES = 8  # 16-byte loads per lane (gpt-fast's choice)
GROUPS = (32, 64, 128, 256)


def check_config(K: int, N: int, group_size: int, inner_k_tiles: int = INNER_K_TILES):
    if group_size not in GROUPS:
        raise ValueError(f"tinygemm: group size {group_size} is not served (only {GROUPS})")
    if K % (16 * inner_k_tiles) or N % 8:
        raise ValueError(f"tinygemm: K={K} must be a multiple of {16 * inner_k_tiles} (16 x inner_k_tiles) and N={N} of 8")


def pack_uint8(q: torch.Tensor) -> torch.Tensor:
    """Values q [K, N] (0..15) -> uint8 [N, K/2]: byte i of row n = q[2i, n] << 4 | q[2i + 1, n]."""
    qt = q.t().to(torch.int32)
    return ((qt[:, 0::2] << 4) | qt[:, 1::2]).to(torch.uint8).contiguous()


def scales_and_zeros(scales: torch.Tensor, zeros: torch.Tensor | None = None, dtype=torch.bfloat16) -> torch.Tensor:
    """[K/G, N] scales (and the float zero added after scaling; 0 for a symmetric weight) ->
    [K/G, N, 2] in `dtype`."""
    s = scales.to(dtype)
    z = torch.zeros_like(s) if zeros is None else zeros.to(dtype)
    return torch.stack([s, z], dim=-1).contiguous()


@dataclass
class Packed:
    weight: torch.Tensor  # the device's packed layout
    scales_and_zeros: torch.Tensor
    group_size: int

    @property
    def nbytes(self) -> int:
        return self.weight.numel() * self.weight.element_size() + self.scales_and_zeros.numel() * self.scales_and_zeros.element_size()


def pack(q: torch.Tensor, scales: torch.Tensor, group_size: int, zeros: torch.Tensor | None = None,
         inner_k_tiles: int = INNER_K_TILES, act_dtype=torch.bfloat16) -> Packed:
    """Values q [K, N] (0..15) and scales [K/G, N] -> tinygemm's tensors on q's device."""
    K, N = q.shape
    check_config(K, N, group_size, inner_k_tiles)
    if q.is_cuda:
        w = torch.ops.aten._convert_weight_to_int4pack(pack_uint8(q), inner_k_tiles)
        sz = scales_and_zeros(scales, zeros, torch.bfloat16)
    else:
        w = torch.ops.aten._convert_weight_to_int4pack_for_cpu(q.t().contiguous().to(torch.int32), inner_k_tiles)
        sz = scales_and_zeros(scales, zeros, act_dtype)
    return Packed(w, sz, group_size)


def mm(x: torch.Tensor, p: Packed) -> torch.Tensor:
    """x [M, K] (bf16 on CUDA) @ W -> [M, N]."""
    if x.is_cuda:
        if x.dtype != torch.bfloat16:
            raise ValueError(f"tinygemm: CUDA activations must be torch.bfloat16, got {x.dtype}")
        return torch.ops.aten._weight_int4pack_mm(x, p.weight, p.group_size, p.scales_and_zeros)
    return torch.ops.aten._weight_int4pack_mm_for_cpu(x, p.weight, p.group_size, p.scales_and_zeros)


def dequantize(q: torch.Tensor, scales: torch.Tensor, group_size: int, zeros: torch.Tensor | None = None,
               dtype=torch.bfloat16) -> torch.Tensor:
    """float64 W [K, N] as tinygemm defines it, scales (and zeros) rounded to `dtype` as stored."""
    s = scales.to(dtype).double().repeat_interleave(group_size, dim=0)
    w = (q.double() - 8) * s
    if zeros is not None:
        w = w + zeros.to(dtype).double().repeat_interleave(group_size, dim=0)
    return w
