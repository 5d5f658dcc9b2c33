"""Bad input: every case raises ValueError naming the argument, the value and the rule."""

import pytest
import torch

import mate
from checkpoints import frame_from_gptq_v2, random_gptq

K, N, G = 256, 128, 64


def base(device="cpu", sym=False, desc_act=False):
    ck = random_gptq(K, N, G, sym, torch.float16, device, desc_act=desc_act)
    fr = frame_from_gptq_v2(ck)
    return dict(
        x=torch.randn(4, K, device=device).half(),
        qweight=fr.qweight,
        frame_meta=fr.meta,
        scales=fr.scales,
        zeros=fr.zeros,
        perm=fr.perm,
        bias=torch.randn(N, device=device).half(),
        group_size=G,
        out=torch.empty(4, N, device=device, dtype=torch.float16),
    )


def call(a):
    a = dict(a)
    out = a.pop("out")
    return torch.ops.mate.w4a16_gemm.out(**a, out=out)


def expect(a, *patterns):
    with pytest.raises(ValueError) as e:
        call(a)
    msg = str(e.value)
    for p in patterns:
        assert __import__("re").search(p, msg), f"{p!r} not in: {msg}"


def with_(**kw):
    a = base(sym=kw.pop("_sym", False), desc_act=kw.pop("_act", False))
    for k, v in kw.items():
        a[k] = v(a) if callable(v) else v
    return a


CASES = {
    # dtypes
    "x_float32": (dict(x=lambda a: a["x"].float()), ["`x`", "float32", "float16 or torch.bfloat16"]),
    "x_int8": (dict(x=lambda a: a["x"].to(torch.int8)), ["`x`", "int8"]),
    "qweight_int64": (dict(qweight=lambda a: a["qweight"].long()), ["`qweight`", "int64", "int32"]),
    "qweight_uint8": (dict(qweight=lambda a: a["qweight"].view(torch.uint8)), ["`qweight`", "uint8"]),
    "scales_bf16_for_f16": (dict(scales=lambda a: a["scales"].bfloat16()), ["`scales`", "bfloat16", "activation's dtype"]),
    "scales_float32": (dict(scales=lambda a: a["scales"].float()), ["`scales`", "float32"]),
    "zeros_float": (dict(zeros=lambda a: a["zeros"].float()), ["`zeros`", "float32", "int32"]),
    "perm_int64": (dict(_act=True, perm=lambda a: a["perm"].long()), ["`perm`", "int64", "int32"]),
    "bias_float32": (dict(bias=lambda a: a["bias"].float()), ["`bias`", "float32"]),
    "out_float32": (dict(out=lambda a: a["out"].float()), ["`out`", "float32"]),
    "out_bf16": (dict(out=lambda a: a["out"].bfloat16()), ["`out`", "bfloat16"]),
    # shapes
    "x_wrong_k": (dict(x=lambda a: torch.randn(4, K + 64).half()), ["`x`", r"\[4, 320\]", f"K = {K}"]),
    "x_0dim": (dict(x=lambda a: torch.tensor(1.0).half()), ["`x`", "0-dim"]),
    "qweight_wrong_shape": (dict(qweight=lambda a: a["qweight"][:4].contiguous()), ["`qweight`", r"\[4, 4, 128\]", r"\[8, 4, 128\]"]),
    "qweight_transposed": (dict(qweight=lambda a: a["qweight"].transpose(0, 1).contiguous()), ["`qweight`", r"\[4, 8, 128\]"]),
    "qweight_v1_layout": (dict(qweight=lambda a: torch.zeros(K // 8, N, dtype=torch.int32)), ["`qweight`", r"\[32, 128\]", "frame v2"]),
    "scales_wrong_groups": (dict(scales=lambda a: a["scales"][:2].contiguous()), ["`scales`", r"\[2, 128\]", r"\[4, 128\]"]),
    "zeros_wrong_shape": (dict(zeros=lambda a: a["zeros"][:, :8].contiguous()), ["`zeros`", r"\[4, 8\]", r"\[4, 16\]"]),
    "perm_wrong_len": (dict(_act=True, perm=lambda a: a["perm"][:128].contiguous()), ["`perm`", r"\[128\]", r"\[256\]"]),
    "bias_wrong_len": (dict(bias=lambda a: a["bias"][:64].contiguous()), ["`bias`", r"\[64\]", r"\[128\]"]),
    "bias_2d": (dict(bias=lambda a: a["bias"].view(1, N)), ["`bias`", r"\[1, 128\]"]),
    "out_wrong_shape": (dict(out=lambda a: torch.empty(4, N + 64).half()), ["`out`", r"\[4, 192\]", r"\[4, 128\]"]),
    "out_missing_leading_dim": (dict(out=lambda a: torch.empty(N).half()), ["`out`", r"\[128\]"]),
    # strides and alignment
    "x_k_not_unit_stride": (dict(x=lambda a: torch.randn(K, 4).half().t()), ["`x`", "unit stride along K"]),
    "x_leading_not_flat": (dict(x=lambda a: torch.randn(3, 4, 2 * K).half()[:, :, :K].transpose(0, 1)), ["`x`", "flatten"]),
    "x_row_stride_odd": (dict(x=lambda a: torch.randn(4, K + 4).half()[:, :K]), ["`x`", "row stride of 260", "multiple of 8"]),
    "x_misaligned": (dict(x=lambda a: torch.randn(4 * K + 8).half()[4:4 + 4 * K].view(4, K)), ["`x`", "16-byte aligned"]),
    "out_misaligned": (dict(out=lambda a: torch.empty(4 * N + 8).half()[4:4 + 4 * N].view(4, N)), ["`out`", "16-byte aligned"]),
    "zeros_misaligned": (dict(zeros=lambda a: torch.cat([a["zeros"].view(-1)[:1], a["zeros"].view(-1)])[1:].view_as(a["zeros"])), ["`zeros`", "16-byte aligned"]),
    "qweight_noncontig": (dict(qweight=lambda a: a["qweight"].transpose(0, 1).contiguous().transpose(0, 1)), ["`qweight`", "contiguous"]),
    "scales_noncontig": (dict(scales=lambda a: a["scales"].t().contiguous().t()), ["`scales`", "contiguous"]),
    "out_noncontig": (dict(out=lambda a: torch.empty(N, 4).half().t()), ["`out`", "contiguous"]),
    "out_aliases_x": (dict(x=lambda a: torch.randn(4, K).half(), out=None), ["`out`", "overlap", "`x`"]),
    "out_aliases_bias": (dict(out=None, bias="alias"), ["`out`", "overlap", "`bias`"]),
    # frame metadata and configuration
    "group_size_mismatch": (dict(group_size=128), ["`group_size`", "128", "frame's group size 64"]),
    "meta_version_0": (dict(frame_meta=lambda a: [a["frame_meta"][0] & ~0xFFFF] + a["frame_meta"][1:]), ["`frame_meta`", "version-0"]),
    "meta_older_version_1": (dict(frame_meta=lambda a: [(a["frame_meta"][0] & ~0xFFFF) + 1] + a["frame_meta"][1:]), ["`frame_meta`", "version-1", "rebuild the frame"]),
    "meta_garbage": (dict(frame_meta=[1, 2, 3]), ["`frame_meta`", r"\[1, 2, 3\]"]),
    "meta_unknown_flags": (dict(frame_meta=lambda a: a["frame_meta"][:4] + [8]), ["`frame_meta`", "unknown bits"]),
    "meta_other_shape": (dict(frame_meta=lambda a: mate.frame_meta(K, 2 * N, G, True, False)), ["`qweight`", r"\[16, 4, 128\]"]),
    "zeros_for_symmetric_frame": (dict(_sym=True, zeros=lambda a: torch.zeros(K // G, N // 8, dtype=torch.int32)), ["`zeros`", "symmetric"]),
    "zeros_missing": (dict(zeros=None), ["`zeros` = None", "zero points"]),
    "perm_without_act_order": (dict(perm=lambda a: torch.arange(K, dtype=torch.int32)), ["`perm`", "no act-order"]),
    "perm_missing": (dict(_act=True, perm=None), ["`perm` = None", "act order"]),
    "perm_out_of_range": (dict(_act=True, perm=lambda a: torch.full((K,), K, dtype=torch.int32)), ["`perm`", r"perm\[0\] = 256", r"\[0, K = 256\)"]),
    "num_sms_zero": (dict(num_sms=0), ["`num_sms`", "= 0", "positive"]),
    "num_sms_negative": (dict(num_sms=-3), ["`num_sms`", "-3"]),
    "workspace_float": (dict(workspace=torch.empty(4)), ["`workspace`", "float32", "uint8"]),
    "workspace_2d": (dict(workspace=torch.empty(2, 2, dtype=torch.uint8)), ["`workspace`", r"\[2, 2\]"]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_input_is_named(name):
    kw, patterns = CASES[name]
    kw = dict(kw)
    a = with_(**kw)
    if name == "out_aliases_x":
        a["out"] = torch.empty(4, K).half()[:, :N]  # placeholder, replaced below
        buf = torch.randn(4, K).half()
        a["x"] = buf
        a["out"] = buf.view(-1)[: 4 * N].view(4, N)
    if name == "out_aliases_bias":
        buf = torch.randn(4 * N).half()
        a["bias"] = buf[:N]
        a["out"] = buf.view(4, N)
    expect(a, *patterns)


@pytest.mark.parametrize(
    "args,patterns",
    [
        ((96, 128, 32, False, False), ["`K` = 96", "multiple of 64"]),
        ((128, 100, 32, False, False), ["`N` = 100", "multiple of 64"]),
        ((192, 128, 128, False, False), ["`group_size` = 128", "K = 192"]),
        ((128, 128, 16, False, False), ["`group_size` = 16", "-1 .per channel., 32, 64, 128"]),
        ((0, 128, -1, False, False), ["`K` = 0"]),
    ],
)
def test_frame_meta_refuses_outside_envelope(args, patterns):
    with pytest.raises(ValueError) as e:
        mate.frame_meta(*args)
    for p in patterns:
        assert __import__("re").search(p, str(e.value)), str(e.value)


def test_catalogue_size():
    assert len(CASES) >= 40


@pytest.mark.gpu
@pytest.mark.parametrize("arg", ["qweight", "scales", "zeros", "bias", "out"])
def test_mixed_devices_are_named(arg):
    a = base("cuda")
    a[arg] = a[arg].cpu()
    expect(a, f"`{arg}`", "cpu", "cuda:0")


@pytest.mark.gpu
def test_perm_on_other_device_is_named():
    a = base("cuda", desc_act=True)
    a["perm"] = a["perm"].cpu()
    expect(a, "`perm`", "cpu", "cuda:0")


@pytest.mark.parametrize("bad", [0, -2])
def test_forced_split_must_be_positive(bad):
    with pytest.raises(ValueError) as e:
        torch.ops.mate._force_split(bad)
    msg = str(e.value)
    assert "`split`" in msg and str(bad) in msg and "CTAs per tile" in msg and "None" in msg, msg
    torch.ops.mate._force_split(None)  # clearing is always accepted
