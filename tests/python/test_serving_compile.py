"""torch.compile(fullgraph=True) over W4A16Linear: the op's Meta kernels live in C++, so Dynamo
traces it and Inductor compiles around it. CPU by default (Inductor needs a C++ compiler); the
CUDA-graph mode ("reduce-overhead") needs CUDA and runs on the GPU machine."""

from __future__ import annotations

import shutil

import pytest
import torch
from torch import nn

from checkpoints import BOUND, errors
from mate.linear import W4A16Linear
from mate.quantize import rtn_quantize
from reference64 import dequantize_gptq, gemm64

HAS_CXX = shutil.which("g++") is not None or shutil.which("c++") is not None


class MLP(nn.Module):
    def __init__(self, device, dtype):
        super().__init__()
        torch.manual_seed(0)
        self.fl = [nn.Linear(256, 512), nn.Linear(512, 128, bias=False)]
        self.up = W4A16Linear.from_linear(self.fl[0].to(device), group_size=64, sym=False, dtype=dtype)
        self.down = W4A16Linear.from_linear(self.fl[1].to(device), group_size=128, sym=True, dtype=dtype)

    def forward(self, x):
        return self.down(torch.nn.functional.silu(self.up(x)))

    def reference(self, x):
        """float64: dequantized by the GPTQ definition, activation rounded like the model's."""
        w = []
        for lin, g, s in ((self.fl[0], 64, False), (self.fl[1], 128, True)):
            ck = rtn_quantize(lin.weight, group_size=g, sym=s, dtype=x.dtype)
            w.append(dequantize_gptq(ck.qweight, ck.scales, ck.qzeros, None, group_size=g, sym=s, desc_act=False))
        h = gemm64(x, w[0], self.up.bias).to(x.dtype)
        return gemm64(torch.nn.functional.silu(h.float()).to(x.dtype), w[1], None)


def _check(model, x, compiled):
    y = compiled(x)
    assert torch.equal(y, model(x)) or errors(y, model(x).double())[0] < 1e-3
    total, _ = errors(y, model.reference(x))
    assert total <= 2 * BOUND[x.dtype], total


@pytest.mark.skipif(not HAS_CXX, reason="Inductor on CPU needs a C++ compiler (g++); none on PATH")
def test_compile_inductor_fullgraph_cpu():
    model = MLP("cpu", torch.bfloat16)
    compiled = torch.compile(model, fullgraph=True)
    _check(model, torch.randn(4, 256).bfloat16(), compiled)
    _check(model, torch.randn(2, 3, 256).bfloat16(), compiled)  # leading dims: a recompile, still fullgraph


def test_compile_out_overload_fullgraph_cpu():
    """The .out path under Dynamo: functionalized (the op mutates `out` and returns nothing)."""
    model = MLP("cpu", torch.float16)

    def f(x, out):
        model.down.forward_out(torch.nn.functional.silu(model.up(x)), out)
        return out * 1

    x = torch.randn(5, 256).half()
    out = torch.empty(5, 128, dtype=torch.float16)
    got = torch.compile(f, fullgraph=True, backend="aot_eager")(x, out)
    assert torch.equal(got, model(x))
    assert torch.equal(out, got)  # the mutation reached the caller's tensor


@pytest.mark.gpu
def test_compile_reduce_overhead_cuda():
    model = MLP("cuda", torch.float16)
    compiled = torch.compile(model, fullgraph=True, mode="reduce-overhead")
    x = torch.randn(8, 256, device="cuda").half()
    for _ in range(3):  # warm-up runs, then CUDA-graph replays
        y = compiled(x)
    torch.cuda.synchronize()
    assert torch.equal(y, model(x)) or errors(y, model(x).double())[0] < 1e-3
    assert errors(y, model.reference(x))[0] <= 2 * BOUND[torch.float16]
