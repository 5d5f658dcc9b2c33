"""Swapping the Linear layers of a Hugging Face transformers model for ``W4A16Linear``.

``swap_linears(model, group_size=128, sym=True)`` RTN-quantizes every ``nn.Linear`` except
``lm_head`` (and any name in ``skip``), fusing projections that share an input as serving engines
do: ``q_proj, k_proj, v_proj`` -> one ``qkv_proj``, ``gate_proj, up_proj`` -> one ``gate_up_proj``.

The model's own forward keeps working: each original projection becomes a ``FusedSlice`` that
returns its columns of the fused output. The parent module (the attention or MLP block) gets a
forward hook that drops the fused output when the block returns, so within one block call the
fused GEMM runs once, on the first slice's call, and the other slices reuse it (they check that
they receive the same input tensor; given another one they run the fused GEMM themselves, which
is correct, only slower). RTN works per output channel, so quantizing the fused weight gives the
same int4 values as quantizing each projection alone.
"""

from __future__ import annotations

import torch
from torch import nn

from .linear import W4A16Linear
from .quantize import rtn_dequantize

__all__ = ["FUSE_GROUPS", "FusedProjection", "FusedSlice", "swap_linears", "dequantize_linears_", "iter_w4a16"]

# (fused name, projections sharing one input), the names vLLM's packed_modules_mapping uses.
FUSE_GROUPS = (("qkv_proj", ("q_proj", "k_proj", "v_proj")), ("gate_up_proj", ("gate_proj", "up_proj")))


class FusedProjection(nn.Module):
    """One ``W4A16Linear`` over the concatenated output columns of several projections."""

    def __init__(self, linear: W4A16Linear, sizes: list[int]):
        super().__init__()
        self.linear = linear
        self.sizes = list(sizes)
        self.offsets = [sum(self.sizes[:i]) for i in range(len(self.sizes))]
        self._x: torch.Tensor | None = None
        self._y: torch.Tensor | None = None

    def part(self, x: torch.Tensor, i: int) -> torch.Tensor:
        if self._x is not x:
            self._x, self._y = x, self.linear(x)
        a = self.offsets[i]
        return self._y[..., a:a + self.sizes[i]]

    def release(self, *_):
        self._x = self._y = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(x)


class FusedSlice(nn.Module):
    """Stands where a projection was: its columns of the shared fused output."""

    def __init__(self, fused: FusedProjection, index: int):
        super().__init__()
        object.__setattr__(self, "_fused", fused)  # not a submodule: the parent owns the fused module
        self.index = index
        self.out_features = fused.sizes[index]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._fused.part(x, self.index)

    def extra_repr(self) -> str:
        return f"index={self.index}, out_features={self.out_features}"


def _fused_linear(linears: list[nn.Linear], group_size: int, sym: bool, dtype) -> W4A16Linear:
    weight = torch.cat([l.weight.detach() for l in linears], dim=0)
    bias = None
    if any(l.bias is not None for l in linears):
        bias = torch.cat([l.bias.detach() if l.bias is not None else
                          torch.zeros(l.out_features, dtype=l.weight.dtype, device=l.weight.device) for l in linears])
    big = nn.Linear(weight.shape[1], weight.shape[0], bias=bias is not None, device="meta")
    big.weight = nn.Parameter(weight, requires_grad=False)
    if bias is not None:
        big.bias = nn.Parameter(bias, requires_grad=False)
    return W4A16Linear.from_linear(big, group_size=group_size, sym=sym, dtype=dtype)


def _servable(l: nn.Linear, group_size: int) -> bool:
    G = l.in_features if group_size == -1 else group_size
    return l.in_features % 64 == 0 and l.out_features % 64 == 0 and l.in_features % G == 0


def swap_linears(model: nn.Module, *, group_size: int = 128, sym: bool = True, dtype: torch.dtype | None = None,
                 fuse: bool = True, skip: tuple[str, ...] = ("lm_head",)) -> dict:
    """Replaces the model's ``nn.Linear`` layers in place. ``dtype``: the activation dtype
    (float16 / bfloat16; default each layer's own, else float16). Returns a report:
    ``{"fused": [names], "swapped": [names], "skipped": {name: reason}}``; a layer outside the
    kernels' envelope (K or N not a multiple of 64, K not a multiple of the group) stays float."""
    report = {"fused": [], "swapped": [], "skipped": {}}
    parents = [(n, m) for n, m in model.named_modules()]
    for pname, parent in parents:
        prefix = f"{pname}." if pname else ""
        if fuse:
            for fused_name, members in FUSE_GROUPS:
                ls = [getattr(parent, m, None) for m in members]
                if not all(type(l) is nn.Linear for l in ls) or any(prefix + m in skip for m in members):
                    continue
                if len({l.in_features for l in ls}) != 1 or not all(_servable(l, group_size) for l in ls):
                    continue
                fused = FusedProjection(_fused_linear(ls, group_size, sym, dtype), [l.out_features for l in ls])
                parent.add_module(fused_name, fused)
                for i, m in enumerate(members):
                    setattr(parent, m, FusedSlice(fused, i))
                parent.register_forward_hook(lambda mod, args, out, f=fused: f.release())
                report["fused"].append(prefix + fused_name)
        for cname, child in list(parent.named_children()):
            full = prefix + cname
            if type(child) is not nn.Linear or full in skip or cname in skip:
                continue
            if not _servable(child, group_size):
                report["skipped"][full] = (f"{child.in_features}x{child.out_features} (K x N): K and N must be "
                                           f"multiples of 64 and K of group_size {group_size}")
                continue
            setattr(parent, cname, W4A16Linear.from_linear(child, group_size=group_size, sym=sym, dtype=dtype))
            report["swapped"].append(full)
    return report


def iter_w4a16(model: nn.Module):
    """``(name, W4A16Linear)`` for every quantized layer of a swapped model (fused ones once)."""
    for name, m in model.named_modules():
        if isinstance(m, W4A16Linear):
            yield name, m


def dequantize_linears_(model: nn.Module, *, group_size: int = 128, sym: bool = True, dtype: torch.dtype | None = None,
                        skip: tuple[str, ...] = ("lm_head",)) -> list[str]:
    """The float twin of ``swap_linears``: in place, every ``nn.Linear`` it would quantize gets
    the RTN-dequantized weight ``(q - z) * s`` (in the weight's own dtype), for comparing a
    swapped model with the same weights run in float. Returns the names changed."""
    done = []
    for name, m in model.named_modules():
        if type(m) is not nn.Linear or name in skip or name.rsplit(".", 1)[-1] in skip or not _servable(m, group_size):
            continue
        with torch.no_grad():
            m.weight.copy_(rtn_dequantize(m.weight, group_size=group_size, sym=sym, dtype=dtype))
        done.append(name)
    return done
