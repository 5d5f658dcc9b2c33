"""bwg's paired even split (src/plan/bwg.rs bwg_paired, kernels/bwg.cuh): 128-256-token tiles in two
parts, one CTA each, launched in 2-CTA clusters whose two CTAs are the two parts of a
tile and sum their partials through distributed shared memory, in the ticket's order: bit for bit
what the last arriver sums in the same plan unpaired (torch.ops.mate._pairs(False)). Against
float64 on NaN-poisoned outputs, and reruns bitwise."""

import pytest
import torch

from checkpoints import BOUND, errors, frame_from_gptq_v2, random_gptq, reference, run_out
from test_launch_log import records

pytestmark = pytest.mark.gpu

K, N = 4096, 4096  # 32 tiles of 128 features


def _setup(tm, dtype, sym, k=K):
    dt = "bf16" if dtype == torch.bfloat16 else "f16"
    name = f"mate_bwg_{dt}_{'sym' if sym else 'zp'}_m{tm}_n128_split_pre"
    ck = random_gptq(k, N, 128 if k % 128 == 0 else 64, sym, dtype, "cuda")
    return name, ck, frame_from_gptq_v2(ck), torch.randn(N, device="cuda").to(dtype)


def _checked(tag, a, ref, dtype, again):
    assert not torch.isnan(a).any(), (tag, "unwritten outputs")
    total, col = errors(a, ref)
    assert total <= BOUND[dtype] and col <= 5 * BOUND[dtype], (tag, total, col)
    for _ in range(3):
        assert torch.equal(a, again()), (tag, "a rerun differs")


# K = 4160 (65 chunks): the parts end on different ring slots (16 and 17 stages), so the slot
# that receives the partner's half is the third one. 144 / 240 tokens: halves of unequal size
# (18 / 30 pieces of 8 rows split 10 + 8 / 16 + 14, each even for the epilogue's stmatrix pairs).
@pytest.mark.parametrize("k", [K, 4160])
@pytest.mark.parametrize("tm", [128, 144, 240, 256])
@pytest.mark.parametrize("dtype,sym", [(torch.float16, True), (torch.bfloat16, False)])
def test_two_parts_paired_match_the_ticket_bitwise(tm, dtype, sym, k):
    name, ck, fr, bias = _setup(tm, dtype, sym, k)
    try:
        torch.ops.mate._force_variant(name)
        torch.ops.mate._force_split(2)
        for M in (tm - 37, tm, 2 * tm - 5):  # one or two m-tiles: 64 / 128 CTAs at 132 SMs
            x = torch.randn(M, k, device="cuda").to(dtype)
            ref = reference(ck, x, bias.double())
            outs = {}
            for pairs, cluster in ((True, "2"), (False, "1")):  # the same plan paired, or the ticket
                torch.ops.mate._pairs(pairs)
                run_out(x, fr, bias)  # module load outside the record
                (rec,) = records(lambda: run_out(x, fr, bias))
                tag = (name, M, pairs)
                assert rec["kernel"] == name and rec["split"] == "2" and rec["cluster"] == cluster, (tag, rec)
                assert (rec["workspace"] == "0") == pairs, (tag, rec)  # a pair's partials stay in shared memory
                a = run_out(x, fr, bias)
                _checked(tag, a, ref, dtype, lambda: run_out(x, fr, bias))
                outs[cluster] = a
            assert torch.equal(outs["2"], outs["1"]), (name, M, "the pairs' sums differ from the ticket's")
    finally:
        torch.ops.mate._pairs(True)
        torch.ops.mate._force_split(None)
        torch.ops.mate._force_variant(None)


def test_four_parts_are_not_paired():
    """Four parts a tile keep the sliced exchange through L2 (a pair step before it measured slower)."""
    name, ck, fr, bias = _setup(256, torch.float16, True)
    x = torch.randn(200, K, device="cuda").half()
    try:
        torch.ops.mate._force_variant(name)
        torch.ops.mate._force_split(4)
        run_out(x, fr, bias)
        (rec,) = records(lambda: run_out(x, fr, bias))
        assert rec["split"] == "4" and rec["grid"].startswith("128,") and rec["cluster"] == "1", rec
    finally:
        torch.ops.mate._force_split(None)
        torch.ops.mate._force_variant(None)


def test_routed_two_part_plan_is_paired():
    """Llama-70B o at M = 128 (64 tiles, 2 parts on 132 SMs) is planned paired."""
    K70 = N70 = 8192
    ck = random_gptq(K70, N70, 128, True, torch.float16, "cuda")
    fr = frame_from_gptq_v2(ck)
    x = torch.randn(128, K70, device="cuda").half()
    run_out(x, fr, num_sms=132)
    (rec,) = records(lambda: run_out(x, fr, num_sms=132))
    assert rec["split"] == "2" and rec["grid"].startswith("128,") and rec["cluster"] == "2", rec
    total, col = errors(run_out(x, fr, num_sms=132), reference(ck, x, None))
    assert total <= BOUND[torch.float16] and col <= 5 * BOUND[torch.float16], (total, col)
