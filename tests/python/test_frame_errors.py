"""Every input the frame builder refuses: a ValueError naming the argument, its value and the rule."""

import re

import pytest
import torch

from checkpoints import (
    marlin_from_gptq,
    random_awq,
    random_compressed,
    random_gptq,
)

import mate

K, N, G = 256, 128, 64


def expect(fn, *patterns):
    with pytest.raises(ValueError) as e:
        fn()
    msg = str(e.value)
    for p in patterns:
        assert re.search(p, msg), f"{p!r} not in: {msg}"


# --- GPTQ -----------------------------------------------------------------------------------


def gptq(**over):
    sym = over.pop("_sym", False)
    act = over.pop("_act", True)
    ck = random_gptq(K, N, G, sym, torch.float16, "cpu", desc_act=act, gen=torch.Generator().manual_seed(1))
    a = dict(qweight=ck.qweight, scales=ck.scales, qzeros=ck.qzeros, g_idx=ck.g_idx, group_size=G, sym=sym,
             desc_act=act, checkpoint_format="gptq_v2")
    for k, v in over.items():
        a[k] = v(a) if callable(v) else v
    return lambda: mate.from_gptq(a.pop("qweight"), a.pop("scales"), a.pop("qzeros"), a.pop("g_idx"), **a)


def g_idx_runs_broken(a):
    g = a["g_idx"].clone()
    g[g == 1] = 0  # group 0 now holds 2G rows, group 1 none
    return g


GPTQ_CASES = {
    "format_unknown": (dict(checkpoint_format="gptq_v3"), ["`checkpoint_format`", '"gptq_v3"', '"gptq" \\(v1']),
    "format_awq": (dict(checkpoint_format="awq"), ["`checkpoint_format`", "gptq_v2"]),
    "qweight_int64": (dict(qweight=lambda a: a["qweight"].long()), ["`qweight`", "int64", "int32"]),
    "qweight_uint8": (dict(qweight=lambda a: a["qweight"].view(torch.uint8)), ["`qweight`", "uint8"]),
    "qweight_3d": (dict(qweight=lambda a: a["qweight"][None]), ["`qweight`", r"\[1, 32, 128\]", "2-D"]),
    "qweight_k_off_envelope": (dict(qweight=lambda a: a["qweight"][:4].contiguous(), _act=False), ["`K`", "32", "multiple of 64"]),
    "qweight_n_off_envelope": (dict(qweight=lambda a: a["qweight"][:, :96].contiguous(), _act=False), ["`N`", "96", "multiple of 64"]),
    "qweight_meta_device": (dict(qweight=lambda a: a["qweight"].to("meta")), ["`qweight`", "meta", "CPU or CUDA"]),
    "group_size_16": (dict(group_size=16), ["`group_size`", "16", "-1 \\(per channel\\), 32, 64, 128"]),
    "group_size_not_dividing_k": (dict(group_size=128, qweight=lambda a: a["qweight"][:24].contiguous(), _act=False), ["`group_size`", "multiple of the group size"]),
    "scales_float32": (dict(scales=lambda a: a["scales"].float()), ["`scales`", "float32", "float16 or torch.bfloat16"]),
    "scales_wrong_groups": (dict(scales=lambda a: a["scales"][:2].contiguous()), ["`scales`", r"\[2, 128\]", r"\[4, 128\]"]),
    "scales_other_device": (dict(scales=lambda a: a["scales"].to("meta")), ["`scales`", "meta", "same device as `qweight`"]),
    "qzeros_missing_asym": (dict(qzeros=None), ["`qzeros`", "None", "sym=False"]),
    "qzeros_float": (dict(qzeros=lambda a: a["qzeros"].float()), ["`qzeros`", "float32", "int32"]),
    "qzeros_wrong_shape": (dict(qzeros=lambda a: a["qzeros"][:, :8].contiguous()), ["`qzeros`", r"\[4, 8\]", r"\[4, 16\]"]),
    "qzeros_unpacked": (dict(qzeros=lambda a: torch.zeros(4, 128, dtype=torch.int32)), ["`qzeros`", r"\[4, 128\]", r"\[4, 16\]"]),
    "g_idx_missing": (dict(g_idx=None), ["`g_idx`", "None", "desc_act=True"]),
    "g_idx_wrong_length": (dict(g_idx=lambda a: a["g_idx"][:200].contiguous()), ["`g_idx`", r"\[200\]", r"\[256\]"]),
    "g_idx_float": (dict(g_idx=lambda a: a["g_idx"].float()), ["`g_idx`", "float32", "int32 or torch.int64"]),
    "g_idx_negative": (dict(g_idx=lambda a: torch.where(torch.arange(K) == 5, -1, a["g_idx"]).int()), ["`g_idx`", r"g_idx\[5\] = -1", r"\[0, 4\)"]),
    "g_idx_too_large": (dict(g_idx=lambda a: torch.where(torch.arange(K) == 9, 4, a["g_idx"]).int()), ["`g_idx`", r"g_idx\[9\] = 4", r"\[0, 4\)"]),
    "g_idx_runs_not_group_size": (dict(g_idx=g_idx_runs_broken), ["`g_idx`", "group 0 has 128 rows", "contiguous runs of exactly group_size", "group_size = 64"]),
}


@pytest.mark.parametrize("case", sorted(GPTQ_CASES))
def test_gptq_refusals(case):
    over, patterns = GPTQ_CASES[case]
    expect(gptq(**dict(over)), *patterns)


def test_gptq_v1_zero_16_refused():
    ck = random_gptq(K, N, G, False, torch.float16, "cpu", gen=torch.Generator().manual_seed(3), checkpoint_format="gptq")
    mate.from_gptq(ck.qweight, ck.scales, ck.qzeros, None, group_size=G, sym=False, desc_act=False, checkpoint_format="gptq")
    qz = ck.qzeros.clone()
    qz[2, 3] = qz[2, 3] | (0xF << 8)  # stored nibble 15 at group 2, column 8*3 + 2
    expect(
        lambda: mate.from_gptq(ck.qweight, ck.scales, qz, None, group_size=G, sym=False, desc_act=False, checkpoint_format="gptq"),
        "`qzeros`", "group 2, column 26", "zero 16", "4-bit",
    )
    # The same word is fine as v2 (an exact zero of 15).
    mate.from_gptq(ck.qweight, ck.scales, qz, None, group_size=G, sym=False, desc_act=False, checkpoint_format="gptq_v2")


def test_per_channel_act_order_requires_a_single_group():
    ck = random_gptq(K, N, -1, False, torch.float16, "cpu", desc_act=True, gen=torch.Generator().manual_seed(4))
    g = ck.g_idx.clone()
    g[0] = 1
    expect(
        lambda: mate.from_gptq(ck.qweight, ck.scales, ck.qzeros, g, group_size=-1, sym=False, desc_act=True, checkpoint_format="gptq_v2"),
        "`g_idx`", r"g_idx\[0\] = 1", r"\[0, 1\)",
    )


# --- AWQ ------------------------------------------------------------------------------------


def awq(**over):
    ck = random_awq(K, N, G, torch.float16, "cpu", gen=torch.Generator().manual_seed(2))
    a = dict(qweight=ck.qweight, scales=ck.scales, qzeros=ck.qzeros, group_size=G)
    for k, v in over.items():
        a[k] = v(a) if callable(v) else v
    return lambda: mate.from_awq(a.pop("qweight"), a.pop("scales"), a.pop("qzeros"), **a)


AWQ_CASES = {
    "qweight_int16": (dict(qweight=lambda a: a["qweight"].to(torch.int16)), ["`qweight`", "int16", "int32"]),
    "qweight_gptq_shaped": (dict(qweight=lambda a: torch.zeros(K // 8, N, dtype=torch.int32)), ["`K`", "32", "multiple of 64"]),
    "qzeros_wrong_shape": (dict(qzeros=lambda a: a["qzeros"][:3].contiguous()), ["`qzeros`", r"\[3, 16\]", r"\[4, 16\]"]),
    "qzeros_missing": (dict(qzeros=None), ["`qzeros`", "None", "required", "AWQ"]),
    "scales_bf16_ok_but_shape": (dict(scales=lambda a: a["scales"].t().contiguous()), ["`scales`", r"\[128, 4\]", r"\[4, 128\]"]),
    "group_size_48": (dict(group_size=48), ["`group_size`", "48"]),
}


@pytest.mark.parametrize("case", sorted(AWQ_CASES))
def test_awq_refusals(case):
    over, patterns = AWQ_CASES[case]
    expect(awq(**dict(over)), *patterns)


# --- compressed-tensors ---------------------------------------------------------------------


def ct(**over):
    sym = over.pop("_sym", False)
    ck = random_compressed(K, N, G, sym, torch.float16, "cpu", actorder="group", gen=torch.Generator().manual_seed(5))
    a = dict(weight_packed=ck.weight_packed, weight_scale=ck.weight_scale, weight_zero_point=ck.weight_zero_point,
             weight_g_idx=ck.weight_g_idx, weight_shape=[N, K], group_size=G, symmetric=sym, actorder="group")
    for k, v in over.items():
        a[k] = v(a) if callable(v) else v
    return lambda: mate.from_compressed(
        a.pop("weight_packed"), a.pop("weight_scale"), a.pop("weight_zero_point"), a.pop("weight_g_idx"), **a
    )


CT_CASES = {
    "weight_shape_1d": (dict(weight_shape=[N * K]), ["`weight_shape`", r"\[32768\]", r"\[N, K\]"]),
    "weight_shape_mismatch": (dict(weight_shape=[N, 2 * K]), ["`weight_packed`", r"\[128, 32\]", r"\[128, 64\]"]),
    "weight_shape_transposed": (dict(weight_shape=[K, N]), ["`weight_packed`", r"\[128, 32\]", r"\[256, 16\]"]),
    "weight_packed_int8": (dict(weight_packed=lambda a: a["weight_packed"].view(torch.int8)), ["`weight_packed`", "int8", "int32"]),
    "weight_scale_transposed": (dict(weight_scale=lambda a: a["weight_scale"].t().contiguous()), ["`weight_scale`", r"\[4, 128\]", r"\[128, 4\]"]),
    "zero_point_missing": (dict(weight_zero_point=None), ["`weight_zero_point`", "None", "symmetric=False"]),
    "zero_point_unpacked": (dict(weight_zero_point=lambda a: torch.zeros(N, 4, dtype=torch.int32)), ["`weight_zero_point`", r"\[128, 4\]", r"\[16, 4\]"]),
    "actorder_unknown": (dict(actorder="columns"), ["`actorder`", '"columns"', '"group"']),
    "g_idx_missing": (dict(weight_g_idx=None), ["`weight_g_idx`", "None", "actorder"]),
    "g_idx_runs": (dict(weight_g_idx=lambda a: torch.where(a["weight_g_idx"] == 3, 2, a["weight_g_idx"]).int()),
                   ["`weight_g_idx`", "group 2 has 128 rows", "contiguous runs"]),
    "g_idx_range": (dict(weight_g_idx=lambda a: torch.full((K,), 7, dtype=torch.int32)), ["`weight_g_idx`", r"\[0\] = 7", r"\[0, 4\)"]),
}


@pytest.mark.parametrize("case", sorted(CT_CASES))
def test_compressed_refusals(case):
    over, patterns = CT_CASES[case]
    expect(ct(**dict(over)), *patterns)


def test_compressed_symmetric_and_weight_actorder_read_neither():
    ck = random_compressed(K, N, G, True, torch.float16, "cpu", actorder="weight", gen=torch.Generator().manual_seed(6))
    junk = torch.tensor([float("nan")])
    fr = mate.from_compressed(ck.weight_packed, ck.weight_scale, junk, junk, weight_shape=[N, K], group_size=G,
                              symmetric=True, actorder="weight")
    assert fr.zeros is None and fr.perm is None


# --- Marlin ---------------------------------------------------------------------------------


def marlin(**over):
    sym = over.pop("_sym", False)
    ck = random_gptq(K, N, G, sym, torch.float16, "cpu", desc_act=True, gen=torch.Generator().manual_seed(7))
    m = marlin_from_gptq(ck)
    a = dict(qweight=m.qweight, scales=m.scales, zeros=m.zeros, g_idx=m.g_idx, perm=m.perm, group_size=G, sym=sym,
             desc_act=True, zero_layout="marlin")
    for k, v in over.items():
        a[k] = v(a) if callable(v) else v
    return lambda: mate.from_marlin(a.pop("qweight"), a.pop("scales"), a.pop("zeros"), a.pop("g_idx"), a.pop("perm"), **a)


def dup_perm(a):
    p = a["perm"].clone()
    p[1] = p[0]
    return p


MARLIN_CASES = {
    "zero_layout_unknown": (dict(zero_layout="gptq"), ["`zero_layout`", '"gptq"', '"marlin"', '"awq"']),
    "zero_layout_missing": (dict(zero_layout=None), ["`zero_layout`", "None", "asymmetric"]),
    "qweight_odd_columns": (dict(qweight=lambda a: a["qweight"][:, :255].contiguous()), ["`qweight`", r"\[16, 255\]", r"\[K/16, 2N\]"]),
    "qweight_gptq_layout": (dict(qweight=lambda a: torch.zeros(K // 8, N, dtype=torch.int32)), ["`scales`", r"\[4, 128\]", r"\[8, 64\]"]),
    "zeros_missing": (dict(zeros=None), ["`zeros`", "None", "sym=False"]),
    "g_idx_missing": (dict(g_idx=None), ["`g_idx`", "None", "desc_act=True"]),
    "perm_missing": (dict(perm=None), ["`perm`", "None", "g_idx_sort_indices"]),
    "perm_duplicate": (dict(perm=dup_perm), ["`perm`", "appears 2 times", "permutation"]),
    "perm_out_of_range": (dict(perm=lambda a: torch.where(torch.arange(K) == 0, K, a["perm"]).int()), ["`perm`", r"perm\[0\] = 256", r"\[0, 256\)"]),
    "g_idx_unsorted": (dict(g_idx=lambda a: a["g_idx"].flip(0).contiguous()), ["`g_idx`", r"g_idx\[0\] = 3", "must be sorted", "group 0"]),
    "scales_wrong_shape": (dict(scales=lambda a: a["scales"][:1].contiguous()), ["`scales`", r"\[1, 128\]", r"\[4, 128\]"]),
}


@pytest.mark.parametrize("case", sorted(MARLIN_CASES))
def test_marlin_refusals(case):
    over, patterns = MARLIN_CASES[case]
    expect(marlin(**dict(over)), *patterns)


def test_marlin_symmetric_reads_no_zeros_nor_layout():
    fr = marlin(_sym=True, zeros=torch.tensor([1.0]), zero_layout="anything")()
    assert fr.zeros is None and fr.perm is not None


# --- the ops directly: positional config is refused, the schema forces names ------------------


def test_config_arguments_are_keyword_only():
    ck = random_gptq(K, N, G, True, torch.float16, "cpu")
    with pytest.raises(Exception):
        torch.ops.mate.frame_from_gptq(ck.qweight, ck.scales, None, None, G, True, False, "gptq")


@pytest.mark.gpu
def test_gpu_refuses_mixed_devices():
    ck = random_gptq(K, N, G, False, torch.float16, "cuda")
    expect(
        lambda: mate.from_gptq(ck.qweight, ck.scales.cpu(), ck.qzeros, None, group_size=G, sym=False, desc_act=False,
                               checkpoint_format="gptq_v2"),
        "`scales`", "cpu", "same device as `qweight`", "cuda:0",
    )
