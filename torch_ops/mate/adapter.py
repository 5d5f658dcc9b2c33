"""A mixed-precision linear kernel with the shape of vLLM's ``MPLinearKernel``, without vLLM.

Follows ``vllm/model_executor/layers/quantization/kernels/mixed_precision/MPLinearKernel.py`` as on
vLLM main in late 2025 (the v0.10/v0.11 class shape; read from the source, vLLM not imported): a
config dataclass (``MPLinearLayerConfig``: full / partition weight shape ``(in, out)``, weight
type, activation type, group size, zero points, has_g_idx, then ``out_type`` and
``checkpoint_format`` with defaults; read with ``getattr`` so configs without them work too),
and a kernel class with ``get_min_capability()``, ``can_implement(config) -> (ok, reason)``,
``__init__(config, w_q_param_name, w_s_param_name, w_zp_param_name=None, w_gidx_param_name=None)``,
``process_weights_after_loading(layer)`` and ``apply_weights(layer, x, bias=None)``. vLLM picks
kernels by duck typing (``choose_mp_linear_kernel`` calls these classmethods), so
``MateLinearKernel`` can sit in its candidate list as is.

Layer parameters are read in GPTQ layout (vLLM's GPTQ layer: ``qweight`` int32 [K/8, N] packed
along K, ``scales`` [K/G, N], ``qzeros`` int32 [K/G, N/8] packed along N, ``g_idx`` [K]); vLLM
normalises other layouts to this one with ``permute_param_layout_`` before a kernel reads them.
Conventions come from the config only (DESIGN.md lesson 1): ``zero_points`` decides whether
``qzeros`` is read, ``has_g_idx`` whether ``g_idx`` is; ``weight_type`` ``uint4b8`` is symmetric
(zero 8), ``uint4`` has zero points, read as exact zeros unless ``checkpoint_format == "gptq"``
(GPTQ v1 stores zero - 1).

After ``process_weights_after_loading`` the layer holds the mate frame under the same names:
``qweight`` = frame words [N/16, K/64, 128], ``scales`` = frame scales, ``qzeros`` = frame zeros
(or an empty tensor), ``g_idx`` = the act-order permutation (or an empty tensor). They are not
the checkpoint's tensors any more.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from .frame import from_gptq
from .quantize import GROUP_SIZES

__all__ = ["MPLinearLayerConfig", "MateLinearKernel", "WEIGHT_TYPES"]

# vLLM ScalarType names (str(scalar_types.uint4b8) == "uint4b8") -> symmetric?
WEIGHT_TYPES = {"uint4b8": True, "uint4": False}
ACT_TYPES = (torch.float16, torch.bfloat16)
K_ALIGN, N_ALIGN = 64, 64  # src/frame/mod.rs: K_ALIGN, N_ALIGN


@dataclass
class MPLinearLayerConfig:
    """vLLM's ``MPLinearLayerConfig`` (same fields, same order). ``weight_type`` is a vLLM
    ``ScalarType`` or its name (``"uint4b8"``, ``"uint4"``)."""

    full_weight_shape: tuple[int, int]  # [in, out]
    partition_weight_shape: tuple[int, int]  # [in, out] of this rank
    weight_type: object
    act_type: torch.dtype
    group_size: int
    zero_points: bool
    has_g_idx: bool
    out_type: torch.dtype | None = None
    checkpoint_format: str = ""
    # not in vLLM's config: this rank's index, used only in error messages of a row-parallel
    # act-order shard (None: torch.distributed's rank when initialized, else 0)
    tp_rank: int | None = None


def weight_type_name(t) -> str:
    """The ScalarType's name (vLLM's ``ScalarType.__str__``), or the string itself."""
    return t if isinstance(t, str) else str(t)


class MateLinearKernel:
    """mate's W4A16 GEMM as an ``MPLinearKernel``."""

    @classmethod
    def get_min_capability(cls) -> int:
        return 80  # the kernels are built for sm_90a with an sm_80 fallback

    @classmethod
    def can_implement(cls, c) -> tuple[bool, str | None]:
        wt = weight_type_name(c.weight_type)
        if wt not in WEIGHT_TYPES:
            return False, f"weight_type {wt} not in ({', '.join(WEIGHT_TYPES)}): mate serves 4-bit weights only"
        if c.zero_points == WEIGHT_TYPES[wt]:
            want = "False" if WEIGHT_TYPES[wt] else "True"
            return False, f"weight_type {wt} with zero_points={c.zero_points}: {wt} needs zero_points={want}"
        if c.act_type not in ACT_TYPES:
            return False, f"act_type {c.act_type} not in (torch.float16, torch.bfloat16)"
        out_type = getattr(c, "out_type", None)
        if out_type is not None and out_type != c.act_type:
            return False, f"out_type {out_type} differs from act_type {c.act_type}: the output has the activation's dtype"
        if c.group_size not in GROUP_SIZES:
            return False, f"group_size {c.group_size} not in {GROUP_SIZES}"
        K, N = (int(v) for v in c.partition_weight_shape)
        full_k = int(c.full_weight_shape[0])
        if N <= 0 or N % N_ALIGN:
            return False, f"partition N {N} not a multiple of {N_ALIGN}"
        if _k_not_full(c):  # row-parallel act order: a shard frame (src/frame/shard.rs) pads its rows
            if K <= 0 or K % 8 or full_k % K:
                return False, (f"row-parallel act-order partition K {K} of full K {full_k}: needs K a multiple "
                               f"of 8 that divides the full K")
        else:
            if K <= 0 or K % K_ALIGN:
                return False, f"partition K {K} not a multiple of {K_ALIGN}"
            if c.group_size != -1 and K % c.group_size:
                return False, f"partition K {K} not a multiple of group_size {c.group_size}"
        fmt = getattr(c, "checkpoint_format", "") or ""
        if c.zero_points and fmt not in ("", "gptq", "gptq_v2"):
            return False, f"checkpoint_format {fmt!r} not in ('', 'gptq', 'gptq_v2') for zero points"
        return True, None

    def __init__(self, c, w_q_param_name: str, w_s_param_name: str, w_zp_param_name: str | None = None,
                 w_gidx_param_name: str | None = None) -> None:
        ok, why = self.can_implement(c)
        if not ok:
            raise ValueError(f"MateLinearKernel cannot implement this layer: {why}")
        if c.zero_points and w_zp_param_name is None:
            raise ValueError("`w_zp_param_name` = None: the config has zero_points=True, name the zero-point parameter")
        if c.has_g_idx and w_gidx_param_name is None:
            raise ValueError("`w_gidx_param_name` = None: the config has has_g_idx=True, name the g_idx parameter")
        self.config = c
        self.w_q_name, self.w_s_name = w_q_param_name, w_s_param_name
        self.w_zp_name, self.w_gidx_name = w_zp_param_name, w_gidx_param_name
        self.meta: list | None = None

    def process_weights_after_loading(self, layer: nn.Module) -> None:
        c = self.config
        sym = WEIGHT_TYPES[weight_type_name(c.weight_type)]
        qweight = getattr(layer, self.w_q_name)
        scales = getattr(layer, self.w_s_name)
        qzeros = getattr(layer, self.w_zp_name) if c.zero_points else None  # config decides, not presence
        g_idx = getattr(layer, self.w_gidx_name) if c.has_g_idx else None
        fmt = "gptq" if getattr(c, "checkpoint_format", "") == "gptq" else "gptq_v2"
        K, N = (int(v) for v in c.partition_weight_shape)
        shard = {}
        if _k_not_full(c):  # the rank's rows with every group's scales (vLLM's loader): a shard frame
            shard = dict(shard="row", rank=_tp_rank(c), world=int(c.full_weight_shape[0]) // K)
        fr = from_gptq(qweight.data, scales.data, None if qzeros is None else qzeros.data,
                       None if g_idx is None else g_idx.data, group_size=c.group_size, sym=sym,
                       desc_act=c.has_g_idx, checkpoint_format=fmt, **shard)
        if (fr.in_features, fr.meta[2]) != (K, N):
            raise ValueError(f"`{self.w_q_name}` holds a {fr.meta[1]}x{fr.meta[2]} (K x N) layer: "
                             f"the config's partition_weight_shape is {K}x{N}")
        empty = torch.empty(0, dtype=torch.int32, device=fr.qweight.device)
        self.meta = fr.meta
        self.group_size = fr.group_size  # a shard frame may regroup (src/frame/shard.rs)
        _replace(layer, self.w_q_name, fr.qweight)
        _replace(layer, self.w_s_name, fr.scales)
        _replace(layer, self.w_zp_name or "w_zp", fr.zeros if fr.zeros is not None else empty)
        _replace(layer, self.w_gidx_name or "g_idx", fr.perm if fr.perm is not None else empty)
        self._has_zeros, self._has_perm = fr.zeros is not None, fr.perm is not None

    def apply_weights(self, layer: nn.Module, x: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
        if self.meta is None:
            raise ValueError("`layer`: process_weights_after_loading(layer) must run before apply_weights")
        zeros = getattr(layer, self.w_zp_name or "w_zp") if self._has_zeros else None
        perm = getattr(layer, self.w_gidx_name or "g_idx") if self._has_perm else None
        return torch.ops.mate.w4a16_gemm(
            x, getattr(layer, self.w_q_name), self.meta, getattr(layer, self.w_s_name), zeros, perm, bias,
            self.group_size,
        )


def _k_not_full(c) -> bool:
    """Row-parallel act order: this rank holds a K slice that does not contain whole groups."""
    return bool(c.has_g_idx) and int(c.partition_weight_shape[0]) != int(c.full_weight_shape[0])


def _tp_rank(c) -> int:
    r = getattr(c, "tp_rank", None)
    if r is None and torch.distributed.is_available() and torch.distributed.is_initialized():
        r = torch.distributed.get_rank()
    return int(r or 0)


def _replace(layer: nn.Module, name: str, t: torch.Tensor) -> None:
    """Swaps a parameter for a frozen one (what vLLM's ``replace_parameter`` does)."""
    if hasattr(layer, name):
        delattr(layer, name)
    layer.register_parameter(name, nn.Parameter(t, requires_grad=False))
