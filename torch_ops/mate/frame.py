"""Building weight frames from checkpoint tensors (the Rust frame builder, ``src/frame/``).

One op per checkpoint convention; every configuration argument is keyword-only, so the caller
names the convention it holds and every choice comes from its quantization config (never from
which tensors happen to exist). Each op runs on the tensors' device (CPU or CUDA) and returns
``(qweight, frame_meta, scales, zeros, perm)``; ``zeros`` / ``perm`` are empty placeholders when
the frame has none (its ``frame_meta`` says so). The helpers below wrap them in a :class:`Frame`
whose ``zeros`` / ``perm`` are ``None`` then.

Ops (``torch.ops.mate.*``)::

    frame_from_gptq(qweight, scales, qzeros, g_idx, *, group_size, sym, desc_act, checkpoint_format)
    frame_from_awq(qweight, scales, qzeros, *, group_size)
    frame_from_compressed(weight_packed, weight_scale, weight_zero_point, weight_g_idx, *,
                          weight_shape, group_size, symmetric, actorder=None)
    frame_from_marlin(qweight, scales, zeros, g_idx, perm, *, group_size, sym, desc_act,
                      zero_layout=None)

Each also takes ``shard=None | "column" | "row", rank=0, world=1`` (keywords): the tensors are a
tensor-parallel rank's slice (``mate.shard`` slices whole checkpoints and documents the styles;
src/frame/shard.rs builds them). A row-parallel act-order slice gives a shard frame, whose x has
``Frame.in_features`` columns, fewer than its rows (src/frame/mod.rs).

Refused inputs raise ``ValueError`` naming the argument, its value and the rule.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

__all__ = ["Frame", "from_gptq", "from_awq", "from_compressed", "from_marlin"]


@dataclass(frozen=True)
class Frame:
    """The tensors and metadata ``torch.ops.mate.w4a16_gemm`` takes for one layer."""

    qweight: torch.Tensor
    meta: list
    scales: torch.Tensor
    zeros: torch.Tensor | None
    perm: torch.Tensor | None
    group_size: int

    @property
    def in_features(self) -> int:
        """Columns of x: K, or a shard frame's ``x_cols`` (fewer than its rows ``meta[1]``)."""
        return int(self.meta[5]) if self.meta[4] & _FLAG_X_COLS else int(self.meta[1])

    @property
    def out_features(self) -> int:
        return int(self.meta[2])

    def args(self):
        """``(qweight, frame_meta, scales, zeros, perm)``, the GEMM's frame arguments in order."""
        return (self.qweight, self.meta, self.scales, self.zeros, self.perm)

    def gemm(self, x: torch.Tensor, bias: torch.Tensor | None = None, *, out: torch.Tensor | None = None, **kw):
        """``x @ W (+ bias)`` through ``torch.ops.mate.w4a16_gemm`` (``.out`` when ``out`` is given)."""
        if out is not None:
            torch.ops.mate.w4a16_gemm.out(x, *self.args(), bias, self.group_size, out=out, **kw)
            return out
        return torch.ops.mate.w4a16_gemm(x, *self.args(), bias, self.group_size, **kw)


_FLAG_ZEROS, _FLAG_PERM, _FLAG_X_COLS = 1, 2, 4  # frame_meta[4] (src/frame/mod.rs)


def _frame(result, group_size: int) -> Frame:
    qweight, meta, scales, zeros, perm = result
    flags = meta[4]
    return Frame(
        qweight,
        list(meta),
        scales,
        zeros if flags & _FLAG_ZEROS else None,
        perm if flags & _FLAG_PERM else None,
        group_size,
    )


def _frame_group(result, group_size: int) -> int:
    """The frame's group size (its metadata's): the checkpoint's, except for a K-not-full shard
    frame, which regroups into 32/64/128-row subgroups (src/frame/shard.rs)."""
    return int(result[1][3])


def from_gptq(qweight, scales, qzeros=None, g_idx=None, *, group_size: int, sym: bool, desc_act: bool,
              checkpoint_format: str, shard: str | None = None, rank: int = 0, world: int = 1) -> Frame:
    """GPTQ checkpoint tensors. ``checkpoint_format`` is ``"gptq"`` (v1: qzeros store zero - 1) or
    ``"gptq_v2"``; ``qzeros`` is read only when ``sym`` is False, ``g_idx`` only when ``desc_act``."""
    r = torch.ops.mate.frame_from_gptq(
        qweight, scales, qzeros, g_idx, group_size=group_size, sym=sym, desc_act=desc_act,
        checkpoint_format=checkpoint_format, shard=shard, rank=rank, world=world,
    )
    return _frame(r, _frame_group(r, group_size))


def from_awq(qweight, scales, qzeros, *, group_size: int, shard: str | None = None, rank: int = 0,
             world: int = 1) -> Frame:
    """AWQ (GEMM packing) checkpoint tensors: qweight [K, N/8], qzeros [K/group, N/8] (exact zeros)."""
    r = torch.ops.mate.frame_from_awq(qweight, scales, qzeros, group_size=group_size, shard=shard, rank=rank,
                                      world=world)
    return _frame(r, _frame_group(r, group_size))


def from_compressed(weight_packed, weight_scale, weight_zero_point=None, weight_g_idx=None, *,
                    weight_shape, group_size: int, symmetric: bool, actorder: str | None = None,
                    shard: str | None = None, rank: int = 0, world: int = 1) -> Frame:
    """compressed-tensors ``pack-quantized`` int4 tensors. ``weight_shape`` is ``[N, K]`` (the
    checkpoint's tensor or a list); ``group_size`` -1 for the channel strategy; ``actorder`` the
    config's (``"group"`` reads ``weight_g_idx``; ``None`` / ``"weight"`` do not)."""
    if isinstance(weight_shape, torch.Tensor):
        weight_shape = weight_shape.tolist()
    r = torch.ops.mate.frame_from_compressed(
        weight_packed, weight_scale, weight_zero_point, weight_g_idx, weight_shape=list(weight_shape),
        group_size=group_size, symmetric=symmetric, actorder=actorder, shard=shard, rank=rank, world=world,
    )
    return _frame(r, _frame_group(r, group_size))


def from_marlin(qweight, scales, zeros=None, g_idx=None, perm=None, *, group_size: int, sym: bool,
                desc_act: bool, zero_layout: str | None = None, shard: str | None = None, rank: int = 0,
                world: int = 1) -> Frame:
    """Tensors already repacked by vLLM's Marlin path: ``qweight`` from ``gptq_marlin_repack`` /
    ``awq_marlin_repack``, ``scales`` from ``marlin_permute_scales``; with zero points
    (``sym=False``) ``zero_layout`` names what ``zeros`` holds: ``"marlin"`` (the output of
    ``marlin_zero_points`` or ``awq_to_marlin_zero_points``), ``"awq"`` or ``"gptq_v2"``
    (unconverted checkpoint qzeros). With ``desc_act``: ``g_idx`` sorted (``marlin_sort_g_idx``)
    and ``perm`` = ``g_idx_sort_indices``. Pass the layer's original bias to the GEMM (Marlin
    permutes its copy)."""
    r = torch.ops.mate.frame_from_marlin(
        qweight, scales, zeros, g_idx, perm, group_size=group_size, sym=sym, desc_act=desc_act,
        zero_layout=zero_layout, shard=shard, rank=rank, world=world,
    )
    return _frame(r, _frame_group(r, group_size))
