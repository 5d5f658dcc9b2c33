"""``W4A16Linear``: an ``nn.Module`` serving one int4-weight linear layer through
``torch.ops.mate.w4a16_gemm``.

The frame tensors (``src/frame/mod.rs``) are buffers, so ``.to(device)`` and ``state_dict`` carry
them; the frame metadata is a plain int list (a constant for ``torch.compile``). ``forward``
calls the functional op (its only allocation is the output); ``forward_out`` calls the ``.out``
overload for callers that preallocate the output (and, optionally, the workspace the op
reports through ``torch.ops.mate.w4a16_workspace_size``). Leading batch dims and bias are the
op's: ``x`` is ``[..., K]``, the result ``[..., N]``.

Workspace: ``forward`` passes none, so a split-K call uses the op's own zeroed buffer for the
device and stream (src/device/workspace.rs, README "Workspace"): shared by every layer, never
freed, outside torch's allocator. ``forward_out`` takes an explicit one.

Casting the module (``.half()``, ``.to(torch.bfloat16)``) casts ``scales`` and ``bias``: the
activation dtype must match them (the op refuses a mismatch, naming both).
"""

from __future__ import annotations

import torch
from torch import nn

from .frame import Frame, from_awq, from_compressed, from_gptq
from .quantize import rtn_quantize

__all__ = ["W4A16Linear"]


class W4A16Linear(nn.Module):
    """``y = x @ W + bias`` with ``W`` int4 (a mate frame) and ``x`` float16 / bfloat16."""

    def __init__(self, frame: Frame, bias: torch.Tensor | None = None):
        super().__init__()
        meta = list(frame.meta)
        # x's columns: K, or a tensor-parallel shard frame's x_cols (src/frame/mod.rs).
        self.in_features, self.out_features = frame.in_features, frame.out_features
        self.group_size = int(frame.group_size)
        self.meta = meta
        if bias is not None:
            if bias.shape != (self.out_features,):
                raise ValueError(
                    f"`bias` = a tensor of shape {tuple(bias.shape)}: must be [out_features] = [{self.out_features}]"
                )
            bias = bias.detach().to(device=frame.scales.device, dtype=frame.scales.dtype).contiguous()
        self.register_buffer("qweight", frame.qweight)
        self.register_buffer("scales", frame.scales)
        self.register_buffer("zeros", frame.zeros)  # None for a symmetric frame
        self.register_buffer("perm", frame.perm)  # None without act order
        self.register_buffer("bias", bias)

    # -- construction -------------------------------------------------------------------------

    @classmethod
    def from_frame(cls, frame: Frame, bias: torch.Tensor | None = None) -> "W4A16Linear":
        return cls(frame, bias)

    @classmethod
    def from_gptq(cls, qweight, scales, qzeros=None, g_idx=None, bias=None, *, group_size: int, sym: bool,
                  desc_act: bool, checkpoint_format: str) -> "W4A16Linear":
        """GPTQ tensors (``mate.from_gptq``); every convention comes from the config arguments."""
        fr = from_gptq(qweight, scales, qzeros, g_idx, group_size=group_size, sym=sym, desc_act=desc_act,
                       checkpoint_format=checkpoint_format)
        return cls(fr, bias)

    @classmethod
    def from_awq(cls, qweight, scales, qzeros, bias=None, *, group_size: int) -> "W4A16Linear":
        return cls(from_awq(qweight, scales, qzeros, group_size=group_size), bias)

    @classmethod
    def from_compressed(cls, weight_packed, weight_scale, weight_zero_point=None, weight_g_idx=None, bias=None, *,
                        weight_shape, group_size: int, symmetric: bool, actorder: str | None = None) -> "W4A16Linear":
        fr = from_compressed(weight_packed, weight_scale, weight_zero_point, weight_g_idx, weight_shape=weight_shape,
                             group_size=group_size, symmetric=symmetric, actorder=actorder)
        return cls(fr, bias)

    @classmethod
    def from_linear(cls, linear: nn.Linear, *, group_size: int = 128, sym: bool = True,
                    dtype: torch.dtype | None = None) -> "W4A16Linear":
        """RTN-quantizes a float ``nn.Linear`` (``mate.quantize``): symmetric or zero point, group
        -1/32/64/128. ``dtype`` (float16 / bfloat16) is the activation dtype the layer will
        serve; default: the linear's own if it is one of them, else float16."""
        if not isinstance(linear, nn.Linear):
            raise ValueError(f"`linear` = a {type(linear).__name__}: must be a torch.nn.Linear")
        ck = rtn_quantize(linear.weight, group_size=group_size, sym=sym, dtype=dtype)
        fr = from_gptq(ck.qweight, ck.scales, ck.qzeros, None, group_size=group_size, sym=sym, desc_act=False,
                       checkpoint_format="gptq_v2")
        return cls(fr, linear.bias)

    # -- the call -----------------------------------------------------------------------------

    def frame_args(self):
        """``(qweight, frame_meta, scales, zeros, perm)`` in the op's order."""
        return (self.qweight, self.meta, self.scales, self.zeros, self.perm)

    # The calls read the frame tensors from ``_buffers`` itself: through nn.Module.__getattr__ the
    # five lookups cost ~3 us of an eager call's host time, against ~0.15 us (bench/host_cost.py
    # ``module`` arm; bench/NOTES.md session 35).
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b = self._buffers
        return torch.ops.mate.w4a16_gemm(
            x, b["qweight"], self.meta, b["scales"], b["zeros"], b["perm"], b["bias"], self.group_size
        )

    def _out(self, x: torch.Tensor, out: torch.Tensor, workspace: torch.Tensor | None) -> None:
        b = self._buffers
        torch.ops.mate.w4a16_gemm.out(
            x, b["qweight"], self.meta, b["scales"], b["zeros"], b["perm"], b["bias"], self.group_size,
            workspace=workspace, out=out,
        )

    def forward_out(self, x: torch.Tensor, out: torch.Tensor, workspace: torch.Tensor | None = None) -> torch.Tensor:
        """Writes ``x @ W + bias`` into ``out`` (``[..., N]``, the activation's dtype) and returns it."""
        self._out(x, out, workspace)
        return out

    def workspace_size(self, x: torch.Tensor) -> int:
        """Bytes of workspace a call on ``x`` needs (0 for most shapes); see README "Workspace"."""
        return torch.ops.mate.w4a16_workspace_size(x, self.meta)

    def extra_repr(self) -> str:
        flags = []
        if self.zeros is not None:
            flags.append("zero_point")
        if self.perm is not None:
            flags.append("act_order")
        return (f"in_features={self.in_features}, out_features={self.out_features}, group_size={self.group_size}, "
                f"dtype={self.scales.dtype}, bias={self.bias is not None}" + "".join(f", {f}" for f in flags))
