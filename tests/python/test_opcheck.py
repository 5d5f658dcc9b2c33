"""torch.library.opcheck on both overloads, and torch.compile tracing through the C++ Meta kernels."""

import pytest
import torch

from checkpoints import frame_from_gptq_v2, random_gptq

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]


def sample(device, sym, desc_act, bias):
    ck = random_gptq(256, 128, 64, sym, torch.float16, device, desc_act=desc_act)
    fr = frame_from_gptq_v2(ck)
    x = torch.randn(2, 3, 256, device=device).half()
    b = torch.randn(128, device=device).half() if bias else None
    return (x, fr.qweight, fr.meta, fr.scales, fr.zeros, fr.perm, b, fr.group_size)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("sym,desc_act,bias", [(True, False, False), (False, True, True)])
def test_opcheck_functional(device, sym, desc_act, bias):
    torch.library.opcheck(torch.ops.mate.w4a16_gemm.default, sample(device, sym, desc_act, bias))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("sym,desc_act,bias", [(True, False, False), (False, True, True)])
def test_opcheck_out(device, sym, desc_act, bias):
    args = sample(device, sym, desc_act, bias)
    out = torch.empty(2, 3, 128, device=device, dtype=torch.float16)
    torch.library.opcheck(torch.ops.mate.w4a16_gemm.out, args, {"out": out})


@pytest.mark.parametrize("device", DEVICES)
def test_compile_fullgraph_traces_with_meta_kernels(device):
    x, qw, meta, s, z, p, b, g = sample(device, False, False, True)

    def f(x):
        return torch.ops.mate.w4a16_gemm(x, qw, meta, s, z, p, b, g) * 2

    eager = f(x)
    compiled = torch.compile(f, fullgraph=True, backend="aot_eager", dynamic=True)
    assert torch.equal(compiled(x), eager)
    x2 = torch.randn(5, 7, 256, device=device).half()
    assert torch.equal(compiled(x2), f(x2))
