"""Float64 ground truth, written from the checkpoint formats' definitions (GPTQ v1/v2, AWQ,
compressed-tensors pack-quantized; see each dequantizer).

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


AWQ_ORDER = (0, 2, 4, 6, 1, 3, 5, 7)


def unpack_cols_ordered(packed: torch.Tensor, order) -> torch.Tensor:
    """int32 [R, C], nibble j of word c holds column 8c + order[j] -> int64 [R, 8C]."""
    w = packed.to(torch.int64) & 0xFFFFFFFF
    out = torch.empty(packed.shape[0], packed.shape[1], 8, dtype=torch.int64, device=packed.device)
    for j in range(8):
        out[:, :, order[j]] = (w >> (4 * j)) & 0xF
    return out.reshape(packed.shape[0], packed.shape[1] * 8)


def dequantize_awq(qweight: torch.Tensor, scales: torch.Tensor, qzeros: torch.Tensor, *, group_size: int) -> torch.Tensor:
    """AWQ (AutoAWQ GEMM packing): qweight int32 [K, N/8] and qzeros int32 [K/group, N/8], nibble j
    of word c = column 8c + [0,2,4,6,1,3,5,7][j]; exact zeros; scales [K/group, N].
    W[k, n] = (q[k, n] - z[k // G, n]) * s[k // G, n]."""
    q = unpack_cols_ordered(qweight, AWQ_ORDER).double()
    K = q.shape[0]
    G = K if group_size == -1 else group_size
    groups = torch.arange(K, device=q.device) // G
    z = unpack_cols_ordered(qzeros, AWQ_ORDER).double()
    return (q - z[groups]) * scales.double()[groups]


def dequantize_compressed(
    weight_packed: torch.Tensor,
    weight_scale: torch.Tensor,
    weight_zero_point: torch.Tensor | None,
    weight_g_idx: torch.Tensor | None,
    *,
    weight_shape,
    group_size: int,
    symmetric: bool,
    actorder_group: bool,
) -> torch.Tensor:
    """compressed-tensors pack-quantized int4: weight_packed int32 [N, K/8] packed along K (nibble j
    of word (n, c) = signed value at k = 8c + j, plus 8); weight_scale [N, K/group];
    weight_zero_point (asymmetric) int32 [N/8, K/group] packed along N (nibble j of word (r, g) =
    zero point of row 8r + j, plus 8). W_ct[n, k] = (v - zp) * s with g(k) = g_idx[k] under
    actorder "group", else k // G. Returns W as float64 [K, N] (x @ W)."""
    N, K = int(weight_shape[0]), int(weight_shape[1])
    v = unpack_cols_ordered(weight_packed, tuple(range(8))).double() - 8  # [N, K] signed
    G = K if group_size == -1 else group_size
    groups = weight_g_idx.to(torch.int64) if actorder_group else torch.arange(K, device=v.device) // G
    if symmetric:
        zp = torch.zeros(N, weight_scale.shape[1], dtype=torch.float64, device=v.device)
    else:
        zp = unpack_cols_ordered(weight_zero_point.t(), tuple(range(8))).double().t() - 8  # [N, G]
    w = (v - zp[:, groups]) * weight_scale.double()[:, groups]
    return w.t()
