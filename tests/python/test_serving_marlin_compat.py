"""mate.marlin_compat: the load-time sequence a Marlin-based stack runs (as vLLM's
MarlinLinearKernel / AWQ-Marlin method do), then the apply step, against the float64 reference
of the original checkpoint; the call shapes against vLLM v0.11's; the refusals."""

from __future__ import annotations

import inspect
import re

import pytest
import torch

import mate.marlin_compat as mc
from checkpoints import BOUND, errors, random_awq, random_gptq, reference, reference_awq
from reference64 import unpack_cols

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]


def load_gptq(ck, K, N):
    """vLLM MarlinLinearKernel.process_weights_after_loading, call for call (mc. for ops./utils.)."""
    dev = ck.qweight.device
    if ck.desc_act:
        g_idx, sort = mc.marlin_sort_g_idx(ck.g_idx)
    else:
        g_idx, sort = mc.marlin_make_empty_g_idx(dev), mc.marlin_make_empty_g_idx(dev)
    qw = mc.gptq_marlin_repack(ck.qweight.contiguous(), perm=sort, size_k=K, size_n=N, num_bits=4)
    s = mc.marlin_permute_scales(ck.scales.contiguous(), size_k=K, size_n=N, group_size=ck.group_size)
    if ck.sym:
        zp = mc.marlin_make_empty_zp(dev)
    else:
        zp = mc.marlin_zero_points(unpack_cols(ck.qzeros), size_k=ck.scales.shape[0], size_n=N, num_bits=4)
    return dict(weight=qw, weight_scale=s, weight_zp=zp, g_idx=g_idx, g_idx_sort_indices=sort,
                workspace=mc.marlin_make_workspace_new(dev))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("group_size,sym,desc_act,dtype", [
    (128, True, False, torch.float16), (64, False, False, torch.bfloat16), (32, True, True, torch.float16),
    (128, False, True, torch.bfloat16), (-1, True, False, torch.float16),
])
def test_gptq_path_matches_reference(device, group_size, sym, desc_act, dtype):
    K, N = 512, 192
    gen = torch.Generator(device).manual_seed(17 + group_size + sym + 2 * desc_act)
    ck = random_gptq(K, N, group_size, sym, dtype, device, desc_act=desc_act, gen=gen)
    t = load_gptq(ck, K, N)
    bias = mc.marlin_permute_bias(torch.randn(N, generator=gen, device=device).to(dtype))
    x = torch.randn(3, 4, K, generator=gen, device=device).to(dtype)
    y = mc.apply_gptq_marlin_linear(
        input=x, **t, wtype="uint4b8" if sym else "uint4", output_size_per_partition=N,
        input_size_per_partition=K, is_k_full=mc.marlin_is_k_full(desc_act, False), bias=bias,
    )
    assert y.shape == (3, 4, N)
    total, col = errors(y, reference(ck, x, bias))
    assert total <= BOUND[dtype] and col <= 5 * BOUND[dtype], (total, col)
    # positional call in v0.11's order, W4A8-era keywords accepted and ignored
    y2 = mc.apply_gptq_marlin_linear(x, t["weight"], t["weight_scale"], t["weight_zp"], t["g_idx"],
                                     t["g_idx_sort_indices"], t["workspace"], "uint4b8" if sym else "uint4", N, K,
                                     True, bias, True, input_global_scale=None, input_dtype=dtype)
    assert torch.equal(y, y2)


def test_act_order_gather_matters():
    """Dropping the permutation (an empty g_idx_sort_indices) gives a wrong result: the
    reference check above can fail."""
    K, N = 512, 128
    ck = random_gptq(K, N, 64, True, torch.float16, "cpu", desc_act=True)
    t = load_gptq(ck, K, N)
    t["g_idx_sort_indices"] = mc.marlin_make_empty_g_idx("cpu")
    x = torch.randn(2, K).half()
    y = mc.apply_gptq_marlin_linear(x, **t, wtype="uint4b8", output_size_per_partition=N, input_size_per_partition=K,
                                    is_k_full=True)
    assert errors(y, reference(ck, x, None))[0] > 0.1


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("group_size", [-1, 64, 128])
def test_awq_path_matches_reference(device, group_size):
    K, N = 256, 128
    gen = torch.Generator(device).manual_seed(group_size + 100)
    ck = random_awq(K, N, group_size, torch.float16, device, gen=gen)
    qw = mc.awq_marlin_repack(ck.qweight, size_k=K, size_n=N, num_bits=4)
    s = mc.marlin_permute_scales(ck.scales, size_k=K, size_n=N, group_size=group_size)
    zp = mc.awq_to_marlin_zero_points(ck.qzeros, size_k=ck.scales.shape[0], size_n=N, num_bits=4)
    empty = mc.marlin_make_empty_g_idx(device)
    x = torch.randn(5, K, generator=gen, device=device).half()
    y = mc.apply_awq_marlin_linear(x, qw, s, zp, empty, empty, mc.marlin_make_workspace_new(device), "uint4", N, K)
    assert errors(y, reference_awq(ck, x))[0] <= BOUND[torch.float16]


# vLLM v0.11 marlin_utils.py / _custom_ops.py parameter lists (the spec the module follows).
VLLM_SIGNATURES = {
    "apply_gptq_marlin_linear": ["input", "weight", "weight_scale", "weight_zp", "g_idx", "g_idx_sort_indices",
                                 "workspace", "wtype", "output_size_per_partition", "input_size_per_partition",
                                 "is_k_full", "bias", "use_fp32_reduce"],
    "apply_awq_marlin_linear": ["input", "weight", "weight_scale", "weight_zp", "g_idx", "g_idx_sort_indices",
                                "workspace", "quant_type", "output_size_per_partition", "input_size_per_partition",
                                "bias", "use_fp32_reduce"],
    "gptq_marlin_repack": ["b_q_weight", "perm", "size_k", "size_n", "num_bits"],
    "awq_marlin_repack": ["b_q_weight", "size_k", "size_n", "num_bits"],
    "marlin_permute_scales": ["s", "size_k", "size_n", "group_size"],
    "marlin_zero_points": ["zp", "size_k", "size_n", "num_bits"],
    "awq_to_marlin_zero_points": ["q_zp_packed", "size_k", "size_n", "num_bits"],
    "marlin_sort_g_idx": ["g_idx"],
    "marlin_make_workspace_new": ["device"],
    "marlin_is_k_full": ["act_order", "is_row_parallel"],
    "marlin_permute_bias": ["s"],
}


@pytest.mark.parametrize("name", sorted(VLLM_SIGNATURES))
def test_call_shapes_match_vllm(name):
    params = inspect.signature(getattr(mc, name)).parameters.values()
    positional = [p.name for p in params if p.kind == p.POSITIONAL_OR_KEYWORD]
    assert positional[:len(VLLM_SIGNATURES[name])] == VLLM_SIGNATURES[name]


def _expect(fn, *patterns):
    with pytest.raises(ValueError) as e:
        fn()
    for p in patterns:
        assert re.search(p, str(e.value)), (p, str(e.value))


def test_refusals_name_argument_value_rule():
    K, N = 256, 128
    ck = random_gptq(K, N, 128, True, torch.float16, "cpu")
    t = load_gptq(ck, K, N)
    x = torch.randn(2, K).half()
    call = lambda **kw: mc.apply_gptq_marlin_linear(**{**dict(  # noqa: E731
        input=x, **t, wtype="uint4b8", output_size_per_partition=N, input_size_per_partition=K, is_k_full=True), **kw})
    _expect(lambda: call(is_k_full=False), "`is_k_full` = False", "full K", "is_k_full=True")
    _expect(lambda: call(wtype="uint8b128"), "`wtype` = uint8b128", "uint4b8", "uint4")
    _expect(lambda: call(wtype="float4_e2m1f"), "`wtype` = float4_e2m1f")
    _expect(lambda: call(input_dtype=torch.int8), "`input_dtype` = torch.int8", "fp16/bf16")
    _expect(lambda: call(input_dtype=torch.float8_e4m3fn), "`input_dtype` = torch.float8_e4m3fn")
    vllm_shaped = torch.zeros(K // 16, 2 * N, dtype=torch.int32)  # what vLLM's own repack returns
    _expect(lambda: call(weight=vllm_shaped), r"`weight` = a tensor of shape \(16, 256\)", r"\[N/16, K/64, 128\]",
            "not vLLM's")
    _expect(lambda: call(weight_scale=torch.ones(3, N).half()), r"`weight_scale` = a tensor of shape \(3, 128\)",
            "divide input_size_per_partition = 256")
    _expect(lambda: mc.apply_awq_marlin_linear(x, t["weight"], t["weight_scale"], t["weight_zp"], t["g_idx"],
                                               t["g_idx_sort_indices"], t["workspace"], "uint8", N, K),
            "`quant_type` = uint8")
    _expect(lambda: mc.gptq_marlin_repack(ck.qweight, t["g_idx_sort_indices"], K, N, 8), "`num_bits` = 8", "4-bit")
    _expect(lambda: mc.gptq_marlin_repack(ck.qweight, t["g_idx_sort_indices"], K, N, 4, is_a_8bit=True),
            "`is_a_8bit` = True", "W4A16")
    _expect(lambda: mc.gptq_marlin_repack(ck.qweight, t["g_idx_sort_indices"], 2 * K, N, 4),
            r"`b_q_weight` = a tensor of shape \(32, 128\)", r"\[size_k/8, size_n\] = \[64, 128\]")
    _expect(lambda: mc.gptq_marlin_repack(ck.qweight, torch.arange(5, dtype=torch.int32), K, N, 4),
            r"`perm` = a tensor of shape \(5,\)", r"\[size_k\] = \[256\]")
    _expect(lambda: mc.marlin_permute_scales(ck.scales, K, N, 256), "`group_size` = 256", r"\[-1, 32, 64, 128\]")
    _expect(lambda: mc.marlin_permute_scales(ck.scales, K, N, 64), r"`s` = a tensor of shape \(2, 128\)",
            r"\[4, 128\]")
    bad = torch.arange(K) // 64
    bad[0] = 1  # group 0 has 63 rows, group 1 has 65
    _expect(lambda: mc.marlin_sort_g_idx(bad.to(torch.int32)), "`g_idx`", r"group sizes \[63, 64, 65\]",
            "same number of rows")


def test_sort_is_stable_and_consistent():
    g = torch.tensor([1, 0, 1, 0, 0, 1], dtype=torch.int32)
    sorted_g, perm = mc.marlin_sort_g_idx(g)
    assert perm.dtype == torch.int32
    assert perm.tolist() == [1, 3, 4, 0, 2, 5] and sorted_g.tolist() == [0, 0, 0, 1, 1, 1]
