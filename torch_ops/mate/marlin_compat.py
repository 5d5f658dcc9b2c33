"""vLLM's Marlin Python surface, served by mate: a Marlin-based stack switches kernels by changing
an import.

Call shapes follow vLLM v0.11 (``vllm/model_executor/layers/quantization/utils/marlin_utils.py``
and the ``gptq_marlin_repack`` / ``awq_marlin_repack`` ops of ``vllm/_custom_ops.py``): same
names, same argument order, same defaults. Later vLLM (PR #24722, W4A8, late 2025) inserted
``input_global_scale`` before ``bias`` in ``apply_*_marlin_linear`` and appended ``input_dtype``;
every vLLM call site passes these by keyword, and both are accepted here as keywords.

**The tensors differ from Marlin's; only the call shapes match.** The load-time functions return
mate frame pieces (``src/frame/mod.rs``), and ``apply_*_marlin_linear`` expects exactly those:

| function | Marlin returns | here |
|---|---|---|
| ``gptq_marlin_repack`` / ``awq_marlin_repack`` | int32 [K/16, 2N] | frame ``qweight`` int32 [N/16, K/64, 128] (rows gathered by ``perm``) |
| ``marlin_permute_scales`` | scales, columns permuted | scales unchanged [K/G, N] |
| ``marlin_zero_points`` / ``awq_to_marlin_zero_points`` | permuted, interleaved | frame zeros: exact, sequential [K/G, N/8] |
| ``marlin_permute_bias`` | bias permuted | bias unchanged |
| ``marlin_sort_g_idx`` | ``(g_idx[argsort], argsort)`` | same, stable sort, groups checked |
| ``marlin_make_workspace_new`` | int32 [SMs] zeros | empty (ignored) |

Do not mix them with tensors from vLLM's own Marlin ops. Group size, zero points and act order
reach the apply step as they do in Marlin: the group from ``weight_scale.shape[0]``, zero points
from ``wtype`` (``uint4``: zero points, ``uint4b8``: symmetric; never from whether ``weight_zp``
is empty), act order from ``g_idx_sort_indices`` being non-empty (``marlin_make_empty_g_idx`` is
Marlin's explicit "no act order" marker).

Arguments mate does not need are accepted and ignored: ``workspace`` (mate's op sizes its own:
``torch.ops.mate.w4a16_workspace_size``), ``g_idx`` in the apply step (the permutation carries
the act order; the sorted ``g_idx`` only says which group a row is in, which the frame knows),
``use_fp32_reduce`` (mate always accumulates and reduces in fp32), ``input_global_scale`` when
``input_dtype`` is None. Arguments mate cannot honour raise ``ValueError`` naming the argument,
its value and the rule: ``is_k_full=False``, ``num_bits != 4``, a ``wtype`` other than uint4b8 /
uint4, ``input_dtype`` int8 / fp8, ``is_a_8bit=True``.
"""

from __future__ import annotations

from functools import lru_cache

import torch

from .frame import from_awq, from_gptq
from .quantize import _pack

__all__ = [
    "GPTQ_MARLIN_TILE", "GPTQ_MARLIN_MIN_THREAD_N", "GPTQ_MARLIN_MIN_THREAD_K", "MARLIN_SUPPORTED_GROUP_SIZES",
    "USE_FP32_REDUCE_DEFAULT", "gptq_marlin_repack", "awq_marlin_repack", "marlin_permute_scales",
    "marlin_zero_points", "awq_to_marlin_zero_points", "marlin_sort_g_idx", "marlin_permute_bias",
    "marlin_make_workspace_new", "marlin_make_empty_g_idx", "marlin_make_empty_zp", "marlin_is_k_full",
    "apply_gptq_marlin_linear", "apply_awq_marlin_linear",
]

GPTQ_MARLIN_TILE = 16
GPTQ_MARLIN_MIN_THREAD_N = 64
GPTQ_MARLIN_MIN_THREAD_K = 128
MARLIN_SUPPORTED_GROUP_SIZES = [-1, 32, 64, 128]
USE_FP32_REDUCE_DEFAULT = True

_SYMMETRIC = {"uint4b8": True, "uint4": False}
_AWQ_ORDER = (0, 2, 4, 6, 1, 3, 5, 7)


def _bits(num_bits):
    if num_bits != 4:
        raise ValueError(f"`num_bits` = {num_bits!r}: mate serves 4-bit weights only (num_bits=4)")


def _no_a8(is_a_8bit):
    if is_a_8bit:
        raise ValueError("`is_a_8bit` = True: mate serves fp16/bf16 activations only (W4A16); pass is_a_8bit=False")


def _unpack(packed: torch.Tensor, dim: int, order=tuple(range(8))) -> torch.Tensor:
    """int32 words -> uint8 nibbles, 8 per word along `dim`; nibble j holds entry order[j]."""
    w = packed.movedim(dim, -1)
    out = torch.empty(*w.shape, 8, dtype=torch.uint8, device=w.device)
    for j in range(8):
        out[..., order[j]] = ((w >> (4 * j)) & 0xF).to(torch.uint8)
    return out.reshape(*w.shape[:-1], -1).movedim(-1, dim)


def _ones_scales(n, device):
    return torch.ones(1, n, dtype=torch.float16, device=device)


# -- load time --------------------------------------------------------------------------------


def gptq_marlin_repack(b_q_weight: torch.Tensor, perm: torch.Tensor, size_k: int, size_n: int, num_bits: int,
                       is_a_8bit: bool = False) -> torch.Tensor:
    """GPTQ ``qweight`` int32 [K/8, N] -> frame ``qweight``; with a non-empty ``perm``
    (``g_idx_sort_indices``) rows are gathered through it, as Marlin's repack does."""
    _bits(num_bits)
    _no_a8(is_a_8bit)
    if tuple(b_q_weight.shape) != (size_k // 8, size_n) or size_k % 8:
        raise ValueError(f"`b_q_weight` = a tensor of shape {tuple(b_q_weight.shape)}: must be [size_k/8, size_n] = "
                         f"[{size_k // 8}, {size_n}] (GPTQ qweight, packed along K)")
    if perm is not None and perm.numel() > 0:
        if perm.shape != (size_k,):
            raise ValueError(f"`perm` = a tensor of shape {tuple(perm.shape)}: must be empty or [size_k] = [{size_k}]")
        q = _unpack(b_q_weight, 0)[perm.long()]
        b_q_weight = _pack(q, 0)
    return from_gptq(b_q_weight, _ones_scales(size_n, b_q_weight.device), None, None, group_size=-1, sym=True,
                     desc_act=False, checkpoint_format="gptq_v2").qweight


def awq_marlin_repack(b_q_weight: torch.Tensor, size_k: int, size_n: int, num_bits: int,
                      is_a_8bit: bool = False) -> torch.Tensor:
    """AWQ ``qweight`` int32 [K, N/8] (interleaved) -> frame ``qweight``."""
    _bits(num_bits)
    _no_a8(is_a_8bit)
    if tuple(b_q_weight.shape) != (size_k, size_n // 8):
        raise ValueError(f"`b_q_weight` = a tensor of shape {tuple(b_q_weight.shape)}: must be [size_k, size_n/8] = "
                         f"[{size_k}, {size_n // 8}] (AWQ qweight, packed along N)")
    dev = b_q_weight.device
    zeros = torch.zeros(1, size_n // 8, dtype=torch.int32, device=dev)
    return from_awq(b_q_weight, _ones_scales(size_n, dev), zeros, group_size=-1).qweight


def marlin_permute_scales(s: torch.Tensor, size_k: int, size_n: int, group_size: int,
                          is_a_8bit: bool = False) -> torch.Tensor:
    """Scales [K/G, N] as the frame holds them (unpermuted, contiguous)."""
    _no_a8(is_a_8bit)
    if group_size not in MARLIN_SUPPORTED_GROUP_SIZES:
        raise ValueError(f"`group_size` = {group_size!r}: must be one of {MARLIN_SUPPORTED_GROUP_SIZES}")
    groups = 1 if group_size == -1 else size_k // group_size
    if s.dim() != 2 or s.shape[1] != size_n or s.shape[0] != groups:
        raise ValueError(f"`s` = a tensor of shape {tuple(s.shape)}: must be [size_k/group_size, size_n] = "
                         f"[{groups}, {size_n}]")
    return s.contiguous()


def marlin_zero_points(zp: torch.Tensor, size_k: int, size_n: int, num_bits: int,
                       is_a_8bit: bool = False) -> torch.Tensor:
    """Unpacked exact zero points int [K/G, N] -> frame zeros int32 [K/G, N/8] (sequential)."""
    _bits(num_bits)
    _no_a8(is_a_8bit)
    if zp.dim() != 2 or zp.shape[1] != size_n or size_n % 8:
        raise ValueError(f"`zp` = a tensor of shape {tuple(zp.shape)}: must be [groups, size_n] = [.., {size_n}] "
                         f"(unpacked zero points)")
    return _pack(zp, 1)


def awq_to_marlin_zero_points(q_zp_packed: torch.Tensor, size_k: int, size_n: int, num_bits: int,
                              is_a_8bit: bool = False) -> torch.Tensor:
    """AWQ ``qzeros`` int32 [K/G, N/8] (interleaved) -> frame zeros (sequential, exact)."""
    _bits(num_bits)
    _no_a8(is_a_8bit)
    if q_zp_packed.dim() != 2 or q_zp_packed.shape[1] * 8 != size_n:
        raise ValueError(f"`q_zp_packed` = a tensor of shape {tuple(q_zp_packed.shape)}: must be [groups, size_n/8] = "
                         f"[.., {size_n // 8}]")
    return _pack(_unpack(q_zp_packed, 1, _AWQ_ORDER), 1)


def marlin_sort_g_idx(g_idx: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``(sorted g_idx, g_idx_sort_indices int32)``. Stable (vLLM's argsort is not; any order
    within a group is correct). Refuses a ``g_idx`` whose groups do not all hold the same number
    of rows: the frame needs contiguous groups of ``group_size`` rows after sorting."""
    g = g_idx.to(torch.int64)
    if g.numel() > 0:
        counts = torch.bincount(g) if int(g.min()) >= 0 else None
        if counts is None or not bool((counts == counts[0]).all()):
            shown = "negative entries" if counts is None else f"group sizes {sorted(set(counts.tolist()))}"
            raise ValueError(f"`g_idx` = a tensor with {shown}: groups 0, 1, ... must each hold the same number of "
                             "rows (group_size), so that after sorting group g is rows [g*G, (g+1)*G)")
    order = torch.argsort(g, stable=True)
    return g_idx[order], order.to(torch.int32)


def marlin_permute_bias(s: torch.Tensor) -> torch.Tensor:
    """Unchanged: mate adds the original bias (Marlin permutes its copy)."""
    return s


def marlin_make_workspace_new(device: torch.device, max_blocks_per_sm: int = 1) -> torch.Tensor:
    """An empty int32 tensor: the apply step ignores ``workspace`` (see the module doc)."""
    return torch.zeros(0, dtype=torch.int32, device=device)


def marlin_make_empty_g_idx(device: torch.device) -> torch.Tensor:
    return torch.nn.Parameter(torch.empty(0, dtype=torch.int32, device=device), requires_grad=False)


def marlin_make_empty_zp(device: torch.device) -> torch.Tensor:
    return torch.nn.Parameter(torch.empty(0, dtype=torch.int32, device=device), requires_grad=False)


def marlin_is_k_full(act_order: bool, is_row_parallel: bool) -> bool:
    return (not act_order) or (act_order and not is_row_parallel)


# -- per forward ------------------------------------------------------------------------------


@lru_cache(maxsize=None)
def _meta(K: int, N: int, group_size: int, has_zeros: bool, has_perm: bool) -> tuple:
    return tuple(torch.ops.mate.frame_meta(K, N, group_size, has_zeros, has_perm))


def _wtype_symmetric(wtype, arg: str) -> bool:
    name = wtype if isinstance(wtype, str) else str(wtype)
    if name not in _SYMMETRIC:
        raise ValueError(f"`{arg}` = {name}: must be uint4b8 (symmetric, zero 8) or uint4 (zero points); "
                         "mate serves 4-bit integer weights only")
    return _SYMMETRIC[name]


def _apply(input, weight, weight_scale, weight_zp, g_idx_sort_indices, wtype, wtype_arg, N, K, bias,
           input_dtype):
    if input_dtype is not None and input_dtype not in (torch.float16, torch.bfloat16):
        raise ValueError(f"`input_dtype` = {input_dtype}: mate serves fp16/bf16 activations only (W4A16); "
                         "pass None")
    sym = _wtype_symmetric(wtype, wtype_arg)
    groups = weight_scale.shape[0]
    if groups < 1 or K % groups:
        raise ValueError(f"`weight_scale` = a tensor of shape {tuple(weight_scale.shape)}: its rows (groups) must "
                         f"divide input_size_per_partition = {K}")
    group_size = -1 if groups == 1 else K // groups
    has_perm = g_idx_sort_indices is not None and g_idx_sort_indices.numel() > 0
    meta = list(_meta(K, N, group_size, not sym, has_perm))
    if tuple(weight.shape) != (N // 16, K // 64, 128):
        raise ValueError(f"`weight` = a tensor of shape {tuple(weight.shape)}: must be the mate frame qweight "
                         f"[N/16, K/64, 128] = [{N // 16}, {K // 64}, 128] (from mate.marlin_compat's repack, "
                         "not vLLM's)")
    return torch.ops.mate.w4a16_gemm(
        input, weight, meta, weight_scale, None if sym else weight_zp, g_idx_sort_indices if has_perm else None,
        bias, group_size,
    )


def apply_gptq_marlin_linear(
    input: torch.Tensor,
    weight: torch.Tensor,
    weight_scale: torch.Tensor,
    weight_zp: torch.Tensor,
    g_idx: torch.Tensor,
    g_idx_sort_indices: torch.Tensor,
    workspace: torch.Tensor,
    wtype,
    output_size_per_partition: int,
    input_size_per_partition: int,
    is_k_full: bool,
    bias: torch.Tensor | None = None,
    use_fp32_reduce: bool = USE_FP32_REDUCE_DEFAULT,
    *,
    input_global_scale: torch.Tensor | None = None,
    input_dtype: torch.dtype | None = None,
) -> torch.Tensor:
    """``input @ W + bias`` -> ``[..., output_size_per_partition]`` through mate (frame tensors
    from this module's load-time functions). Ignored: ``g_idx``, ``workspace``,
    ``use_fp32_reduce``, ``input_global_scale``."""
    if not is_k_full:
        raise ValueError("`is_k_full` = False: mate needs the full K of an act-order layer (no row-parallel "
                         "split of an act-order layer); pass is_k_full=True")
    return _apply(input, weight, weight_scale, weight_zp, g_idx_sort_indices, wtype, "wtype",
                  output_size_per_partition, input_size_per_partition, bias, input_dtype)


def apply_awq_marlin_linear(
    input: torch.Tensor,
    weight: torch.Tensor,
    weight_scale: torch.Tensor,
    weight_zp: torch.Tensor,
    g_idx: torch.Tensor,
    g_idx_sort_indices: torch.Tensor,
    workspace: torch.Tensor,
    quant_type,
    output_size_per_partition: int,
    input_size_per_partition: int,
    bias: torch.Tensor | None = None,
    use_fp32_reduce: bool = USE_FP32_REDUCE_DEFAULT,
    *,
    input_global_scale: torch.Tensor | None = None,
    input_dtype: torch.dtype | None = None,
) -> torch.Tensor:
    """AWQ's apply step (no act order): as ``apply_gptq_marlin_linear``."""
    return _apply(input, weight, weight_scale, weight_zp, g_idx_sort_indices, quant_type, "quant_type",
                  output_size_per_partition, input_size_per_partition, bias, input_dtype)
