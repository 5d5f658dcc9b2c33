"""The wg family's two x paths (kernels/wg.cuh, src/device/tma.rs): a chunk's x tile arrives by one
TMA tensor copy where the launcher can describe x with a tensor map, else by every thread's
cp.async. Each wg variant, forced, on contiguous and padded/offset x views and on M with a partial
last m-tile: NaN-poisoned output, float64 reference, both paths bit-identical, and the launch log
names the path each launch used."""

import pytest
import torch

from checkpoints import BOUND, errors, frame_from_gptq_v2, random_gptq, reference, run_out
from test_launch_log import records

VARIANTS = list(torch.ops.mate._variants())
WG = [v for v in VARIANTS if "_wg_" in v]


@pytest.fixture
def force():
    def f(sym=None, x=None):
        torch.ops.mate._force_variant(sym)
        torch.ops.mate._force_wg_x(x)

    yield f
    torch.ops.mate._force_variant(None)
    torch.ops.mate._force_wg_x(None)


def test_the_x_path_override_names_bad_values():
    with pytest.raises(ValueError, match="`path`.*cp_async"):
        torch.ops.mate._force_wg_x("bulk")
    torch.ops.mate._force_wg_x("cp_async")
    torch.ops.mate._force_wg_x(None)


def x_views(M, K, dtype, gen):
    """(name, x) for one M: contiguous; rows padded to K + 8 (a stride TMA can describe, not K);
    and a view starting 16 bytes into its buffer with padded rows."""
    base = torch.randn(M, K + 16, device="cuda", generator=gen).to(dtype)
    return [
        ("contiguous", base[:, :K].contiguous()),
        ("padded", base[:, :K]),
        ("offset", base[:, 8 : 8 + K]),
    ]


def tile_m(sym):
    return int(sym.split("_m")[1].split("_")[0])


@pytest.mark.gpu
@pytest.mark.parametrize("sym", WG)
def test_both_x_paths(sym, force):
    dtype = torch.bfloat16 if "_bf16_" in sym else torch.float16
    K, N, g = 1024, 320, 128  # N = 320: a last 64-feature tile (the idle-warpgroup case)
    gen = torch.Generator("cuda").manual_seed(7)
    ck = random_gptq(K, N, g, "_sym" in sym, dtype, "cuda", gen=gen)
    fr = frame_from_gptq_v2(ck)
    bias = torch.randn(N, device="cuda", generator=gen).to(dtype)
    tm = tile_m(sym)
    for M in sorted({1, tm - 1, 300}):  # 300: a partial last m-tile for every token tile
        for name, x in x_views(M, K, dtype, gen):
            ref = reference(ck, x, bias)
            outs = {}
            # the rule: TMA where M fills a tile (src/device/tma.rs tma_pays); forced TMA keeps
            # the partial-box (zero-filled rows) case tested
            rule = "tma" if M >= tm else "cp_async:partial"
            paths = [(None, rule), ("cp_async", "cp_async:forced")] + ([("tma", "tma")] if M < tm else [])
            for path, want in paths:
                force(sym, path)
                out = [None]

                def call():
                    out[0] = run_out(x, fr, bias)

                (rec,) = records(call)
                assert rec["kernel"] == sym and rec["x"] == want, (sym, M, name, rec)
                total, col = errors(out[0], ref)
                assert total <= BOUND[dtype] and col <= 5 * BOUND[dtype], (sym, M, name, path, total, col)
                outs[want] = out[0]
            # same x tile in the same swizzled layout either way: the same sums, bit for bit
            assert all(torch.equal(outs["tma"], o) for o in outs.values()), (sym, M, name)


@pytest.mark.gpu
def test_act_order_x_paths_forced_wg_small_routed_and_gathered(force):
    K, N = 1536, 256
    ck = random_gptq(K, N, 128, False, torch.float16, "cuda", desc_act=True)
    fr = frame_from_gptq_v2(ck)
    x = torch.randn(300, K, device="cuda").half()
    force("mate_wg_f16_zp_m128_whole")
    out = [None]

    def call():
        out[0] = run_out(x, fr)

    (rec,) = records(call)
    assert rec["x"] == "gather", rec
    total, col = errors(out[0], reference(ck, x, None))
    assert total <= BOUND[torch.float16] and col <= 5 * BOUND[torch.float16]
    force(None)
    # routed at M = 1 on this small layer: a decode family's in-loop gather (no x path logged);
    # on a layer of 2^23 weights the plain decode plan on x gathered into the workspace first
    (rec,) = records(lambda: run_out(x[:1], fr))
    assert "_wg_" not in rec["kernel"] and rec["x"] == "-", rec
    ck2 = random_gptq(4096, 2048, 128, False, torch.float16, "cuda", desc_act=True)
    fr2 = frame_from_gptq_v2(ck2)
    x2 = torch.randn(1, 4096, device="cuda").half()
    (rec,) = records(lambda: run_out(x2, fr2))
    assert "_wg_" not in rec["kernel"] and rec["x"] == "gathered", rec
    total, col = errors(run_out(x2, fr2), reference(ck2, x2, None))
    assert total <= BOUND[torch.float16] and col <= 5 * BOUND[torch.float16]


@pytest.mark.gpu
def test_a_row_stride_tma_cannot_describe_is_refused_before_any_path(force):
    """A row stride of K + 4 elements (not 16 bytes) breaks cp.async's alignment as much as TMA's:
    validation refuses it by name (src/call.rs), so no launch ever needs a third x path."""
    K, N = 1024, 256
    fr = frame_from_gptq_v2(random_gptq(K, N, 128, True, torch.float16, "cuda"))
    x = torch.randn(300, K + 4, device="cuda").half()[:, :K]
    force("mate_wg_f16_sym_m256_whole")
    with pytest.raises(ValueError, match="multiple of 8"):
        run_out(x, fr)


@pytest.mark.gpu
def test_graph_replay_reads_new_x_through_the_captured_map(force):
    """The map is a kernel argument encoded at capture: replay must read the captured buffer's new
    contents (the map holds the address, not the data)."""
    K, N = 1024, 256
    ck = random_gptq(K, N, 128, True, torch.float16, "cuda")
    fr = frame_from_gptq_v2(ck)
    x = torch.randn(300, K, device="cuda").half()
    force("mate_wg_f16_sym_m256_whole")
    assert_replay_reads_new_x(x, fr, run_out(x, fr))  # the eager call loads the module before capture


def assert_replay_reads_new_x(x, fr, out):
    """Captures one call into `out`, refills `x`, replays: `out` must equal a fresh eager call."""
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        run_out(x, fr, out=out)
    x.copy_(torch.randn_like(x))
    g.replay()
    torch.cuda.synchronize()
    assert torch.equal(out, run_out(x, fr))


@pytest.mark.gpu
@pytest.mark.parametrize("M", [9, 20, 32])
def test_routed_bwg_launches_take_x_by_tma_and_replay_new_x(M, force):
    """The bwg family (kernels/bwg.cuh) has one x path, TMA boxes of M rounded up to 8 rows: a
    routed call logs it, matches the float64 reference, and a graph replay reads the captured
    buffer's new contents through the map encoded at capture."""
    K, N = 4096, 6144  # Llama-8B qkv: bwg at M = 9-32 (tests/plan.rs bwg_routing_is_pinned)
    ck = random_gptq(K, N, 128, True, torch.float16, "cuda")
    fr = frame_from_gptq_v2(ck)
    x = torch.randn(M, K, device="cuda").half()
    out = [None]

    def call():
        out[0] = run_out(x, fr)

    (rec,) = records(call)
    assert "_bwg_" in rec["kernel"] and rec["x"] == "tma", rec
    total, col = errors(out[0], reference(ck, x, None))
    assert total <= BOUND[torch.float16] and col <= 5 * BOUND[torch.float16]
    assert_replay_reads_new_x(x, fr, out[0])


@pytest.mark.gpu
@pytest.mark.parametrize("M,dtype,g,K", [(100, torch.float16, 128, 1536), (300, torch.bfloat16, 64, 1536),
                                         (700, torch.float16, 128, 1536), (100, torch.bfloat16, 128, 38912)])
def test_act_order_prefill_gathers_x_for_bwg(M, dtype, g, K):
    """Act order above 64 tokens (src/plan/bwg.rs prefer_bwg): x gathered by perm into the
    workspace (kernels/gather.cuh), then bwg's TMA boxes over that copy. The launch log names the
    path; the result matches the float64 reference and equals, bit for bit, the same frame without
    act order called on x gathered by torch; a graph replay gathers the captured x's new rows.
    Both gathers (src/device/mod.rs gather_x): through shared memory (M = 100: a row a CTA; 300,
    700: several, the next row's copy in flight) and from global memory (K = 38912, past the
    shared-memory gather's limit)."""
    N = 2048
    ck = random_gptq(K, N, g, False, dtype, "cuda", desc_act=True)
    fr = frame_from_gptq_v2(ck)
    x = torch.randn(M, K, device="cuda").to(dtype)
    out = [None]

    def call():
        out[0] = run_out(x, fr)

    (rec,) = records(call)
    assert "_bwg_" in rec["kernel"] and rec["x"] == "gathered+tma", rec
    total, col = errors(out[0], reference(ck, x, None))
    assert total <= BOUND[dtype] and col <= 5 * BOUND[dtype], (total, col)
    plain_meta = torch.ops.mate.frame_meta(K, N, g, True, False)
    plain = torch.full_like(out[0], float("nan"))
    xg = x[:, fr.perm.long()].contiguous()
    (rec2,) = records(lambda: torch.ops.mate.w4a16_gemm.out(xg, fr.qweight, plain_meta, fr.scales, fr.zeros, None, None, fr.group_size, out=plain))
    assert rec2["kernel"] == rec["kernel"] and rec2["x"] == "tma", rec2
    assert torch.equal(plain, out[0])
    assert_replay_reads_new_x(x, fr, out[0])
