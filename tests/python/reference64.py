"""Float64 ground truth, written from the checkpoint formats' definitions.

Fed the original checkpoint tensors (never a mate frame), so neither the CPU op nor a kernel
grades itself. GPTQ (definition as in the frame-builder issue):

* ``qweight`` int32 [K/8, N]: nibble j (bits 4j..4j+3) of word r holds row 8r + j;
* ``scales`` [K/group, N];
* ``qzeros`` int32 [K/group, N/8]: nibble j of word c holds column 8c + j; format "gptq" (v1)
  stores zero - 1, "gptq_v2" the exact zero; never read when the config is symmetric (zero 8);
* ``g_idx`` int32 [K]: the group of each row, read only when desc_act.

W[k, n] = (q[k, n] - zero[g(k), n]) * scales[g(k), n], out = x @ W + bias.
"""

from __future__ import annotations

import torch


def unpack_rows(packed: torch.Tensor) -> torch.Tensor:
    """int32 [R, C] with 8 nibbles per word along rows -> int64 [8R, C]."""
    w = packed.to(torch.int64) & 0xFFFFFFFF
    rows = [(w >> (4 * j)) & 0xF for j in range(8)]
    return torch.stack(rows, dim=1).reshape(packed.shape[0] * 8, packed.shape[1])


def unpack_cols(packed: torch.Tensor) -> torch.Tensor:
    """int32 [R, C] with 8 nibbles per word along columns -> int64 [R, 8C]."""
    w = packed.to(torch.int64) & 0xFFFFFFFF
    cols = [(w >> (4 * j)) & 0xF for j in range(8)]
    return torch.stack(cols, dim=2).reshape(packed.shape[0], packed.shape[1] * 8)


def dequantize_gptq(
    qweight: torch.Tensor,
    scales: torch.Tensor,
    qzeros: torch.Tensor | None,
    g_idx: torch.Tensor | None,
    *,
    group_size: int,
    sym: bool,
    desc_act: bool,
    checkpoint_format: str = "gptq_v2",
) -> torch.Tensor:
    """W as float64 [K, N] from GPTQ checkpoint tensors."""
    q = unpack_rows(qweight).double()
    K, N = q.shape
    G = K if group_size == -1 else group_size
    if desc_act:
        groups = g_idx.to(torch.int64)
    else:
        groups = torch.arange(K, device=q.device) // G
    if sym:
        zero = torch.full((scales.shape[0], N), 8.0, dtype=torch.float64, device=q.device)
    else:
        zero = unpack_cols(qzeros).double()
        if checkpoint_format == "gptq":
            zero = zero + 1
    return (q - zero[groups]) * scales.double()[groups]


def gemm64(x: torch.Tensor, w64: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
    """out = x @ W (+ bias) in float64; x is [..., K]."""
    out = x.double().reshape(-1, x.shape[-1]) @ w64
    if bias is not None:
        out = out + bias.double()
    return out.reshape(*x.shape[:-1], w64.shape[1])
