"""bwg's sliced-sum variants (`_sl`, kernels/variants.def split = 4 / 5): every part of an even
split sums a slice of its tile (kernels/bwg.cuh bwg::sliced_sum) where each part is its own CTA,
else (fewer CTAs than parts) the last arriver sums the tile as in the plain variant. Both add the
parts in split order, so a sliced variant and its plain twin must agree bit for bit on any plan,
and the sliced one must be right against float64 with every output written. Also the 128-256-token tiles' sliced even
split (no variants of its own: from three parts, one CTA each), against float64 and reruns."""

import pytest
import torch

from checkpoints import BOUND, errors, frame_from_gptq_v2, random_gptq, reference, run_out
from test_launch_log import records

pytestmark = pytest.mark.gpu

SLICED = [v for v in torch.ops.mate._variants() if v.endswith("_sl")]


def test_sliced_variants_exist():
    # the 32-token ring-first and plain split tiles (the latter since session 43), the 24-token
    # ones, the 40- and 48-token exact (since session 51) and the 40-, 48-, 56- and 64-token
    # pre-scaled split tiles, every dtype and zero-point form
    assert len(SLICED) == 40, SLICED
    assert all(v[: -len("_sl")] in torch.ops.mate._variants() for v in SLICED), SLICED


# Qwen2-1.5B down (12 tiles of 128, K = 8960): at 132 SMs 17 (32 tokens) / 22 (40-64) parts a tile,
# or 11 (one CTA an SM), one CTA each (sliced);
# at 40 SMs 6 parts (80 slots: still one CTA each); at 7 SMs the forced split in two on 14 CTAs
# for 12 x 2 parts (the ticket, in both variants).
@pytest.mark.parametrize("sym", SLICED)
def test_sliced_variant_matches_its_twin_bitwise(sym):
    tm = int(sym.split("_m")[1].split("_")[0])
    dtype = torch.bfloat16 if "_bf16_" in sym else torch.float16
    g = 32 if sym.endswith("_pre_sl") else 128
    K, N = 8960, 1536
    ck = random_gptq(K, N, g, "_sym_" in sym, dtype, "cuda")
    fr = frame_from_gptq_v2(ck)
    bias = torch.randn(N, device="cuda").to(dtype)
    twin = sym[: -len("_sl")]
    try:
        for M in (tm - 5, tm):
            x = torch.randn(M, K, device="cuda").to(dtype)
            ref = reference(ck, x, bias.double())
            for sms in (132, 40, 7):
                torch.ops.mate._force_variant(sym)
                run_out(x, fr, bias, num_sms=sms)  # module load outside the record
                (rec,) = records(lambda: run_out(x, fr, bias, num_sms=sms))
                a = run_out(x, fr, bias, num_sms=sms)
                again = run_out(x, fr, bias, num_sms=sms)
                torch.ops.mate._force_variant(twin)
                (rec_twin,) = records(lambda: run_out(x, fr, bias, num_sms=sms))
                b = run_out(x, fr, bias, num_sms=sms)
                tag = (sym, M, sms)
                assert rec["kernel"] == sym and rec_twin["kernel"] == twin, (tag, rec, rec_twin)
                assert (rec["grid"], rec["split"]) == (rec_twin["grid"], rec_twin["split"]), (tag, rec, rec_twin)
                if sms == 132:  # every part its own CTA: 264 slots / 12 tiles, parts two stages deep,
                    # or one CTA an SM (src/plan/bwg.rs bwg_one_an_sm; the 40-64-token tiles without overlap)
                    # (chunks a stage: four up to 32 tokens and in the 40-token exact tile, else two)
                    ch = 4 if tm <= 32 or (tm == 40 and not sym.endswith("_pre_sl")) else 2
                    parts = min(264 // 12, 140 // ch // 2)
                    assert int(rec["split"]) in (parts, 132 // 12), (tag, rec)
                    assert int(rec["grid"].split(",")[0]) == 12 * int(rec["split"]), (tag, rec)
                assert not torch.isnan(a).any(), (tag, "unwritten outputs")
                total, col = errors(a, ref)
                assert total <= BOUND[dtype] and col <= 5 * BOUND[dtype], (tag, total, col)
                assert torch.equal(a, again), (tag, "a rerun differs")
                assert torch.equal(a, b), (tag, "the sliced sum and the last arriver's differ")
    finally:
        torch.ops.mate._force_variant(None)


# The 128-256-token tiles' sliced even split (kernels/bwg.cuh, kStagedOut with S >= 3 parts, one
# CTA each): each part keeps its own slice in shared memory and stores only the others' through
# L2. Llama-8B o's shape (32 tiles of 128, K = 4096): 4 parts a tile at 132 SMs, 3 at 100, 2 at
# 64 (the ticket: the form the sliced sum must stay close to).
@pytest.mark.parametrize("tm", [128, 256])
@pytest.mark.parametrize("dtype,sym", [(torch.float16, True), (torch.bfloat16, False)])
def test_prefill_tiles_sliced_split(tm, dtype, sym):
    dt = "bf16" if dtype == torch.bfloat16 else "f16"
    sym_name = f"mate_bwg_{dt}_{'sym' if sym else 'zp'}_m{tm}_n128_split_pre"
    K, N = 4096, 4096
    ck = random_gptq(K, N, 128, sym, dtype, "cuda")
    fr = frame_from_gptq_v2(ck)
    bias = torch.randn(N, device="cuda").to(dtype)
    try:
        torch.ops.mate._force_variant(sym_name)
        for M in (tm - 56, tm):
            x = torch.randn(M, K, device="cuda").to(dtype)
            ref = reference(ck, x, bias.double())
            outs = {}
            for sms, parts in ((132, 4), (100, 3), (64, 2)):
                run_out(x, fr, bias, num_sms=sms)  # module load outside the record
                (rec,) = records(lambda: run_out(x, fr, bias, num_sms=sms))
                tag = (sym_name, M, sms)
                assert rec["kernel"] == sym_name, (tag, rec)
                assert int(rec["split"]) == parts and int(rec["grid"].split(",")[0]) == 32 * parts, (tag, rec)
                a = run_out(x, fr, bias, num_sms=sms)
                assert not torch.isnan(a).any(), (tag, "unwritten outputs")
                total, col = errors(a, ref)
                assert total <= BOUND[dtype] and col <= 5 * BOUND[dtype], (tag, total, col)
                for _ in range(3):
                    assert torch.equal(a, run_out(x, fr, bias, num_sms=sms)), (tag, "a rerun differs")
                outs[parts] = a.float()
            # the sums differ only by rounding order between split counts
            for parts in (4, 3):
                assert (outs[parts] - outs[2]).abs().max() <= 4 * BOUND[dtype] * outs[2].abs().max(), (sym_name, M, parts)
    finally:
        torch.ops.mate._force_variant(None)
