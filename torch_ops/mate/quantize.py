"""Round-to-nearest (RTN) int4 quantization of float weights into GPTQ-v2 checkpoint tensors.

The output is an ordinary GPTQ-v2 checkpoint (exact zero points), so the frame builder
(``mate.from_gptq(..., checkpoint_format="gptq_v2")``) turns it into a frame and any GPTQ reader
(tests/python/reference64.py) can dequantize it independently.

Per output channel ``n`` and group ``g`` of ``G`` consecutive input features:

* symmetric: ``s = max|w| / 7``, zero 8, ``q = clamp(round(w / s) + 8, 0, 15)`` (|w / s| <= 7,
  so nothing clips);
* zero point: the range is widened to include 0 (so 0 is exact, as GPTQ does),
  ``s = (hi - lo) / 15``, ``z = clamp(round(-lo / s), 0, 15)``, ``q = clamp(round(w / s) + z, 0, 15)``.

``s`` is rounded to the scales' dtype first and ``q`` is computed with the rounded ``s``, so the
dequantized weight ``(q - z) * s`` is within ``s / 2`` of ``w`` (up to the clip at the range ends
in the zero-point case). An all-zero group gets ``s = 1``.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

__all__ = ["GROUP_SIZES", "GptqTensors", "rtn_quantize", "rtn_dequantize", "check_group_size"]

GROUP_SIZES = (-1, 32, 64, 128)


@dataclass(frozen=True)
class GptqTensors:
    """A GPTQ-v2 checkpoint of one layer (``K`` inputs, ``N`` outputs).

    ``qweight`` int32 [K/8, N] (nibble j of word r = row 8r + j); ``scales`` [K/G, N];
    ``qzeros`` int32 [K/G, N/8] exact zeros (nibble j of word c = column 8c + j; all 8 when
    symmetric, as symmetric checkpoints still carry one); ``g_idx`` int32 [K] = k // G."""

    qweight: torch.Tensor
    scales: torch.Tensor
    qzeros: torch.Tensor
    g_idx: torch.Tensor
    group_size: int
    sym: bool


def check_group_size(group_size, K: int, what: str = "group_size") -> int:
    """The effective group (K for per channel); ValueError naming the rule otherwise."""
    if group_size not in GROUP_SIZES:
        raise ValueError(f"`{what}` = {group_size!r}: must be one of {GROUP_SIZES} (-1 = per channel)")
    G = K if group_size == -1 else group_size
    if K % G != 0:
        raise ValueError(f"`{what}` = {group_size}: the input features K = {K} must be a multiple of it")
    return G


def _pack(v: torch.Tensor, dim: int) -> torch.Tensor:
    """int nibbles -> int32, 8 consecutive entries along `dim` per word, entry j in bits 4j..4j+3."""
    v = v.to(torch.int32).movedim(dim, -1)
    v = v.reshape(*v.shape[:-1], -1, 8)
    w = torch.zeros(v.shape[:-1], dtype=torch.int32, device=v.device)
    for j in range(8):
        w |= v[..., j] << (4 * j)  # int32 shifts wrap into the sign bit, as the checkpoints store them
    return w.movedim(-1, dim).contiguous()


def _rtn(weight: torch.Tensor, group_size: int, sym: bool, dtype: torch.dtype):
    """weight [N, K] -> q int32 [N, K] (0..15), scales [N, K/G] in `dtype`, zeros int32 [N, K/G]."""
    if not isinstance(weight, torch.Tensor) or weight.dim() != 2 or not weight.is_floating_point():
        shown = f"a {tuple(weight.shape)} {weight.dtype} tensor" if isinstance(weight, torch.Tensor) else type(weight).__name__
        raise ValueError(f"`weight` = {shown}: must be a 2-D floating-point tensor [out_features, in_features]")
    if dtype not in (torch.float16, torch.bfloat16):
        raise ValueError(f"`dtype` = {dtype}: the scales' dtype must be torch.float16 or torch.bfloat16 (the activation's)")
    N, K = weight.shape
    G = check_group_size(group_size, K)
    w = weight.detach().float().reshape(N, K // G, G)
    if sym:
        s = w.abs().amax(dim=-1) / 7
        z = torch.full_like(s, 8)
    else:
        lo = w.amin(dim=-1).clamp(max=0)
        hi = w.amax(dim=-1).clamp(min=0)
        s = (hi - lo) / 15
    s = torch.where(s > 0, s, torch.ones_like(s)).to(dtype)
    sf = s.float()
    if not sym:
        z = torch.clamp(torch.round(-lo / sf), 0, 15)
    q = torch.clamp(torch.round(w / sf[..., None]) + z[..., None], 0, 15)
    return q.reshape(N, K).to(torch.int32), s, z.to(torch.int32)


def rtn_quantize(weight: torch.Tensor, *, group_size: int = 128, sym: bool = True, dtype: torch.dtype | None = None) -> GptqTensors:
    """RTN-quantizes ``weight`` [N, K] (an ``nn.Linear``'s) into GPTQ-v2 tensors on its device.
    ``dtype`` is the scales' (the activation's) dtype: float16 or bfloat16 (default: the
    weight's if it is one of them, else float16)."""
    if dtype is None:
        dtype = weight.dtype if weight.dtype in (torch.float16, torch.bfloat16) else torch.float16
    q, s, z = _rtn(weight, group_size, sym, dtype)
    N, K = q.shape
    G = K if group_size == -1 else group_size
    return GptqTensors(
        qweight=_pack(q.t(), 0),
        scales=s.t().contiguous(),
        qzeros=_pack(z.t(), 1),
        g_idx=(torch.arange(K, device=q.device, dtype=torch.int32) // G),
        group_size=group_size,
        sym=sym,
    )


def rtn_dequantize(weight: torch.Tensor, *, group_size: int = 128, sym: bool = True, dtype: torch.dtype | None = None) -> torch.Tensor:
    """The float32 weight [N, K] that ``rtn_quantize`` represents: ``(q - z) * s`` (for references
    and for building the dequantized twin of a quantized model)."""
    if dtype is None:
        dtype = weight.dtype if weight.dtype in (torch.float16, torch.bfloat16) else torch.float16
    q, s, z = _rtn(weight, group_size, sym, dtype)
    N, K = q.shape
    G = K if group_size == -1 else group_size
    w = (q.reshape(N, K // G, G) - z[..., None]).float() * s.float()[..., None]
    return w.reshape(N, K)
