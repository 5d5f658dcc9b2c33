"""Programmatic dependent launch (kernels/pdl.cuh, src/device/mod.rs): the bulk, bwg and dect
kernels may start while the previous kernel in the stream runs and wait for it before reading x.
These tests chain GEMMs whose x is the previous GEMM's output, with no synchronization between them, eagerly
and inside a CUDA graph, and check every result against float64; a kernel that read x too early
would read the poisoned or previous output."""

import pytest
import torch

from checkpoints import errors, frame_from_gptq_v2, random_gptq, reference, run_out
from test_launch_log import records

BOUND = {torch.float16: 2e-3, torch.bfloat16: 1e-2}

# (M, layer shapes): each layer's K is the previous layer's N. M = 1 and 8 route to bulk and (the
# 4096 x 4096 layer) dect, M = 32 to bwg, with a split layer (K large, N small) and a whole one in
# each chain; every plan here is launched to overlap (Variant::programmatic_launch).
CHAINS = [
    (1, [(4096, 6144), (6144, 4096), (4096, 4096), (4096, 28672)]),
    (8, [(4096, 8192), (8192, 4096), (4096, 4096)]),
    (32, [(4096, 8192), (8192, 4096)]),
    (64, [(4096, 8192), (8192, 4096)]),  # wg
]


def build(M, shapes, dtype):
    layers = []
    for K, N in shapes:
        ck = random_gptq(K, N, 128, True, dtype, "cuda")
        ck.scales.div_(K ** 0.5 * 0.055)  # outputs O(1), so the chain stays in range
        layers.append((ck, frame_from_gptq_v2(ck)))
    return layers


def chain(layers, x, outs):
    h = x
    for (ck, fr), out in zip(layers, outs):
        run_out(h, fr, out=out)
        h = out
    return h


def check(layers, outs, x, dtype):
    """Each layer against float64 on the input it read: x, then the previous layer's output."""
    ins = [x] + outs[:-1]
    for i, ((ck, _), h, o) in enumerate(zip(layers, ins, outs)):
        total, col = errors(o, reference(ck, h, None))
        assert total <= BOUND[dtype] and col <= 5 * BOUND[dtype], (i, total, col)


def capture(g, fn):
    with torch.cuda.graph(g):
        fn()


def replay_checked(g, x, outs, check_outs, times):
    """Fresh input and poisoned outputs before every replay, then the check."""
    for _ in range(times):
        x.copy_(torch.randn_like(x))
        for o in outs:
            o.fill_(float("nan"))
        g.replay()
        torch.cuda.synchronize()
        check_outs()


@pytest.mark.gpu
@pytest.mark.parametrize("M,shapes", CHAINS, ids=["m1", "m8", "m32", "m64"])
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_chained_calls_read_the_previous_output(M, shapes, dtype):
    layers = build(M, shapes, dtype)
    x = torch.randn(M, shapes[0][0], device="cuda").to(dtype)
    outs = [torch.full((M, N), float("nan"), device="cuda", dtype=dtype) for _, N in shapes]
    log = records(lambda: chain(layers, x, outs))
    assert [r["pdl"] for r in log] == ["1"] * len(shapes), log  # the chain really overlaps
    check(layers, outs, x, dtype)


@pytest.mark.gpu
@pytest.mark.parametrize("M,shapes", CHAINS, ids=["m1", "m8", "m32", "m64"])
def test_chained_calls_in_a_graph(M, shapes):
    dtype = torch.float16
    layers = build(M, shapes, dtype)
    x = torch.randn(M, shapes[0][0], device="cuda").to(dtype)
    outs = [torch.empty((M, N), device="cuda", dtype=dtype) for _, N in shapes]
    chain(layers, x, outs)  # module load and workspace outside the capture
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    capture(g, lambda: chain(layers, x, outs))
    replay_checked(g, x, outs, lambda: check(layers, outs, x, dtype), 3)


@pytest.mark.gpu
@pytest.mark.parametrize("M,K,N,act,family,pdl", [
    (1, 1536, 2048, False, "_dect_", "1"),  # Qwen2-1.5B qkv: dect waits too
    (1, 4096, 3072, False, "_bulk_f16_sym_m1_n128_split", "1"),  # bulk_m1_dect_wave: the one-token split overlaps too
    (1, 8192, 10240, False, "_bulk_f16_sym_m8_n32_split", "1"),  # Llama-70B qkv: the 8-token stream-K (bulk_m1_eight)
    (1, 14336, 4096, False, "_bulk_f16_sym_m8_n32_split", "1"),  # Llama-8B down: the 8-token split at M = 1 too
    (64, 4096, 6144, False, "_bwg_f16_sym_m64_n128_split_pre_sl", "1"),  # Llama-8B qkv at M = 64: bwg's 64-token tile
    (64, 8192, 1088, False, "_wg_", "1"),  # N % 128 != 0 (bwg's tiles are 128 features): wg waits too
    (4, 8960, 1536, False, "_bulk_f16_sym_m8_n32_split", "1"),  # Qwen2-1.5B down at M = 2-8: bulk's narrow tile
    (16, 8960, 1536, False, "_bwg_f16_sym_m16_n128_split", "1"),  # the same at M = 9-16: bwg
    # the same with act order: the plain plan on x gathered first (the gather is a launch of its
    # own, not in the GEMM log), overlapping like the plain plan
    (4, 8960, 1536, True, "_bulk_f16_sym_m8_n32_split", "1"),
    (16, 8960, 1536, True, "_bwg_f16_sym_m16_n128_split", "1"),
    (64, 4096, 6144, True, "_bwg_f16_sym_m64_n128_split_pre_sl", "1"),
    # a forced dec variant with act order gathers in its loop: dec does not wait, never launched so
    (4, 8960, 1536, True, "mate_dec_f16_sym_m8_n32_split", "0"),
])
def test_which_plans_overlap(M, K, N, act, family, pdl):
    """The launch log's pdl field per plan (Variant::programmatic_launch)."""
    ck = random_gptq(K, N, 128, True, torch.float16, "cuda", desc_act=act)
    fr = frame_from_gptq_v2(ck)
    x = torch.randn(M, K, device="cuda").half()
    forced = family.startswith("mate_")
    if forced:
        torch.ops.mate._force_variant(family)
    try:
        (r,) = records(lambda: run_out(x, fr))
    finally:
        if forced:
            torch.ops.mate._force_variant(None)
    assert family in r["kernel"] and r["pdl"] == pdl, r
    if act:  # the routed plan reads the gathered copy by TMA; the forced dec gathers in its loop
        assert r["x"] == ("-" if forced else "gathered+tma" if "_bwg_" in family else "gathered"), r


@pytest.mark.gpu
def test_capture_overlaps_only_behind_mates_triggering_kernels():
    """While a graph is captured, a programmatic launch behind a kernel that never triggers (torch's)
    was slower than a plain one (bench/NOTES.md session 35), so there the launch is plain
    (src/device/mod.rs behind_triggers); behind mate's own kernels it still overlaps, and eagerly
    (where the predecessor is invisible) every programmatic plan overlaps."""
    layers = build(1, [(4096, 6144), (6144, 4096), (4096, 4096)], torch.float16)
    x = torch.randn(1, 4096, device="cuda").half()
    h = torch.empty_like(x)  # torch's product, the first GEMM's input
    outs = [torch.empty((1, N), device="cuda", dtype=torch.float16) for N in (6144, 4096, 4096)]
    h2 = torch.empty_like(outs[1])  # torch's copy of the second GEMM's output, the third's input

    def step():
        torch.mul(x, 2.0, out=h)
        chain(layers[:2], h, outs[:2])  # behind torch's kernel, then behind mate's
        h2.copy_(outs[1])
        run_out(h2, layers[2][1], out=outs[2])  # behind torch's copy

    step()
    torch.cuda.synchronize()
    assert [r["pdl"] for r in records(step)] == ["1", "1", "1"]  # eager: all overlap
    g = torch.cuda.CUDAGraph()
    log = records(lambda: capture(g, step))
    assert [r["pdl"] for r in log] == ["0", "1", "0"], log

    def check_all():
        check(layers[:2], outs[:2], h, torch.float16)
        check(layers[2:], outs[2:], h2, torch.float16)

    replay_checked(g, x, outs, check_all, 2)


@pytest.mark.gpu
@pytest.mark.parametrize("M,N,overlap_kernel,plain_kernel", [
    (1, 3072, "_bulk_f16_sym_m1_n128_split", "_bulk_f16_sym_m8_n32_whole"),  # bulk_m1_dect_wave
    (5, 4096, "_dect_f16_sym_m8_", "_bulk_f16_sym_m8_n32_whole"),  # bulk_plain_fill on dect's layers
    (8, 14336, "_bulk_f16_sym_m8_n128_split", "_bulk_f16_sym_m8_n112_whole"),  # bulk_plain_balanced
])
def test_plans_follow_the_launch_context(M, N, overlap_kernel, plain_kernel):
    """The plan depends on the launch context (Problem::overlap, src/plan/bulk.rs): in a captured
    graph the same K x N layer plans as split tiles behind one of mate's triggering kernels and as
    whole tiles behind torch's kernel; eagerly both calls overlap. One workspace of
    w4a16_workspace_size serves both plans (the query answers the larger); every replay's outputs,
    poisoned first, against float64."""
    layer, feeder = build(M, [(4096, N), (14336, 4096)], torch.float16)
    xa = torch.randn(M, 4096, device="cuda").half()
    x0 = torch.randn(M, 14336, device="cuda").half()
    h = torch.empty_like(xa)  # torch's product: the plain call's input
    o0 = torch.empty((M, 4096), device="cuda", dtype=torch.float16)  # mate's output: the overlapping call's input
    o_plain, o_overlap = (torch.empty((M, N), device="cuda", dtype=torch.float16) for _ in range(2))
    need = torch.ops.mate.w4a16_workspace_size(xa, layer[1].meta)
    assert (need > 0) == ("_split" in overlap_kernel + plain_kernel), (need, "a split plan needs a workspace, whole tiles none")
    ws = torch.zeros(need, dtype=torch.uint8, device="cuda") if need > 0 else None

    def step():
        torch.mul(xa, 2.0, out=h)
        run_out(h, layer[1], out=o_plain, workspace=ws)  # behind torch's kernel
        run_out(x0, feeder[1], out=o0)
        run_out(o0, layer[1], out=o_overlap, workspace=ws)  # behind mate's

    step()
    torch.cuda.synchronize()
    eager = records(step)
    assert [overlap_kernel in r["kernel"] for r in (eager[0], eager[2])] == [True, True], eager
    g = torch.cuda.CUDAGraph()
    log = records(lambda: capture(g, step))
    assert plain_kernel in log[0]["kernel"] and log[0]["pdl"] == "0", log
    assert overlap_kernel in log[2]["kernel"] and log[2]["pdl"] == "1", log

    def check_both():
        check([layer], [o_plain], h, torch.float16)
        check([layer], [o_overlap], o0, torch.float16)

    replay_checked(g, xa, [o_plain, o0, o_overlap], check_both, 2)
