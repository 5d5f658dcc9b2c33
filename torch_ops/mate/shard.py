"""Tensor parallelism: a rank's frame from its slice of a layer.

A serving engine that splits a layer over ``world`` GPUs hands each rank a slice of the checkpoint
tensors; ``mate.from_*(..., shard=style, rank=r, world=w)`` builds that rank's frame from it
(src/frame/shard.rs). The styles:

* ``"column"``: N split (K full). Each rank computes ``N / world`` output columns; concatenate.
  The slice: output columns of ``qweight`` / ``scales`` / ``qzeros`` (in the checkpoint's
  packing); ``g_idx`` unchanged. Rule: ``N / world`` a multiple of 64.
* ``"row"``: K split. Each rank computes a partial sum of all N outputs from its
  ``K / world`` input features; the engine all-reduces the partials (bias added once).
  Without act order the slice is rows of everything (whole groups; rule: ``K / world`` a
  multiple of ``lcm(group_size, 64)``; per channel each rank keeps the one scale row). With act
  order ("K not full") each rank keeps its rows of ``qweight`` and ``g_idx`` and **every** group's
  scales and zeros (as vLLM's ``marlin_repeat_scales_on_all_ranks``); the frame is regrouped and
  padded with zero-weight rows (README "Tensor parallel": the cost) and reads an x of ``K / world``
  columns (``Frame.in_features``). Rule: ``K / world`` a multiple of 8.

The ``slice_*`` functions below cut a rank's slice out of a whole checkpoint the way such an
engine does (for loading without one, and for tests); ``from_*_tp`` slice and build in one call.
vLLM's Marlin path repacks each rank's slice itself: pass its per-rank tensors to
``mate.from_marlin(..., shard=...)`` (``g_idx`` sorted within the rank, ``perm`` its local sort
indices, scales permuted with ``size_k = K / world``).

A refused split raises ``ValueError`` naming the rank, the split size and the rule.
"""

from __future__ import annotations

import math

from .frame import Frame, from_awq, from_compressed, from_gptq

__all__ = ["slice_gptq", "slice_awq", "slice_compressed", "from_gptq_tp", "from_awq_tp", "from_compressed_tp"]

_K_ALIGN, _N_ALIGN, _ROW_ACT_ALIGN = 64, 64, 8  # src/frame/mod.rs, src/frame/shard.rs


def _part(size: int, style: str, rank: int, world: int, what: str) -> slice:
    if style not in ("column", "row"):
        raise ValueError(f"mate: argument `shard` = {style!r}: must be \"column\" (N split) or \"row\" (K split)")
    if world < 1 or not 0 <= rank < world:
        raise ValueError(f"mate: argument `rank` = {rank} (world = {world}): must satisfy 0 <= rank < world")
    if size % world:
        raise ValueError(
            f"mate: argument `shard` = rank {rank} of {world}: a {style}-parallel split of {what} = {size}: "
            f"must divide into world = {world} equal parts"
        )
    part = size // world
    return slice(rank * part, (rank + 1) * part)


def _check(style: str, rank: int, world: int, k_s: int, n_s: int, group_size: int, act_order: bool):
    """The alignment rules of src/frame/shard.rs (Shard::check), before slicing packed words."""
    who = f"mate: argument `shard` = rank {rank} of {world}"
    if style == "column" and (n_s < _N_ALIGN or n_s % _N_ALIGN):
        raise ValueError(f"{who}: a column-parallel (N) split of {n_s}: each rank's output features N / world must "
                         f"be a positive multiple of {_N_ALIGN} (every kernel's N envelope; whole packed words along N)")
    if style == "row" and act_order and (k_s < _ROW_ACT_ALIGN or k_s % _ROW_ACT_ALIGN):
        raise ValueError(f"{who}: a row-parallel (K) act-order split of {k_s}: each rank's input features K / world "
                         f"must be a positive multiple of {_ROW_ACT_ALIGN} (8 rows per packed word along K; 16-byte x rows)")
    if style == "row" and not act_order:
        unit = _K_ALIGN if group_size == -1 else math.lcm(group_size, _K_ALIGN)
        if k_s < unit or k_s % unit:
            rule = (f"a multiple of {_K_ALIGN} (whole 64-row kernel chunks; per channel, each rank keeps the scale row)"
                    if group_size == -1 else
                    f"a multiple of lcm(group_size {group_size}, {_K_ALIGN}) = {unit} (whole groups, whole 64-row kernel chunks)")
            raise ValueError(f"{who}: a row-parallel (K) split of {k_s}: without act order each rank's input features "
                             f"K / world must be {rule}")


def _groups_slice(k: slice, group_size: int, act_order: bool) -> slice:
    """The scale rows a row-parallel rank keeps: all of them with act order or per channel."""
    if act_order or group_size == -1:
        return slice(None)
    return slice(k.start // group_size, k.stop // group_size)


def slice_gptq(qweight, scales, qzeros=None, g_idx=None, *, group_size: int, desc_act: bool, style: str, rank: int,
               world: int) -> dict:
    """A rank's GPTQ tensors (qweight [K/8, N], scales [K/g, N], qzeros [K/g, N/8], g_idx [K])."""
    K, N = qweight.shape[0] * 8, qweight.shape[1]
    out = dict(qweight=qweight, scales=scales, qzeros=qzeros, g_idx=g_idx)
    if style == "column":
        n = _part(N, style, rank, world, "N")
        _check(style, rank, world, K, n.stop - n.start, group_size, desc_act)
        out.update(qweight=qweight[:, n], scales=scales[:, n],
                   qzeros=None if qzeros is None else qzeros[:, n.start // 8:n.stop // 8])
    else:
        k = _part(K, style, rank, world, "K")
        _check(style, rank, world, k.stop - k.start, N, group_size, desc_act)
        g = _groups_slice(k, group_size, desc_act)
        out.update(qweight=qweight[k.start // 8:k.stop // 8], scales=scales[g],
                   qzeros=None if qzeros is None else qzeros[g], g_idx=None if g_idx is None else g_idx[k])
    return out


def slice_awq(qweight, scales, qzeros, *, group_size: int, style: str, rank: int, world: int) -> dict:
    """A rank's AWQ tensors (qweight [K, N/8], scales [K/g, N], qzeros [K/g, N/8]; no act order)."""
    K, N = qweight.shape[0], qweight.shape[1] * 8
    if style == "column":
        n = _part(N, style, rank, world, "N")
        _check(style, rank, world, K, n.stop - n.start, group_size, False)
        w = slice(n.start // 8, n.stop // 8)
        return dict(qweight=qweight[:, w], scales=scales[:, n], qzeros=qzeros[:, w])
    k = _part(K, style, rank, world, "K")
    _check(style, rank, world, k.stop - k.start, N, group_size, False)
    g = _groups_slice(k, group_size, False)
    return dict(qweight=qweight[k], scales=scales[g], qzeros=qzeros[g])


def slice_compressed(weight_packed, weight_scale, weight_zero_point=None, weight_g_idx=None, *, weight_shape,
                     group_size: int, actorder: str | None, style: str, rank: int, world: int) -> dict:
    """A rank's compressed-tensors tensors (weight_packed [N, K/8], weight_scale [N, K/g],
    weight_zero_point [N/8, K/g], weight_g_idx [K]) and its ``weight_shape``."""
    N, K = (int(v) for v in weight_shape)
    act = actorder in ("group", "dynamic")
    zp, gi = weight_zero_point, weight_g_idx
    if style == "column":
        n = _part(N, style, rank, world, "N")
        _check(style, rank, world, K, n.stop - n.start, group_size, act)
        return dict(weight_packed=weight_packed[n], weight_scale=weight_scale[n],
                    weight_zero_point=None if zp is None else zp[n.start // 8:n.stop // 8], weight_g_idx=gi,
                    weight_shape=[n.stop - n.start, K])
    k = _part(K, style, rank, world, "K")
    _check(style, rank, world, k.stop - k.start, N, group_size, act)
    g = _groups_slice(k, group_size, act)
    return dict(weight_packed=weight_packed[:, k.start // 8:k.stop // 8], weight_scale=weight_scale[:, g],
                weight_zero_point=None if zp is None else zp[:, g],
                weight_g_idx=None if gi is None or not act else gi[k], weight_shape=[N, k.stop - k.start])


def from_gptq_tp(qweight, scales, qzeros=None, g_idx=None, *, group_size: int, sym: bool, desc_act: bool,
                 checkpoint_format: str, style: str, rank: int, world: int) -> Frame:
    """Rank ``rank``'s frame of a whole GPTQ layer split ``style``-parallel over ``world`` ranks."""
    t = slice_gptq(qweight, scales, qzeros, g_idx, group_size=group_size, desc_act=desc_act, style=style, rank=rank,
                   world=world)
    return from_gptq(t["qweight"], t["scales"], t["qzeros"], t["g_idx"], group_size=group_size, sym=sym,
                     desc_act=desc_act, checkpoint_format=checkpoint_format, shard=style, rank=rank, world=world)


def from_awq_tp(qweight, scales, qzeros, *, group_size: int, style: str, rank: int, world: int) -> Frame:
    t = slice_awq(qweight, scales, qzeros, group_size=group_size, style=style, rank=rank, world=world)
    return from_awq(t["qweight"], t["scales"], t["qzeros"], group_size=group_size, shard=style, rank=rank, world=world)


def from_compressed_tp(weight_packed, weight_scale, weight_zero_point=None, weight_g_idx=None, *, weight_shape,
                       group_size: int, symmetric: bool, actorder: str | None = None, style: str, rank: int,
                       world: int) -> Frame:
    if hasattr(weight_shape, "tolist"):
        weight_shape = weight_shape.tolist()
    t = slice_compressed(weight_packed, weight_scale, weight_zero_point, weight_g_idx, weight_shape=weight_shape,
                         group_size=group_size, actorder=actorder, style=style, rank=rank, world=world)
    return from_compressed(t["weight_packed"], t["weight_scale"], t["weight_zero_point"], t["weight_g_idx"],
                           weight_shape=t["weight_shape"], group_size=group_size, symmetric=symmetric,
                           actorder=actorder, shard=style, rank=rank, world=world)
