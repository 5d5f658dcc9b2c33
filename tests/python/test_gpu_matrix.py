"""The GPU kernel over the foundation matrix: every M of the issue, the Qwen2-1.5B and Llama-3-8B
projection shapes and small/odd ones, group sizes -1/32/64/128, symmetric and zero-point, fp16
and bf16, with and without bias, act order. Each case: NaN-poisoned output, float64 reference,
total and per-column error bounds, bit-identical rerun. Graph replay equals eager bit for bit in
the same launch context (README: behind mate's own kernel, as every eager call plans)."""

import itertools

import pytest
import torch

from checkpoints import BOUND, errors, frame_from_gptq_v2, random_gptq, reference, run_out

pytestmark = pytest.mark.gpu

M_LIST = [1, 2, 3, 7, 8, 15, 16, 17, 31, 33, 64, 100, 128, 255, 256, 1000, 1024, 4096]
SHAPES = {  # K x N
    "qwen_qkv": (1536, 2048),
    "qwen_o": (1536, 1536),
    "qwen_gate_up": (1536, 17920),
    "qwen_down": (8960, 1536),
    "llama_qkv": (4096, 6144),
    "llama_o": (4096, 4096),
    "llama_gate_up": (4096, 28672),
    "llama_down": (14336, 4096),
    "tiny": (64, 64),
    "odd": (384, 320),
}
CONFIGS = list(itertools.product([-1, 32, 64, 128], [True, False], [torch.float16, torch.bfloat16], [False, True]))


def config_for(i, K):
    """Cycles through all 32 configurations, skipping groups that do not divide K."""
    while True:
        g, sym, dtype, bias = CONFIGS[i % len(CONFIGS)]
        if g == -1 or K % g == 0:
            return g, sym, dtype, bias
        i += 1


CASES = []
for si, (name, (K, N)) in enumerate(SHAPES.items()):
    for mi, M in enumerate(M_LIST):
        CASES.append((name, M, *config_for(7 * si + 3 * mi, K), False))
for i, (g, sym, dtype, bias) in enumerate(CONFIGS):  # every configuration on the odd shape
    for M in (1, 16, 33, 256):
        CASES.append(("odd", M, g, sym, dtype, bias, False))
for i, (name, M) in enumerate(itertools.product(["qwen_down", "llama_qkv", "odd"], [1, 8, 100, 1024])):
    CASES.append((name, M, *config_for(5 * i + 1, SHAPES[name][0]), True))  # act order


def case_id(c):
    name, M, g, sym, dtype, bias, act = c
    return f"{name}-M{M}-g{g}-{'sym' if sym else 'zp'}-{str(dtype)[6:]}{'-bias' if bias else ''}{'-act' if act else ''}"


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_matrix(case):
    name, M, g, sym, dtype, with_bias, act = case
    K, N = SHAPES[name]
    gen = torch.Generator("cuda").manual_seed(hash(case_id(case)) % 2**31)
    ck = random_gptq(K, N, g, sym, dtype, "cuda", desc_act=act, gen=gen)
    fr = frame_from_gptq_v2(ck)
    x = torch.randn(M, K, generator=gen, device="cuda").to(dtype)
    bias = torch.randn(N, generator=gen, device="cuda").to(dtype) if with_bias else None
    out = run_out(x, fr, bias)
    ref = reference(ck, x, bias)
    total, col = errors(out, ref)
    bound = BOUND[dtype]
    assert not out.isnan().any(), "unwritten (NaN-poisoned) outputs remain"
    assert total <= bound, f"relative error {total:.3e} > {bound}"
    assert col <= 5 * bound, f"worst column error {col:.3e} > {5 * bound}"
    again = run_out(x, fr, bias)
    assert torch.equal(out, again), "rerun is not bit-identical"


@pytest.mark.parametrize("M,name,g,sym,dtype,act", [
    (1, "llama_o", 128, True, torch.float16, False),
    (16, "qwen_down", 64, False, torch.bfloat16, False),
    (100, "odd", 32, False, torch.float16, True),
    (1024, "llama_qkv", -1, True, torch.bfloat16, False),
])
def test_graph_replay_equals_eager(M, name, g, sym, dtype, act):
    K, N = SHAPES[name]
    ck = random_gptq(K, N, g, sym, dtype, "cuda", desc_act=act)
    fr = frame_from_gptq_v2(ck)
    x = torch.randn(M, K, device="cuda").to(dtype)
    bias = torch.randn(N, device="cuda").to(dtype)
    eager = run_out(x, fr, bias)
    out = torch.full_like(eager, float("nan"))
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):  # warm-up on the capture stream
        run_out(x, fr, bias, out=out)
    torch.cuda.current_stream().wait_stream(s)
    # The capture's first call follows no kernel of mate's: it plans for the context without
    # overlap, which may sum K differently from an eager call (Llama-8B o at M = 1: whole tiles
    # there, split eagerly); the two behind it plan as eager calls do and must match them.
    first = torch.full_like(eager, float("nan"))
    g_ = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g_):
        run_out(x, fr, bias, out=first)
        run_out(x, fr, bias, out=out)
        y = torch.ops.mate.w4a16_gemm(x, *fr.args(), bias, fr.group_size)
    for i in range(2):
        first.fill_(float("nan"))
        out.fill_(float("nan"))
        g_.replay()
        torch.cuda.synchronize()
        assert torch.equal(out, eager) and torch.equal(y, eager)
        total, col = errors(first, reference(ck, x, bias))
        assert total <= BOUND[dtype] and col <= 5 * BOUND[dtype], ("the capture's first call", total, col)
        if i == 0:
            plain = first.clone()
    assert torch.equal(first, plain), "the first call's replays are not bit-identical"
    x.copy_(torch.randn_like(x))  # replay reads the new input in place
    g_.replay()
    assert torch.equal(out, run_out(x, fr, bias))
    assert errors(first, reference(ck, x, bias))[0] <= BOUND[dtype]


def test_runs_on_the_current_stream():
    """The launch goes to torch's current stream: queued behind a sleep and a copy on a side
    stream, the GEMM must see the copied input (a launch on another stream would run first)."""
    ck = random_gptq(4096, 4096, 128, True, torch.float16, "cuda")
    fr = frame_from_gptq_v2(ck)
    x0 = torch.randn(64, 4096, device="cuda").half()
    x1 = torch.randn(64, 4096, device="cuda").half()
    expected = run_out(x1, fr)
    buf = x0.clone()
    out = torch.full_like(expected, float("nan"))
    torch.cuda.synchronize()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        torch.cuda._sleep(50_000_000)
        buf.copy_(x1)
        run_out(buf, fr, out=out)
    s.synchronize()
    assert torch.equal(out, expected)


VARIANTS = list(torch.ops.mate._variants())


@pytest.fixture
def forced():
    yield lambda sym: torch.ops.mate._force_variant(sym)
    torch.ops.mate._force_variant(None)


def _tile_m(sym):
    tiled = any(f in sym for f in ("_dec_", "_dect_", "_wg_", "_bulk_", "_bwg_"))
    return int(sym.split("_m")[1].split("_")[0]) if tiled else 4096


def _m_values(sym):
    tm = _tile_m(sym)
    if "_wg_" in sym or "_bwg_" in sym:  # any M: one partial tile, one full tile, a second tile
        return [1, 3, tm - 1, tm, tm + 5]
    return sorted({1, 3, tm - 1, tm} & set(range(1, min(tm, 128) + 1)))


@pytest.mark.parametrize("sym", VARIANTS)
def test_every_variant_forced(sym, forced):
    """Each compiled variant, forced through the planner's test override, on odd M and two
    shapes (one with act order, where the family serves it; bulk does not): correct, and a rerun
    is bit-identical."""
    dtype = torch.bfloat16 if "_bf16_" in sym else torch.float16
    sym_cfg = "_sym" in sym
    forced(sym)
    persistent = "_bulk_" in sym or "_bwg_" in sym  # no act order; tiles of 32 or 128 features
    # the persistent families need N % 128 == 0 (bulk's seven- and ten-stripe tiles N % 112 / 160
    # == 0, bwg's 256-feature tiles N % 256 == 0); the other families get N = 320
    n1, n2 = (448, 1792) if "_n112_" in sym else (640, 2560) if "_n160_" in sym else (512, 2048) if "_n256_" in sym else (384 if persistent else 320, 2048)
    g1 = 128 if _groups_from_128(sym) else 64
    for (K, N), g, act in (((384, n1), g1, not persistent), ((1536, n2), 128, False)):
        for M in _m_values(sym):
            ck = random_gptq(K, N, g, sym_cfg, dtype, "cuda", desc_act=act)
            fr = frame_from_gptq_v2(ck)
            x = torch.randn(M, K, device="cuda").to(dtype)
            bias = torch.randn(N, device="cuda").to(dtype)
            out = run_out(x, fr, bias)
            total, col = errors(out, reference(ck, x, bias))
            assert total <= BOUND[dtype] and col <= 5 * BOUND[dtype], (sym, M, K, N, total, col)
            assert torch.equal(out, run_out(x, fr, bias)), (sym, M)


def _groups_from_128(sym):
    """The 40-token exact bwg tile: stages of four chunks with three scale rows, so groups of 128
    or more (src/plan/variants.rs bwg_stage_holds_group)."""
    return "_bwg_" in sym and "_m40_n128_" in sym and "_pre" not in sym


@pytest.mark.parametrize("sym", [v for v in VARIANTS if _groups_from_128(v)])
def test_the_40_token_exact_tile_refuses_group_64(sym, forced):
    dtype = torch.bfloat16 if "_bf16_" in sym else torch.float16
    forced(sym)
    ck = random_gptq(4224, 2048, 64, "_sym" in sym, dtype, "cuda")
    x = torch.randn(40, 4224, device="cuda").to(dtype)
    with pytest.raises(ValueError, match=r"argument `variant` = .*cannot serve this call"):
        run_out(x, frame_from_gptq_v2(ck))


def test_forcing_a_variant_that_cannot_serve_is_named(forced):
    f16_dec = next(v for v in VARIANTS if "_dec_f16_sym_m8_" in v)
    forced(f16_dec)
    ck = random_gptq(256, 128, 64, True, torch.float16, "cuda")
    fr = frame_from_gptq_v2(ck)
    with pytest.raises(ValueError, match="forced variant cannot serve"):
        run_out(torch.randn(9, 256, device="cuda").half(), fr)  # M = 9 > the tile's 8 tokens
    with pytest.raises(ValueError, match="not a compiled variant"):
        forced("mate_no_such_kernel")


def forced_runs(forced, syms, x, fr):
    """The output of each variant in `syms`, forced in turn, on (x, fr)."""
    outs = []
    for s_ in syms:
        forced(s_)
        outs.append(run_out(x, fr))
    return outs


def check_splits(forced, syms, x, fr, whole, dtype, sms_list=(7, 33, 132)):
    """Split variants reorder the fp32 sum: bit-identical across reruns for each SM count (the
    split follows it), and close to the whole-K result."""
    for s_ in syms:
        forced(s_)
        for sms in sms_list:
            a = run_out(x, fr, num_sms=sms)
            assert torch.equal(a, run_out(x, fr, num_sms=sms)), (s_, sms)
            assert errors(a, whole.double())[0] < BOUND[dtype] / 4, (s_, sms)


@pytest.mark.parametrize("dtype,sym", [(torch.float16, True), (torch.bfloat16, False)])
def test_decode_variants_parity(dtype, sym, forced):
    """Whole-K decode variants accumulate each output over K in the same order whatever their
    token and feature tiles, so they agree bit for bit (memcmp = 0). Split variants reorder the
    fp32 sum across warps: close to the whole-K result, and bit-identical across reruns."""
    dt = "bf16" if dtype == torch.bfloat16 else "f16"
    prefix = f"_dec_{dt}_{'sym' if sym else 'zp'}_"
    ck = random_gptq(4096, 6144, 128, sym, dtype, "cuda")
    fr = frame_from_gptq_v2(ck)
    x = torch.randn(7, 4096, device="cuda").to(dtype)
    whole = forced_runs(forced, [v for v in VARIANTS if prefix in v and v.endswith("_whole")], x, fr)
    assert len(whole) >= 2 and all(torch.equal(whole[0], o) for o in whole[1:])
    # CTA-tiled variants split K over the same 8 warps in the same order
    tiles = forced_runs(forced, [v for v in VARIANTS if f"_dect_{dt}_{'sym' if sym else 'zp'}_" in v], x, fr)
    assert len(tiles) >= 2 and all(torch.equal(tiles[0], o) for o in tiles[1:])
    # dect rounds each scaled weight to the activation dtype before the MMA (pre-scale); the
    # post-scale whole-K result does not: they differ by that rounding, within the dtype's bound.
    assert errors(tiles[0], whole[0].double())[0] < BOUND[dtype]
    check_splits(forced, [v for v in VARIANTS if prefix in v and v.endswith("_split")], x, fr, whole[0], dtype)


@pytest.mark.parametrize("dtype,sym", [(torch.float16, True), (torch.bfloat16, False)])
def test_wg_variants_parity(dtype, sym, forced):
    """wgmma family: whole-K variants of every token tile accumulate each output over the same
    chunks in the same order: bit-identical. Split variants reorder the fp32 sum across CTAs:
    bit-identical across reruns for each SM count, close to whole K."""
    prefix = f"_wg_{'bf16' if dtype == torch.bfloat16 else 'f16'}_{'sym' if sym else 'zp'}_"
    ck = random_gptq(4096, 6144, 128, sym, dtype, "cuda")
    fr = frame_from_gptq_v2(ck)
    x = torch.randn(200, 4096, device="cuda").to(dtype)
    whole = forced_runs(forced, [v for v in VARIANTS if prefix in v and v.endswith("_whole")], x, fr)
    assert len(whole) >= 2 and all(torch.equal(whole[0], o) for o in whole[1:])
    total, col = errors(whole[0], reference(ck, x, None))
    assert total <= BOUND[dtype] and col <= 5 * BOUND[dtype]
    check_splits(forced, [v for v in VARIANTS if prefix in v and v.endswith("_split")], x, fr, whole[0], dtype)


# (dtype, symmetric, group, pre-scale): the exact form's chunk pairs (groups >= 128, per channel)
# with and without zero points, its one-chunk loop (group 64), and the pre-scaled form.
BWG_CONFIGS = [(torch.float16, True, 128, False), (torch.bfloat16, False, 32, True), (torch.float16, False, -1, False),
               (torch.bfloat16, False, 64, False), (torch.float16, True, 128, True), (torch.float16, False, 128, False)]


@pytest.mark.parametrize("tile,M,dtype,sym,g,pre", [
    (tile, M, *cfg)
    for tile, M in [("_m16_n128_", 11), ("_m16_n128_", 16), ("_m24_n128_", 17), ("_m24_n128_", 24), ("_m32_n128_", 25), ("_m32_n128_", 32), ("_m32_n128_", 70),
                    ("_m40_n128_", 33), ("_m40_n128_", 40), ("_m48_n128_", 41), ("_m48_n128_", 48), ("_m48_n128_", 100),
                    ("_m56_n128_", 49), ("_m56_n128_", 56),
                    ("_m64_n128_", 40), ("_m64_n128_", 64), ("_m64_n128_", 130), ("_m128_n128_", 200), ("_m144_n128_", 270),
                    ("_m160_n128_", 300), ("_m176_n128_", 170), ("_m192_n128_", 160), ("_m192_n128_", 330),
                    ("_m208_n128_", 400), ("_m224_n128_", 420), ("_m240_n128_", 231), ("_m256_n128_", 300),
                    ("_m272_n128_", 530), ("_m288_n128_", 280),
                    ("_m304_n128_", 303), ("_m320_n128_", 650), ("_m48_n256_", 45), ("_m48_n256_", 48), ("_m56_n256_", 52), ("_m56_n256_", 56), ("_m64_n256_", 64)]
    for cfg in BWG_CONFIGS
    # the 256-feature tiles: exact at 48 tokens (groups >= 64, per channel), both forms at 56,
    # pre-scaled at 64
    if "_n256_" not in tile or tile == "_m56_n256_" or cfg[3] == (tile == "_m64_n256_")
    # the 56-320-token 128-feature tiles are built pre-scale only
    if cfg[3] or tile in ("_m16_n128_", "_m24_n128_", "_m32_n128_", "_m40_n128_", "_m48_n128_", "_m48_n256_", "_m56_n256_")
    if not (tile == "_m40_n128_" and cfg[2] == 64 and not cfg[3])  # groups >= 128 there (test_the_40_token_exact_tile_refuses_group_64)
])
def test_bwg_variants_parity(dtype, sym, g, pre, tile, M, forced):
    """bwg family (x by TMA boxes of M rounded up to 8 rows), each token tile, post-scale (16/32
    tokens, groups >= 64 and per channel: every chunk closing a group at 64) and pre-scale: the
    whole-K variant matches the float64 reference with a partial last stage (K = 4224 is 66
    chunks: a partial stage of 4-chunk stages; K = 4160, 65 chunks, where the group allows: one of
    2-chunk stages too, the two-A-set tail), on contiguous x and on x rows padded to a wider
    stride (the tensor map's stride); split variants are bit-identical across reruns for each SM
    count and close to whole K."""
    dt = "bf16" if dtype == torch.bfloat16 else "f16"
    prefix = f"_bwg_{dt}_{'sym' if sym else 'zp'}{tile}"
    K = 4224 if g in (64, 128) else 4160
    ck = random_gptq(K, 2048, g, sym, dtype, "cuda")
    fr = frame_from_gptq_v2(ck)
    x = torch.randn(M, K, device="cuda").to(dtype)
    padded = torch.randn(M, K + 64, device="cuda").to(dtype)[:, :K]
    padded.copy_(x)
    mine = [v for v in VARIANTS if prefix in v and v.removesuffix("_sl").endswith("_pre") == pre]
    (whole,) = [v for v in mine if "_whole" in v]
    forced(whole)
    w = run_out(x, fr)
    total, col = errors(w, reference(ck, x, None))
    assert total <= BOUND[dtype] and col <= 5 * BOUND[dtype], (whole, total, col)
    assert torch.equal(run_out(padded, fr), w), "a padded row stride changes the result"
    splits = [v for v in mine if "_split" in v or v.endswith("_ring") or "_sk" in v or v.endswith("_sl")]
    # the 32-token post-scale tile: split, ring-first, stream-K, ring-first / split with the sliced sum;
    # the 40-64-token tiles (both forms at 40 / 48): split, stream-K, split with the sliced sum
    assert len(splits) == {"_m24_n128_": 1 if pre else 5, "_m32_n128_": 1 if pre else 5, "_m40_n128_": 3, "_m48_n128_": 3, "_m56_n128_": 3, "_m64_n128_": 3, "_m48_n256_": 2, "_m56_n256_": 2, "_m64_n256_": 2}.get(tile, 1), splits
    # SM counts (src/plan/bwg.rs bwg_split; 128-256-token tiles, 32 tiles here): 7 (stream-K after
    # whole rounds), 33 (forced where the rule says whole: stream-K, 32 tiles on 33 CTAs), 40 and
    # 132 (stream-K, more CTAs than tiles: owners of several contributors, ranges inside one
    # tile), 100 (the even split). 16/32-token tiles: the even split, or forced, split in two. The
    # 32-token ring-first tile (`_ring`): at 132 SMs parts of 3 stages (the whole part issued
    # before the wait), at 7 SMs two 9-stage parts (the ring wraps after its first fill). The
    # 32-64-token stream-K tiles (`_sk`, always stream-K): at 7 SMs ranges over several tiles, at
    # 132 a stage a CTA (owners with many contributors).
    check_splits(forced, splits, x, fr, w, dtype, sms_list=(7, 33, 40, 100, 132))
    ring = [v for v in splits if v.endswith("_ring")]
    if ring:  # the ring-first tile changes only the producer's issue order: bit-identical
        (plain,) = [v for v in splits if v.endswith("_split")]
        for sms in (7, 132):
            outs = []
            for v in (plain, ring[0]):
                forced(v)
                outs.append(run_out(x, fr, num_sms=sms))
            assert torch.equal(outs[0], outs[1]), (plain, ring, sms)


BULK_CONFIGS = [(torch.float16, True, 128), (torch.bfloat16, False, 32), (torch.float16, False, -1)]


@pytest.mark.parametrize("tile,M,dtype,sym,g", [
    (tile, M, *cfg)
    for tile, M in [("_m1_n32_", 1), ("_m8_n32_", 3), ("_m8_n32_", 8), ("_m8_n128_", 5), ("_m16_n128_", 16)]
    for cfg in BULK_CONFIGS
    if not (tile == "_m8_n32_" and cfg[2] == 32)  # the 8-token narrow tile is built post-scale only
])
def test_bulk_variants_parity(dtype, sym, g, tile, M, forced):
    """bulk family, each tile (1 or 8 tokens x 32 features, 16 chunks per stage; 8 or 16 tokens x
    128 features, 8 chunks per stage, 4 with group 32): the whole-K variant matches the float64 reference with a partial last
    stage (K = 4224 is 66 chunks) and per-channel groups that are not a power of two; split
    variants are bit-identical across reruns for each SM count (the split follows it) and close to
    whole K."""
    dt = "bf16" if dtype == torch.bfloat16 else "f16"
    prefix = f"_bulk_{dt}_{'sym' if sym else 'zp'}{tile}"
    pre = g == 32
    ck = random_gptq(4224, 2048, g, sym, dtype, "cuda")
    fr = frame_from_gptq_v2(ck)
    x = torch.randn(M, 4224, device="cuda").to(dtype)
    mine = [v for v in VARIANTS if prefix in v and v.endswith("_pre") == pre]
    (whole,) = [v for v in mine if "_whole" in v]
    forced(whole)
    w = run_out(x, fr)
    total, col = errors(w, reference(ck, x, None))
    assert total <= BOUND[dtype] and col <= 5 * BOUND[dtype], (whole, total, col)
    (split,) = [v for v in mine if "_split" in v]
    check_splits(forced, [split], x, fr, w, dtype)


def test_split_workspace_explicit_reused_and_checked(forced):
    """A split launch with a caller-owned workspace: zero-initialised once, reused across calls
    (the kernel leaves its tickets zeroed: a stale ticket would leave NaN-poisoned outputs
    unwritten), same bits as the shim-allocated path; too small a
    workspace is refused with the size it needs."""
    forced(next(v for v in VARIANTS if "_dec_f16_sym_m8_n16_split" in v))
    ck = random_gptq(8960, 1536, 128, True, torch.float16, "cuda")
    fr = frame_from_gptq_v2(ck)
    x = torch.randn(3, 8960, device="cuda").half()
    need = torch.ops.mate.w4a16_workspace_size(x, fr.meta)
    assert need > 0
    ws = torch.zeros(need, dtype=torch.uint8, device="cuda")
    ref = run_out(x, fr)
    for _ in range(5):
        assert torch.equal(run_out(x, fr, workspace=ws), ref)
    with pytest.raises(ValueError, match=f"needs {need} zero-initialised bytes"):
        run_out(x, fr, workspace=ws[: need - 256])
    total, col = errors(ref, reference(ck, x, None))
    assert total <= BOUND[torch.float16] and col <= 5 * BOUND[torch.float16]
