"""W4A16Linear and the RTN quantizer against the float64 reference (reference64.py), the
loader's error when the library is missing, and the errors of the Python layer."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import mate
from checkpoints import (BOUND, errors, random_awq, random_compressed, random_gptq, reference, reference_awq,
                         reference_compressed)
from mate.linear import W4A16Linear
from mate.quantize import rtn_quantize
from reference64 import dequantize_gptq, gemm64

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]
ROOT = Path(__file__).resolve().parents[2]


def _ref_weight(ck, K):
    """float64 W [K, N] of an RTN checkpoint, dequantized by the GPTQ definition (not by mate)."""
    return dequantize_gptq(ck.qweight, ck.scales, ck.qzeros, None, group_size=ck.group_size, sym=ck.sym,
                           desc_act=False, checkpoint_format="gptq_v2")


@pytest.mark.parametrize("group_size", [-1, 32, 64, 128])
@pytest.mark.parametrize("sym", [True, False])
def test_rtn_error_bound(group_size, sym):
    gen = torch.Generator().manual_seed(group_size + 7 * sym)
    w = torch.randn(192, 256, generator=gen) * 0.05
    w[3, :] = 0  # an all-zero row: its groups get scale 1 and represent 0 exactly
    ck = rtn_quantize(w, group_size=group_size, sym=sym, dtype=torch.float16)
    deq = _ref_weight(ck, 256).t()  # [N, K]
    G = 256 if group_size == -1 else group_size
    s = ck.scales.double().t().repeat_interleave(G, dim=1)  # [N, K]
    err = (deq - w.double()).abs()
    # symmetric: |w / s| <= 7, nothing clips, round-to-nearest: s / 2; zero point: the range ends may clip by s / 2 more
    bound = s * (0.5 if sym else 1.0) * (1 + 1e-3)
    assert bool((err <= bound).all()), (err / s).max().item()
    assert torch.equal(deq[3], torch.zeros(256, dtype=torch.float64))
    # and it is a real approximation, not a constant
    assert (deq - w.double()).norm() / w.double().norm() < 0.2


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("group_size,sym,dtype,bias", [
    (-1, True, torch.float16, False), (32, False, torch.bfloat16, True), (64, True, torch.bfloat16, True),
    (128, False, torch.float16, False), (128, True, torch.float16, True),
])
def test_from_linear_matches_reference(device, group_size, sym, dtype, bias):
    gen = torch.Generator().manual_seed(11)
    lin = torch.nn.Linear(256, 192, bias=bias)
    with torch.no_grad():
        lin.weight.copy_(torch.randn(192, 256, generator=gen) * 0.05)
    lin = lin.to(device)
    layer = W4A16Linear.from_linear(lin, group_size=group_size, sym=sym, dtype=dtype)
    assert (layer.in_features, layer.out_features, layer.group_size) == (256, 192, group_size)
    assert (layer.zeros is None) == sym and layer.perm is None
    x = torch.randn(2, 3, 256, generator=gen).to(device=device, dtype=dtype)  # leading batch dims
    y = layer(x)
    assert y.shape == (2, 3, 192) and y.dtype == dtype
    ck = rtn_quantize(lin.weight, group_size=group_size, sym=sym, dtype=dtype)
    ref = gemm64(x, _ref_weight(ck, 256), lin.bias.to(dtype) if bias else None)
    total, col = errors(y, ref)
    assert total <= BOUND[dtype] and col <= 5 * BOUND[dtype], (total, col)
    # the quantized layer is not the float one (so the bound above can fail)
    assert errors(y, gemm64(x, lin.weight.detach().double().t(), lin.bias))[0] > 5 * BOUND[dtype]


@pytest.mark.parametrize("device", DEVICES)
def test_forward_out_matches_forward(device):
    gen = torch.Generator().manual_seed(5)
    ck = random_gptq(256, 128, 64, False, torch.float16, device, desc_act=True, gen=torch.Generator(device).manual_seed(5))
    b = torch.randn(128, generator=gen).half().to(device)
    layer = W4A16Linear.from_gptq(ck.qweight, ck.scales, ck.qzeros, ck.g_idx, b, group_size=64, sym=False,
                                  desc_act=True, checkpoint_format="gptq_v2")
    x = torch.randn(4, 5, 256, generator=gen).half().to(device)
    out = torch.full((4, 5, 128), float("nan"), dtype=torch.float16, device=device)
    ret = layer.forward_out(x, out)
    assert ret is out
    assert torch.equal(out, layer(x))
    assert errors(out, reference(ck, x, b))[0] <= BOUND[torch.float16]
    assert layer.workspace_size(x) >= 0


def test_from_awq_and_compressed():
    gen = torch.Generator().manual_seed(9)
    ack = random_awq(256, 128, 128, torch.float16, "cpu", gen=gen)
    x = torch.randn(3, 256, generator=gen).half()
    la = W4A16Linear.from_awq(ack.qweight, ack.scales, ack.qzeros, group_size=128)
    assert errors(la(x), reference_awq(ack, x))[0] <= BOUND[torch.float16]
    cck = random_compressed(256, 128, 64, False, torch.bfloat16, "cpu", actorder="group", gen=gen)
    xb = x.bfloat16()
    lc = W4A16Linear.from_compressed(cck.weight_packed, cck.weight_scale, cck.weight_zero_point, cck.weight_g_idx,
                                     weight_shape=cck.weight_shape, group_size=64, symmetric=False, actorder="group")
    assert errors(lc(xb), reference_compressed(cck, xb))[0] <= BOUND[torch.bfloat16]


def test_buffers_travel_with_the_module():
    layer = W4A16Linear.from_linear(torch.nn.Linear(128, 64), group_size=64, sym=False)
    sd = layer.state_dict()
    assert set(sd) == {"qweight", "scales", "zeros", "bias"}  # no perm (no act order)
    sym = W4A16Linear.from_linear(torch.nn.Linear(128, 64, bias=False), group_size=64, sym=True)
    assert set(sym.state_dict()) == {"qweight", "scales"}
    assert sym.meta == mate.frame_meta(128, 64, 64, False, False)


@pytest.mark.parametrize("kw,patterns", [
    (dict(group_size=256), ["`group_size`", "256", r"\(-1, 32, 64, 128\)"]),
    (dict(group_size=48), ["`group_size`", "48"]),
    (dict(dtype=torch.float32), ["`dtype`", "float32", "float16 or torch.bfloat16"]),
])
def test_from_linear_errors(kw, patterns):
    import re
    with pytest.raises(ValueError) as e:
        W4A16Linear.from_linear(torch.nn.Linear(128, 64), **kw)
    for p in patterns:
        assert re.search(p, str(e.value)), (p, str(e.value))


def test_group_must_divide_k_and_other_errors():
    with pytest.raises(ValueError, match=r"`group_size` = 128: the input features K = 192 must be a multiple"):
        rtn_quantize(torch.randn(64, 192), group_size=128)
    with pytest.raises(ValueError, match=r"`weight` = .*int64.*2-D floating-point"):
        rtn_quantize(torch.zeros(64, 128, dtype=torch.int64))
    with pytest.raises(ValueError, match=r"`linear` = a Conv1d: must be a torch.nn.Linear"):
        W4A16Linear.from_linear(torch.nn.Conv1d(1, 1, 1))
    fr = W4A16Linear.from_linear(torch.nn.Linear(128, 64, bias=False))
    with pytest.raises(ValueError, match=r"`bias` = a tensor of shape \(32,\): must be \[out_features\] = \[64\]"):
        W4A16Linear(mate.Frame(fr.qweight, fr.meta, fr.scales, None, None, 128), torch.zeros(32))
    # the op names a dtype mismatch between the activation and the layer
    with pytest.raises(ValueError, match=r"`scales`"):
        fr(torch.randn(2, 128).bfloat16())


def test_loader_names_where_it_looked(monkeypatch, tmp_path):
    missing = [tmp_path / "a" / "libmate.so", tmp_path / "b" / "libmate.so"]
    monkeypatch.setattr(mate, "_candidates", lambda: missing)
    with pytest.raises(FileNotFoundError) as e:
        mate.library_path()
    for p in missing:
        assert str(p) in str(e.value)
    assert "MATE_LIBRARY" in str(e.value)


def test_import_with_a_missing_library_says_where():
    missing = "/nonexistent/dir/libmate.so"
    env = dict(os.environ, MATE_LIBRARY=missing, PYTHONPATH=str(ROOT / "torch_ops"))
    r = subprocess.run([sys.executable, "-c", "import mate"], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode != 0
    assert "FileNotFoundError" in r.stderr and missing in r.stderr and "MATE_LIBRARY" in r.stderr, r.stderr[-2000:]


@pytest.mark.gpu
def test_forward_reuses_the_op_workspace():
    """Split plans: forward() leaves the workspace to the op's own per-stream buffer, so after the
    first call on a stream its only allocation is the output; results are bit-identical to the
    .out path with an explicit workspace, reruns and a second stream included."""
    ck = random_gptq(8960, 1536, 128, True, torch.float16, "cuda")  # Qwen2-1.5B down: split plans
    layer = W4A16Linear.from_gptq(ck.qweight, ck.scales, ck.qzeros, None, None, group_size=128, sym=True,
                                  desc_act=False, checkpoint_format="gptq_v2")
    x = torch.randn(3, 8960, device="cuda").half()
    need = layer.workspace_size(x)
    assert need > 0
    out = torch.full((3, layer.out_features), float("nan"), dtype=x.dtype, device="cuda")
    y = layer.forward_out(x, out, torch.zeros(need, dtype=torch.uint8, device="cuda")).clone()
    assert errors(y, reference(ck, x, None))[0] <= BOUND[torch.float16]
    assert torch.equal(layer(x), y)
    torch.cuda.synchronize()
    before = torch.cuda.memory_stats()["allocation.all.allocated"]
    outs = [layer(x) for _ in range(4)]
    torch.cuda.synchronize()
    assert torch.cuda.memory_stats()["allocation.all.allocated"] - before == len(outs)  # the outputs only
    assert all(torch.equal(o, y) for o in outs)
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        z = layer(x)
    s.synchronize()
    assert torch.equal(z, y)
