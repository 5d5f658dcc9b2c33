"""The op on CPU and GPU: correctness against the float64 reference, and the tested non-errors.
The large GPU matrix lives in test_gpu_matrix.py."""

import itertools

import pytest
import torch

from checkpoints import BOUND, errors, frame_from_gptq_v2, random_gptq, reference, run_out

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]
CONFIGS = list(itertools.product([-1, 32, 64, 128], [True, False], [torch.float16, torch.bfloat16], [False, True]))


@pytest.mark.parametrize("group_size,sym,dtype,with_bias", CONFIGS)
@pytest.mark.parametrize("M", [1, 3, 17, 64])
@pytest.mark.parametrize("device", DEVICES)
def test_matches_float64_reference(device, M, group_size, sym, dtype, with_bias):
    gen = torch.Generator(device).manual_seed(hash((M, group_size, sym, str(dtype), with_bias)) % 2**31)
    K, N = 256, 192
    ck = random_gptq(K, N, group_size, sym, dtype, device, gen=gen)
    fr = frame_from_gptq_v2(ck)
    x = torch.randn(M, K, generator=gen, device=device).to(dtype)
    bias = torch.randn(N, generator=gen, device=device).to(dtype) if with_bias else None
    out = run_out(x, fr, bias)
    total, col = errors(out, reference(ck, x, bias))
    assert total <= BOUND[dtype] and col <= 5 * BOUND[dtype], (total, col)


@pytest.mark.parametrize("group_size,sym", [(128, True), (64, False), (-1, False), (32, True)])
@pytest.mark.parametrize("device", DEVICES)
def test_act_order(device, group_size, sym):
    gen = torch.Generator(device).manual_seed(7)
    K, N = 512, 128
    ck = random_gptq(K, N, group_size, sym, torch.float16, device, desc_act=True, gen=gen)
    fr = frame_from_gptq_v2(ck)
    x = torch.randn(5, K, generator=gen, device=device).half()
    ref = reference(ck, x, None)
    out = run_out(x, fr)
    assert errors(out, ref)[0] <= BOUND[torch.float16]
    # The gather matters: without it the result is far off (so the test can fail).
    if group_size != -1:
        skipped = run_out(x[:, fr.perm.long()].contiguous(), fr)
        assert errors(skipped, ref)[0] > 0.1


@pytest.mark.parametrize("device", DEVICES)
def test_functional_and_out_agree_and_leading_dims(device):
    gen = torch.Generator(device).manual_seed(3)
    ck = random_gptq(128, 64, 64, False, torch.bfloat16, device, gen=gen)
    fr = frame_from_gptq_v2(ck)
    x = torch.randn(2, 3, 128, generator=gen, device=device).bfloat16()
    y = torch.ops.mate.w4a16_gemm(x, *fr.args(), None, fr.group_size)
    assert y.shape == (2, 3, 64)
    assert torch.equal(y, run_out(x, fr))
    assert errors(y, reference(ck, x, None))[0] <= BOUND[torch.bfloat16]


@pytest.mark.parametrize("device", DEVICES)
def test_strided_rows(device):
    gen = torch.Generator(device).manual_seed(4)
    ck = random_gptq(128, 64, 32, True, torch.float16, device, gen=gen)
    fr = frame_from_gptq_v2(ck)
    big = torch.randn(6, 192, generator=gen, device=device).half()
    x = big[:, :128]  # row stride 192: served
    assert x.stride() == (192, 1)
    assert errors(run_out(x, fr), reference(ck, x, None))[0] <= BOUND[torch.float16]


@pytest.mark.parametrize("device", DEVICES)
def test_m0_returns_empty(device):
    ck = random_gptq(128, 64, 64, True, torch.float16, device)
    fr = frame_from_gptq_v2(ck)
    y = torch.ops.mate.w4a16_gemm(torch.empty(0, 128, dtype=torch.float16, device=device), *fr.args(), None, 64)
    assert y.shape == (0, 64)
    y3 = torch.ops.mate.w4a16_gemm(torch.empty(2, 0, 128, dtype=torch.float16, device=device), *fr.args(), None, 64)
    assert y3.shape == (2, 0, 64)


@pytest.mark.parametrize("device", DEVICES)
def test_nan_inf_propagate_to_touched_outputs(device):
    ck = random_gptq(128, 64, 64, False, torch.float16, device)
    fr = frame_from_gptq_v2(ck)
    x = torch.randn(4, 128, device=device).half()
    x[1, 5] = float("nan")
    x[2, 7] = float("inf")
    out = run_out(x, fr)
    assert out[1].isnan().all()  # NaN row touches every column
    assert (out[2].isinf() | out[2].isnan()).all()  # inf times a nonzero weight, or NaN from inf * 0
    assert out[[0, 3]].isfinite().all()
    fr.scales[0, 9] = float("nan")
    out = run_out(torch.randn(4, 128, device=device).half(), fr)
    assert out[:, 9].isnan().all() and out[:, [c for c in range(64) if c != 9]].isfinite().all()


@pytest.mark.parametrize("device", DEVICES)
def test_workspace_size_is_reported(device):
    ck = random_gptq(128, 64, 64, True, torch.float16, device)
    fr = frame_from_gptq_v2(ck)
    n = torch.ops.mate.w4a16_workspace_size(torch.empty(8, 128, dtype=torch.float16, device=device), fr.meta)
    assert n == 0  # whole-K family: no workspace; a passed workspace is accepted and unused
    ws = torch.empty(16, dtype=torch.uint8, device=device)
    run_out(torch.randn(2, 128, device=device).half(), fr, workspace=ws)
