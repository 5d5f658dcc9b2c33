"""The frame builder, per convention: frames built by Rust (mate.from_*) from checkpoint tensors,
run through the full GEMM op into a NaN-poisoned output, against the float64 reference computed
from the ORIGINAL checkpoint tensors (tests/python/reference64.py). Plus the tests with teeth:
zero-point layouts pinned both ways, the wrong convention giving a large error, act-order and
plain frames of the same weights agreeing, a skipped gather detected, config flags deciding what
is read."""

import dataclasses
import itertools

import pytest
import torch

from checkpoints import (
    BOUND,
    errors,
    frame_from_awq,
    frame_from_compressed,
    frame_from_gptq,
    frame_from_gptq_python,
    frame_from_marlin,
    marlin_from_awq,
    marlin_from_gptq,
    pack_rows,
    random_awq,
    random_compressed,
    random_gptq,
    reference,
    reference_awq,
    reference_compressed,
    run_out,
)
from reference64 import unpack_rows

import mate

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]
GROUPS = [-1, 32, 64, 128]
DTYPES = [torch.float16, torch.bfloat16]
K, N = 256, 192


def check(out, ref, dtype):
    total, col = errors(out, ref)
    assert total <= BOUND[dtype] and col <= 5 * BOUND[dtype], (total, col)


def gen_for(device, *key):
    return torch.Generator(device).manual_seed(hash(tuple(str(k) for k in key)) % 2**31)


def xs(device, dtype, gen, m=5, k=K):
    return torch.randn(m, k, generator=gen, device=device).to(dtype)


# --- GPTQ -----------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["gptq", "gptq_v2"])
@pytest.mark.parametrize("group_size,sym,desc_act", [c for c in itertools.product(GROUPS, [True, False], [False, True])])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("device", DEVICES)
def test_gptq(device, dtype, group_size, sym, desc_act, fmt):
    gen = gen_for(device, dtype, group_size, sym, desc_act, fmt)
    ck = random_gptq(K, N, group_size, sym, dtype, device, desc_act=desc_act, gen=gen, checkpoint_format=fmt)
    fr = frame_from_gptq(ck)
    assert fr.qweight.device.type == device and fr.scales.dtype == dtype
    assert (fr.zeros is None) == sym and (fr.perm is None) == (not desc_act)
    x = xs(device, dtype, gen)
    bias = torch.randn(N, generator=gen, device=device).to(dtype)
    check(run_out(x, fr, bias), reference(ck, x, bias), dtype)


@pytest.mark.parametrize("group_size,sym,desc_act", [(128, False, True), (64, True, False), (-1, False, False), (32, True, True)])
@pytest.mark.parametrize("device", DEVICES)
def test_gptq_v2_builder_equals_the_pre_builder_frame(device, group_size, sym, desc_act):
    """The builder's tensors are bit-identical to the test-side construction the suite used
    before it existed (checkpoints.pack_frame_v2, written from the layout in src/frame/mod.rs)."""
    ck = random_gptq(K, N, group_size, sym, torch.float16, device, desc_act=desc_act, gen=gen_for(device, 1))
    a, b = frame_from_gptq(ck), frame_from_gptq_python(ck)
    assert a.meta == b.meta
    for t, u in [(a.qweight, b.qweight), (a.scales, b.scales), (a.zeros, b.zeros), (a.perm, b.perm)]:
        assert (t is None) == (u is None) and (t is None or torch.equal(t, u))


@pytest.mark.parametrize("device", DEVICES)
def test_gptq_v1_and_v2_are_not_interchangeable(device):
    """The same tensors read with the other checkpoint_format are off by one zero step: the
    wrong read computes exactly the other convention's math (float64 reference of the same
    tensors taken as gptq_v2), and that math is far from the right one on this data (a float64
    fact, checked first: a one-step shift of every zero point moves the output by ~5-15 % on
    random data, whose draw changes per process; session 17 saw 4.9 % against an old 5 % bar)."""
    gen = gen_for(device, "v1v2")
    ck = random_gptq(K, N, 128, False, torch.float16, device, gen=gen, checkpoint_format="gptq")
    x = xs(device, torch.float16, gen)
    ref = reference(ck, x, None)
    check(run_out(x, frame_from_gptq(ck)), ref, torch.float16)
    ref_as_v2 = reference(dataclasses.replace(ck, checkpoint_format="gptq_v2"), x, None)
    assert errors(ref_as_v2, ref)[0] > 10 * BOUND[torch.float16]
    wrong = mate.from_gptq(ck.qweight, ck.scales, ck.qzeros, None, group_size=128, sym=False, desc_act=False,
                           checkpoint_format="gptq_v2")
    check(run_out(x, wrong), ref_as_v2, torch.float16)


@pytest.mark.parametrize("device", DEVICES)
def test_symmetric_never_reads_qzeros_and_plain_never_reads_g_idx(device):
    """Config flags decide: a symmetric, non-act-order config builds the same frame whatever sits
    in qzeros / g_idx (wrong dtype, wrong shape, garbage), or when they are None."""
    ck = random_gptq(K, N, 64, True, torch.float16, device, gen=gen_for(device, "sym"))
    base = mate.from_gptq(ck.qweight, ck.scales, None, None, group_size=64, sym=True, desc_act=False,
                          checkpoint_format="gptq")
    junk_z = torch.full((3,), float("nan"), device=device)
    junk_g = torch.tensor([1.5], device=device)
    other = mate.from_gptq(ck.qweight, ck.scales, junk_z, junk_g, group_size=64, sym=True, desc_act=False,
                           checkpoint_format="gptq")
    assert other.zeros is None and other.perm is None
    assert torch.equal(base.qweight, other.qweight) and torch.equal(base.scales, other.scales)
    assert base.meta == other.meta
    # ...and with the checkpoint's (non-zero-8) qzeros read as if asymmetric, the answer changes.
    x = xs(device, torch.float16, gen_for(device, "symx"))
    ref = reference(ck, x, None)
    asym = mate.from_gptq(ck.qweight, ck.scales, ck.qzeros, None, group_size=64, sym=False, desc_act=False,
                          checkpoint_format="gptq_v2")
    check(run_out(x, base), ref, torch.float16)
    assert errors(run_out(x, asym), ref)[0] > 0.05


# --- act order ------------------------------------------------------------------------------


@pytest.mark.parametrize("group_size", [32, 128])
@pytest.mark.parametrize("device", DEVICES)
def test_act_order_and_plain_frames_of_the_same_weights_agree(device, group_size):
    """An act-order checkpoint, and the plain checkpoint of the same weights with its rows (and
    the activation's columns) in sorted order, give the same output; skipping the gather does not."""
    gen = gen_for(device, "agree", group_size)
    ck = random_gptq(512, 128, group_size, False, torch.float16, device, desc_act=True, gen=gen)
    fr = frame_from_gptq(ck)
    order = torch.argsort(ck.g_idx.long(), stable=True)
    plain = random_gptq(512, 128, group_size, False, torch.float16, device, desc_act=False, gen=gen)
    plain.qweight = pack_rows(unpack_rows(ck.qweight)[order])
    plain.scales, plain.qzeros = ck.scales, ck.qzeros
    pf = frame_from_gptq(plain)
    assert pf.perm is None
    x = xs(device, torch.float16, gen, k=512)
    a = run_out(x, fr)
    b = run_out(x[:, order].contiguous(), pf)
    assert errors(a, b.double())[0] <= 1e-3
    ref = reference(ck, x, None)
    check(a, ref, torch.float16)
    # Skipped gather: the act-order frame's tensors with the identity permutation.
    skipped = torch.ops.mate.w4a16_gemm(x, fr.qweight, fr.meta, fr.scales, fr.zeros,
                                        torch.arange(512, device=device, dtype=torch.int32), None, group_size)
    assert errors(skipped, ref)[0] > 0.1


@pytest.mark.parametrize("device", DEVICES)
def test_act_order_reference_uses_g_idx_scales(device):
    """The reference dequantizes row k with scales[g_idx[k]]: a reference using k // group
    instead disagrees with the (correct) frame, so this suite cannot pass with that mistake."""
    from reference64 import dequantize_gptq, gemm64

    gen = gen_for(device, "gidx")
    ck = random_gptq(K, N, 32, True, torch.float16, device, desc_act=True, gen=gen)
    x = xs(device, torch.float16, gen)
    out = run_out(x, frame_from_gptq(ck))
    wrong = gemm64(x, dequantize_gptq(ck.qweight, ck.scales, None, None, group_size=32, sym=True, desc_act=False), None)
    assert errors(out, wrong)[0] > 0.05


# --- AWQ ------------------------------------------------------------------------------------


@pytest.mark.parametrize("group_size", GROUPS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("device", DEVICES)
def test_awq(device, dtype, group_size):
    gen = gen_for(device, "awq", dtype, group_size)
    ck = random_awq(K, N, group_size, dtype, device, gen=gen)
    fr = frame_from_awq(ck)
    assert fr.zeros is not None and fr.perm is None
    x = xs(device, dtype, gen)
    check(run_out(x, fr), reference_awq(ck, x), dtype)


@pytest.mark.parametrize("device", DEVICES)
def test_awq_interleave_matters(device):
    """AWQ's qzeros have the frame's zero-point shape and values; taken as they are (ignoring the
    interleave) they give a large error."""
    gen = gen_for(device, "awqz")
    ck = random_awq(K, N, 64, torch.float16, device, gen=gen)
    x = xs(device, torch.float16, gen)
    ref = reference_awq(ck, x)
    fr = frame_from_awq(ck)
    check(run_out(x, fr), ref, torch.float16)
    bad = mate.Frame(fr.qweight, fr.meta, fr.scales, ck.qzeros, None, 64)
    assert errors(run_out(x, bad), ref)[0] > 0.05


# --- compressed-tensors ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "group_size,symmetric,actorder",
    [(g, s, a) for g, s, a in itertools.product(GROUPS, [True, False], [None, "weight", "group"]) if not (g == -1 and a == "group")],
)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("device", DEVICES)
def test_compressed(device, dtype, group_size, symmetric, actorder):
    gen = gen_for(device, "ct", dtype, group_size, symmetric, actorder)
    ck = random_compressed(K, N, group_size, symmetric, dtype, device, actorder=actorder, gen=gen)
    fr = frame_from_compressed(ck)
    assert (fr.zeros is None) == symmetric and (fr.perm is None) == (actorder != "group")
    x = xs(device, dtype, gen)
    bias = torch.randn(N, generator=gen, device=device).to(dtype)
    check(run_out(x, fr, bias), reference_compressed(ck, x, bias), dtype)


@pytest.mark.parametrize("device", DEVICES)
def test_compressed_skipped_gather_is_detected(device):
    gen = gen_for(device, "ctgather")
    ck = random_compressed(K, N, 32, False, torch.float16, device, actorder="group", gen=gen)
    fr = frame_from_compressed(ck)
    x = xs(device, torch.float16, gen)
    ref = reference_compressed(ck, x)
    check(run_out(x, fr), ref, torch.float16)
    ident = mate.Frame(fr.qweight, fr.meta, fr.scales, fr.zeros, torch.arange(K, device=device, dtype=torch.int32), 32)
    assert errors(run_out(x, ident), ref)[0] > 0.1


def test_compressed_tensors_library_packing():
    """Tensors packed by compressed-tensors' own pack_to_int32 (weights along K, zero points
    along N), when the library is installed."""
    helpers = pytest.importorskip(
        "compressed_tensors.compressors.pack_quantized.helpers",
        reason="compressed-tensors is not installed (requirements.txt pins it; pip install -r requirements.txt)",
    )
    gen = torch.Generator().manual_seed(11)
    G = 64
    v = torch.randint(-8, 8, (N, K), generator=gen, dtype=torch.int8)
    z = torch.randint(-8, 8, (N, K // G), generator=gen, dtype=torch.int8)
    s = (torch.rand(N, K // G, generator=gen) * 0.02 + 0.002).half()
    packed = helpers.pack_to_int32(v, 4)
    zp = helpers.pack_to_int32(z, 4, packed_dim=0)
    assert packed.shape == (N, K // 8) and zp.shape == (N // 8, K // G)
    fr = mate.from_compressed(packed, s, zp, None, weight_shape=[N, K], group_size=G, symmetric=False)
    x = xs("cpu", torch.float16, gen)
    w = ((v.double() - z.double().repeat_interleave(G, dim=1)) * s.double().repeat_interleave(G, dim=1)).t()
    check(run_out(x, fr), x.double() @ w, torch.float16)
    # The library's own unpacking agrees with the frame's q.
    assert torch.equal(helpers.unpack_from_int32(packed, 4, torch.Size([N, K])), v)


# --- vLLM Marlin ----------------------------------------------------------------------------


@pytest.mark.parametrize("group_size,sym,desc_act", [c for c in itertools.product(GROUPS, [True, False], [False, True])])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("device", DEVICES)
def test_marlin_from_gptq(device, dtype, group_size, sym, desc_act):
    gen = gen_for(device, "mg", dtype, group_size, sym, desc_act)
    ck = random_gptq(K, N, group_size, sym, dtype, device, desc_act=desc_act, gen=gen)
    fr = frame_from_marlin(marlin_from_gptq(ck))
    assert (fr.zeros is None) == sym and (fr.perm is None) == (not desc_act)
    x = xs(device, dtype, gen)
    check(run_out(x, fr), reference(ck, x, None), dtype)


@pytest.mark.parametrize("group_size", GROUPS)
@pytest.mark.parametrize("device", DEVICES)
def test_marlin_from_awq(device, group_size):
    gen = gen_for(device, "ma", group_size)
    ck = random_awq(K, N, group_size, torch.float16, device, gen=gen)
    x = xs(device, torch.float16, gen)
    check(run_out(x, frame_from_marlin(marlin_from_awq(ck))), reference_awq(ck, x), torch.float16)


@pytest.mark.parametrize("device", DEVICES)
def test_marlin_equals_the_direct_frame(device):
    """The Marlin repack of a checkpoint and the checkpoint itself build bit-identical frames."""
    gen = gen_for(device, "meq")
    ck = random_gptq(K, N, 64, False, torch.bfloat16, device, gen=gen)
    a, b = frame_from_gptq(ck), frame_from_marlin(marlin_from_gptq(ck))
    assert a.meta == b.meta
    assert torch.equal(a.qweight, b.qweight) and torch.equal(a.scales, b.scales) and torch.equal(a.zeros, b.zeros)


@pytest.mark.parametrize("device", DEVICES)
def test_marlin_scale_permutation_follows_group_vs_k(device):
    """vLLM permutes scales with the per-channel ("single") permutation when group_size == K:
    K = 128 with group 128 must be read that way (and reading it the grouped way is wrong)."""
    gen = gen_for(device, "gk")
    ck = random_gptq(128, N, 128, True, torch.float16, device, gen=gen)
    m = marlin_from_gptq(ck)
    x = xs(device, torch.float16, gen, k=128)
    ref = reference(ck, x, None)
    check(run_out(x, frame_from_marlin(m)), ref, torch.float16)
    from checkpoints import get_scale_perms

    grouped, _ = get_scale_perms()
    m.scales = ck.scales.reshape(-1, 64)[:, grouped].reshape(1, N).contiguous()
    assert errors(run_out(x, frame_from_marlin(m)), ref)[0] > 0.05


@pytest.mark.parametrize("device", DEVICES)
def test_marlin_zero_layout_pinned_both_directions(device):
    """The seed's bug: two zero-point layouts, same shape, same values, different order. The
    caller names the layout; each layout is right only under its own name."""
    gen = gen_for(device, "zl")
    ck = random_awq(K, N, 64, torch.float16, device, gen=gen)
    x = xs(device, torch.float16, gen)
    ref = reference_awq(ck, x)
    m = marlin_from_awq(ck)  # zeros: awq_to_marlin_zero_points output
    from reference64 import unpack_cols

    # Same shape, same multiset of zero points, different order: no shape or range guard can tell.
    assert m.zeros.shape == ck.qzeros.shape and not torch.equal(m.zeros, ck.qzeros)
    assert torch.equal(unpack_cols(m.zeros).flatten().sort().values, unpack_cols(ck.qzeros).flatten().sort().values)
    # marlin-layout zeros, named "marlin": right; named "awq": wrong.
    check(run_out(x, frame_from_marlin(m, "marlin")), ref, torch.float16)
    assert errors(run_out(x, frame_from_marlin(m, "awq")), ref)[0] > 0.05
    # the checkpoint's AWQ qzeros next to the repacked weights, named "awq": right; "marlin": wrong.
    m.zeros = ck.qzeros
    check(run_out(x, frame_from_marlin(m, "awq")), ref, torch.float16)
    assert errors(run_out(x, frame_from_marlin(m, "marlin")), ref)[0] > 0.05
    # GPTQ-v2 sequential zeros, named "gptq_v2": right; "awq": wrong.
    from checkpoints import pack_cols

    m.zeros = pack_cols(ck.z)
    check(run_out(x, frame_from_marlin(m, "gptq_v2")), ref, torch.float16)
    assert errors(run_out(x, frame_from_marlin(m, "awq")), ref)[0] > 0.05


@pytest.mark.gpu
def test_marlin_repack_matches_vllm_when_installed():
    """Where vLLM's compiled ops exist (GPU machine), its gptq_marlin_repack, awq_marlin_repack,
    marlin_permute_scales and marlin_zero_points agree with the transcription the tests use."""
    ops = pytest.importorskip("vllm._custom_ops", reason="vLLM is not installed here")
    mu = pytest.importorskip("vllm.model_executor.layers.quantization.utils.marlin_utils")
    from checkpoints import marlin_permute_scales, marlin_repack, marlin_zero_points

    gen = torch.Generator("cuda").manual_seed(5)
    ck = random_gptq(K, N, 64, False, torch.float16, "cuda", desc_act=True, gen=gen)
    q = unpack_rows(ck.qweight)
    perm = torch.argsort(ck.g_idx.long()).to(torch.int32)
    assert torch.equal(ops.gptq_marlin_repack(ck.qweight, perm, K, N, 4), marlin_repack(q, perm))
    assert torch.equal(mu.marlin_permute_scales(ck.scales, K, N, 64), marlin_permute_scales(ck.scales, K, N, 64))
    z = torch.randint(0, 16, (K // 64, N), generator=gen, device="cuda", dtype=torch.int32)
    assert torch.equal(mu.marlin_zero_points(z, K // 64, N, 4).cuda(), marlin_zero_points(z, K // 64, N))
    awq = random_awq(K, N, 64, torch.float16, "cuda", gen=gen)
    assert torch.equal(ops.awq_marlin_repack(awq.qweight, K, N, 4), marlin_repack(awq.q))


# --- layers built in several column blocks ----------------------------------------------------

BIG_K, BIG_N = 4096, 2112  # blocks of 1024, 1024 and 64 columns (src/frame/builder.rs BLOCK_ELEMS)


@pytest.mark.parametrize("convention", ["gptq", "awq", "compressed", "marlin_gptq", "marlin_awq"])
@pytest.mark.parametrize("device", DEVICES)
def test_multi_block_layers(device, convention):
    gen = gen_for(device, "big", convention)
    dtype = torch.bfloat16
    x = xs(device, dtype, gen, m=3, k=BIG_K)
    if convention in ("gptq", "marlin_gptq"):
        ck = random_gptq(BIG_K, BIG_N, 128, False, dtype, device, desc_act=True, gen=gen)
        fr = frame_from_gptq(ck) if convention == "gptq" else frame_from_marlin(marlin_from_gptq(ck))
        ref = reference(ck, x, None)
    elif convention in ("awq", "marlin_awq"):
        ck = random_awq(BIG_K, BIG_N, 64, dtype, device, gen=gen)
        fr = frame_from_awq(ck) if convention == "awq" else frame_from_marlin(marlin_from_awq(ck))
        ref = reference_awq(ck, x)
    else:
        ck = random_compressed(BIG_K, BIG_N, 32, False, dtype, device, actorder="group", gen=gen)
        fr = frame_from_compressed(ck)
        ref = reference_compressed(ck, x)
    check(run_out(x, fr), ref, dtype)


@pytest.mark.parametrize("device", DEVICES)
def test_strided_checkpoint_tensors(device):
    """Checkpoint tensors need not be contiguous (views of a larger load buffer): same frame."""
    gen = gen_for(device, "strided")
    ck = random_gptq(K, N, 64, False, torch.float16, device, gen=gen)
    wide = torch.zeros(K // 8, 2 * N, dtype=torch.int32, device=device)
    wide[:, ::2] = ck.qweight
    sc = ck.scales.t().contiguous().t()
    a = frame_from_gptq(ck)
    b = mate.from_gptq(wide[:, ::2], sc, ck.qzeros, None, group_size=64, sym=False, desc_act=False,
                       checkpoint_format="gptq_v2")
    assert torch.equal(a.qweight, b.qweight) and torch.equal(a.scales, b.scales) and torch.equal(a.zeros, b.zeros)
    assert b.qweight.is_contiguous() and b.scales.is_contiguous()


def test_parameters_with_grad_build_a_frame_without_history():
    """Loader tensors are often nn.Parameters; the frame carries no autograd history."""
    ck = random_gptq(K, N, 64, False, torch.float16, "cpu", gen=torch.Generator().manual_seed(9))
    scales = torch.nn.Parameter(ck.scales.clone(), requires_grad=True)
    fr = mate.from_gptq(torch.nn.Parameter(ck.qweight, requires_grad=False), scales, ck.qzeros, None, group_size=64,
                        sym=False, desc_act=False, checkpoint_format="gptq_v2")
    assert not fr.scales.requires_grad and fr.scales.grad_fn is None
    assert torch.equal(fr.scales, ck.scales)


@pytest.mark.gpu
@pytest.mark.parametrize("convention", ["gptq_act", "awq", "compressed_act", "marlin_gptq_act"])
def test_cuda_and_cpu_builds_are_bit_identical(convention):
    """The builder runs on the tensors' device; both devices produce the same frame."""
    gen = torch.Generator().manual_seed(21)
    if convention == "gptq_act":
        ck = random_gptq(1024, 640, 128, False, torch.bfloat16, "cpu", desc_act=True, gen=gen)
        build = lambda c: frame_from_gptq(c)  # noqa: E731
    elif convention == "awq":
        ck = random_awq(1024, 640, 64, torch.float16, "cpu", gen=gen)
        build = lambda c: frame_from_awq(c)  # noqa: E731
    elif convention == "compressed_act":
        ck = random_compressed(1024, 640, 32, False, torch.float16, "cpu", actorder="group", gen=gen)
        build = lambda c: frame_from_compressed(c)  # noqa: E731
    else:
        ck = marlin_from_gptq(random_gptq(1024, 640, 64, False, torch.float16, "cpu", desc_act=True, gen=gen))
        build = lambda c: frame_from_marlin(c)  # noqa: E731
    import copy
    import dataclasses

    on_gpu = copy.copy(ck)
    for f in dataclasses.fields(ck):
        v = getattr(ck, f.name)
        if isinstance(v, torch.Tensor) and f.name != "weight_shape":
            setattr(on_gpu, f.name, v.cuda())
    a, b = build(ck), build(on_gpu)
    assert b.qweight.is_cuda and a.meta == b.meta
    for t, u in [(a.qweight, b.qweight), (a.scales, b.scales), (a.zeros, b.zeros), (a.perm, b.perm)]:
        assert (t is None) == (u is None) and (t is None or torch.equal(t, u.cpu()))
