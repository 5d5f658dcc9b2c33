"""Tensor parallelism, simulated on one device: each rank's frame is built from its slice of the
checkpoint (mate.shard, src/frame/shard.rs), run through torch.ops.mate.w4a16_gemm, and the
ranks combined as an engine does (column-parallel: concatenate; row-parallel: sum the partials
in float64, bias once). The result is compared with the float64 reference of the WHOLE,
unsharded layer (tests/python/reference64.py, from the original checkpoint tensors), with the
suite's bounds. Every convention, act order on and off, fp16 / bf16, tp = 1, 2, 4, 8. The CUDA
variant is the same simulation (`-m gpu`)."""

import pytest
import torch

from checkpoints import (
    BOUND,
    AwqCheckpoint,
    Checkpoint,
    errors,
    marlin_from_awq,
    marlin_from_gptq,
    random_awq,
    random_compressed,
    random_gptq,
    reference,
    reference_awq,
    reference_compressed,
)

import mate
from mate import shard

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]
DTYPES = [torch.float16, torch.bfloat16]
K, N = 1024, 512  # tp = 8 keeps N / 8 = 64 and K / 8 = 128 = lcm(128, 64)
WORLDS = [1, 2, 4, 8]

# convention -> (kind, checkpoint format / symmetric, act order supported)
CONVENTIONS = {
    "gptq_v1_sym": ("gptq", "gptq", True, True),
    "gptq_v1_zp": ("gptq", "gptq", False, True),
    "gptq_v2_sym": ("gptq", "gptq_v2", True, True),
    "gptq_v2_zp": ("gptq", "gptq_v2", False, True),
    "awq": ("awq", None, False, False),
    "compressed_sym": ("compressed", None, True, True),
    "compressed_zp": ("compressed", None, False, True),
    "marlin_gptq_sym": ("marlin_gptq", "gptq_v2", True, True),
    "marlin_gptq_zp": ("marlin_gptq", "gptq_v2", False, True),
    "marlin_awq": ("marlin_awq", None, False, False),
}
CASES = [(c, a) for c, v in CONVENTIONS.items() for a in ([False, True] if v[3] else [False])]


def gen_for(device, *key):
    return torch.Generator(device).manual_seed(hash(tuple(str(k) for k in key)) % 2**31)


class Layer:
    """One whole checkpoint layer: its float64 reference and any rank's frame."""

    def __init__(self, conv, group_size, act, dtype, device, gen, k=K, n=N):
        self.kind, self.fmt, self.sym, _ = CONVENTIONS[conv]
        self.G, self.act, self.K, self.N = group_size, act, k, n
        if self.kind in ("gptq", "marlin_gptq"):
            self.ck = random_gptq(k, n, group_size, self.sym, dtype, device, desc_act=act, gen=gen,
                                  checkpoint_format=self.fmt)
        elif self.kind in ("awq", "marlin_awq"):
            self.ck = random_awq(k, n, group_size, dtype, device, gen=gen)
        else:
            self.ck = random_compressed(k, n, group_size, self.sym, dtype, device,
                                        actorder="group" if act else None, gen=gen)

    def reference(self, x, bias=None):
        if self.kind in ("gptq", "marlin_gptq"):
            return reference(self.ck, x, bias)
        if self.kind in ("awq", "marlin_awq"):
            return reference_awq(self.ck, x, bias)
        return reference_compressed(self.ck, x, bias)

    def frame(self, style, rank, world):
        ck, G = self.ck, self.G
        kw = dict(style=style, rank=rank, world=world)
        if self.kind == "gptq":
            return shard.from_gptq_tp(ck.qweight, ck.scales, ck.qzeros, ck.g_idx, group_size=G, sym=ck.sym,
                                      desc_act=ck.desc_act, checkpoint_format=ck.checkpoint_format, **kw)
        if self.kind == "awq":
            return shard.from_awq_tp(ck.qweight, ck.scales, ck.qzeros, group_size=G, **kw)
        if self.kind == "compressed":
            return shard.from_compressed_tp(ck.weight_packed, ck.weight_scale, ck.weight_zero_point, ck.weight_g_idx,
                                            weight_shape=ck.weight_shape, group_size=G, symmetric=ck.symmetric,
                                            actorder=ck.actorder, **kw)
        # vLLM's Marlin path repacks each rank's slice (sorting a row-parallel rank's own g_idx).
        if self.kind == "marlin_gptq":
            t = shard.slice_gptq(ck.qweight, ck.scales, ck.qzeros, ck.g_idx, group_size=G, desc_act=ck.desc_act, **kw)
            m = marlin_from_gptq(Checkpoint(t["qweight"], t["scales"], t["qzeros"], t["g_idx"], G, ck.sym,
                                            ck.desc_act, "gptq_v2"))
        else:
            t = shard.slice_awq(ck.qweight, ck.scales, ck.qzeros, group_size=G, **kw)
            q, z = ck.q, ck.z
            if style == "column":
                n = slice(rank * self.N // world, (rank + 1) * self.N // world)
                q, z = q[:, n], z[:, n]
            else:
                k = slice(rank * self.K // world, (rank + 1) * self.K // world)
                q = q[k]
                if G != -1:
                    z = z[k.start // G:k.stop // G]
            m = marlin_from_awq(AwqCheckpoint(t["qweight"], t["scales"], t["qzeros"], G, q, z))
        return mate.from_marlin(m.qweight, m.scales, m.zeros, m.g_idx, m.perm, group_size=G, sym=m.sym,
                                desc_act=m.desc_act, zero_layout="marlin", shard=style, rank=rank, world=world)


def simulate(layer, style, world, x, bias=None, frames=None):
    """The engine's combination of the ranks' outputs (float64 for the row-parallel sum)."""
    parts = []
    for r in range(world):
        fr = frames[r] if frames is not None else layer.frame(style, r, world)
        if style == "column":
            n = slice(r * layer.N // world, (r + 1) * layer.N // world)
            assert fr.in_features == layer.K and fr.out_features == n.stop - n.start
            parts.append(fr.gemm(x, None if bias is None else bias[n].contiguous()).double())
        else:
            k = slice(r * layer.K // world, (r + 1) * layer.K // world)
            assert fr.in_features == k.stop - k.start and fr.out_features == layer.N
            parts.append(fr.gemm(x[..., k].contiguous(), bias if r == 0 else None).double())
    return torch.cat(parts, -1) if style == "column" else sum(parts)


def check(out, ref, dtype):
    total, col = errors(out, ref)
    assert total <= BOUND[dtype] and col <= 5 * BOUND[dtype], (total, col)


@pytest.mark.parametrize("style", ["column", "row"])
@pytest.mark.parametrize("conv,act", CASES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("device", DEVICES)
def test_simulated_ranks_match_the_unsharded_reference(device, dtype, conv, act, style):
    gen = gen_for(device, dtype, conv, act, style)
    layer = Layer(conv, 128, act, dtype, device, gen)
    x = torch.randn(5, K, generator=gen, device=device).to(dtype)
    bias = torch.randn(N, generator=gen, device=device).to(dtype)
    ref = layer.reference(x, bias)
    for world in WORLDS:
        check(simulate(layer, style, world, x, bias), ref, dtype)


@pytest.mark.parametrize("group_size", [32, 64, -1])
@pytest.mark.parametrize("act", [False, True])
@pytest.mark.parametrize("style", ["column", "row"])
@pytest.mark.parametrize("conv", ["gptq_v2_zp", "compressed_sym", "marlin_gptq_zp"])
@pytest.mark.parametrize("device", DEVICES)
def test_other_group_sizes(device, conv, style, act, group_size):
    if conv.startswith("compressed") and act and group_size == -1:
        pytest.skip("compressed-tensors has no per-channel group act order")
    gen = gen_for(device, conv, style, act, group_size)
    layer = Layer(conv, group_size, act, torch.float16, device, gen)
    x = torch.randn(3, 2, K, generator=gen, device=device).half()  # leading dims too
    ref = layer.reference(x)
    for world in [2, 4]:
        check(simulate(layer, style, world, x), ref, torch.float16)


@pytest.mark.parametrize("device", DEVICES)
def test_k_not_full_frames_are_padded_shard_frames(device):
    """Row-parallel act order at tp = 8 (about 16 rows of each group per rank): the frames carry
    padded rows (x_cols < K in their metadata), group 32, and still match the reference; a
    whole-layer act-order frame (tp = 1) is not a shard frame."""
    gen = gen_for(device, "pad")
    layer = Layer("gptq_v2_zp", 128, True, torch.float16, device, gen)
    frames = [layer.frame("row", r, 8) for r in range(8)]
    for fr in frames:
        assert fr.meta[4] & 4 and len(fr.meta) == 6 and fr.meta[5] == K // 8 < fr.meta[1]
        assert fr.group_size == 32 and fr.perm.shape == (fr.meta[1],)
        assert int(fr.perm.max()) < K // 8 and fr.meta[1] % 64 == 0
    whole = layer.frame("row", 0, 1)
    assert len(whole.meta) == 5 and whole.in_features == K
    x = torch.randn(4, K, generator=gen, device=device).half()
    check(simulate(layer, "row", 8, x, frames=frames), layer.reference(x), torch.float16)


@pytest.mark.parametrize("device", DEVICES)
def test_the_simulation_can_fail(device):
    """The comparison has teeth: a rank fed another rank's x slice, a missing partial, or the
    column blocks in the wrong order all give large errors."""
    gen = gen_for(device, "teeth")
    layer = Layer("gptq_v2_zp", 128, True, torch.float16, device, gen)
    x = torch.randn(5, K, generator=gen, device=device).half()
    ref = layer.reference(x)
    rows = [layer.frame("row", r, 4) for r in range(4)]
    ks = K // 4
    good = sum(f.gemm(x[:, r * ks:(r + 1) * ks].contiguous()).double() for r, f in enumerate(rows))
    check(good, ref, torch.float16)
    swapped = sum(f.gemm(x[:, ((r + 1) % 4) * ks:((r + 1) % 4 + 1) * ks].contiguous()).double()
                  for r, f in enumerate(rows))
    assert errors(swapped, ref)[0] > 0.3
    missing = sum(f.gemm(x[:, r * ks:(r + 1) * ks].contiguous()).double() for r, f in enumerate(rows[:3]))
    assert errors(missing, ref)[0] > 0.3
    cols = [layer.frame("column", r, 4) for r in range(4)]
    wrong = torch.cat([f.gemm(x) for f in reversed(cols)], -1)
    assert errors(wrong, ref)[0] > 0.3


@pytest.mark.parametrize("device", DEVICES)
def test_shard_frame_validates_x_against_x_cols(device):
    gen = gen_for(device, "xcols")
    layer = Layer("compressed_zp", 64, True, torch.float16, device, gen)
    fr = layer.frame("row", 1, 4)
    assert fr.in_features == K // 4 < fr.meta[1]
    with pytest.raises(ValueError, match=r"x_cols = 256 \(the frame has \d+ rows\)"):
        fr.gemm(torch.randn(2, fr.meta[1], device=device).half())
    assert fr.gemm(torch.randn(2, K // 4, device=device).half()).shape == (2, N)
    # The W4A16Linear module reports the shard's input features.
    lin = mate.W4A16Linear(fr)
    assert (lin.in_features, lin.out_features) == (K // 4, N)


def test_frame_meta_op_describes_shard_frames():
    m = mate.frame_meta(320, 128, 32, True, True, x_cols=256)
    assert m[1:5] == [320, 128, 32, 7] and m[5] == 256
    assert mate.frame_meta(256, 128, 32, True, True, x_cols=256) == mate.frame_meta(256, 128, 32, True, True)
    with pytest.raises(ValueError, match="must have one"):
        mate.frame_meta(320, 128, 32, True, False, x_cols=256)


# --- refused splits: rank, split size and rule named ------------------------------------------


def test_bad_splits_name_rank_split_and_rule_in_the_slicer():
    gen = gen_for("cpu", "bad")
    ck = random_gptq(1024, 384, 128, False, torch.float16, "cpu", gen=gen)
    kw = dict(group_size=128, sym=False, desc_act=False, checkpoint_format="gptq_v2")
    with pytest.raises(ValueError, match=r"rank 1 of 4: a column-parallel \(N\) split of 96: .*multiple of 64"):
        shard.from_gptq_tp(ck.qweight, ck.scales, ck.qzeros, None, style="column", rank=1, world=4, **kw)
    with pytest.raises(ValueError, match=r"rank 2 of 16: a row-parallel \(K\) split of 64: .*lcm\(group_size 128, 64\) = 128"):
        shard.from_gptq_tp(ck.qweight, ck.scales, ck.qzeros, None, style="row", rank=2, world=16, **kw)
    with pytest.raises(ValueError, match=r"rank 0 of 3: a row-parallel split of K = 1024: must divide into world = 3"):
        shard.from_gptq_tp(ck.qweight, ck.scales, ck.qzeros, None, style="row", rank=0, world=3, **kw)


def test_bad_splits_name_rank_split_and_rule_in_the_builder():
    """The ops check the slice they are handed (an engine's own slicing) with the same rules."""
    gen = gen_for("cpu", "bad2")
    ck = random_gptq(1024, 384, 32, False, torch.float16, "cpu", gen=gen)
    with pytest.raises(ValueError, match=r"rank 3 of 8: a row-parallel \(K\) split of 96: .*lcm\(group_size 32, 64\) = 64"):
        mate.from_gptq(ck.qweight[:12], ck.scales[:3], ck.qzeros[:3], None, group_size=32, sym=False, desc_act=False,
                       checkpoint_format="gptq_v2", shard="row", rank=3, world=8)
    with pytest.raises(ValueError, match=r"rank 1 of 4: a column-parallel \(N\) split of 96: .*multiple of 64"):
        mate.from_gptq(ck.qweight[:, 96:192], ck.scales[:, 96:192], ck.qzeros[:, 12:24], None, group_size=32, sym=False,
                       desc_act=False, checkpoint_format="gptq_v2", shard="column", rank=1, world=4)
    ct = random_compressed(1024, 128, 128, True, torch.float16, "cpu", actorder="group", gen=gen)
    with pytest.raises(ValueError, match=r"rank 0 of 2: a row-parallel \(K\) act-order split of 100: .*multiple of 8"):
        mate.from_compressed(ct.weight_packed[:, :13], ct.weight_scale, None, ct.weight_g_idx[:100],
                             weight_shape=[128, 100], group_size=128, symmetric=True, actorder="group", shard="row",
                             rank=0, world=2)
    act = random_gptq(1024, 128, 128, False, torch.float16, "cpu", desc_act=True, gen=gen)
    with pytest.raises(ValueError, match=r"rank 1 of 2: 4 group rows: row-parallel act order keeps every group's"):
        mate.from_gptq(act.qweight[64:], act.scales[4:], act.qzeros[4:], act.g_idx[512:] % 4, group_size=128,
                       sym=False, desc_act=True, checkpoint_format="gptq_v2", shard="row", rank=1, world=2)
    with pytest.raises(ValueError, match=r"`shard` = \"diagonal\""):
        mate.from_gptq(act.qweight, act.scales, act.qzeros, act.g_idx, group_size=128, sym=False, desc_act=True,
                       checkpoint_format="gptq_v2", shard="diagonal", rank=0, world=2)
    aw = random_awq(256, 128, 64, torch.float16, "cpu", gen=gen)
    with pytest.raises(ValueError, match=r"0 <= rank < world"):
        mate.from_awq(aw.qweight, aw.scales, aw.qzeros, group_size=64, shard="row", rank=2, world=2)
