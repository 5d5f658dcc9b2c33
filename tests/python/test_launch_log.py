"""The launch debug hook (torch.ops.mate._launch_log): each launch records its kernel, grid and
the SM count and split its plan was sized for, so these tests can check that the launcher passes
the SM count resolved per call (call override, then set_num_sms, then the device)."""

import pytest
import torch

from checkpoints import frame_from_gptq_v2, random_gptq, run_out


def records(fn):
    torch.ops.mate._launch_log(True)
    try:
        fn()
        if torch.cuda.is_available():
            torch.cuda.synchronize()
    finally:
        log = torch.ops.mate._launch_log(False)
    return [dict(kv.split("=", 1) for kv in r.split()) for r in log]


def test_cpu_calls_record_nothing():
    ck = random_gptq(128, 64, 64, True, torch.float16, "cpu")
    fr = frame_from_gptq_v2(ck)
    assert records(lambda: run_out(torch.randn(2, 128).half(), fr)) == []


@pytest.mark.gpu
@pytest.mark.parametrize("M,K,N", [(1, 8960, 1536), (256, 4096, 4096)])  # a split decode (bulk) plan; a wgmma plan
def test_launcher_passes_the_resolved_sm_count(M, K, N):
    device_sms = torch.cuda.get_device_properties(0).multi_processor_count
    ck = random_gptq(K, N, 128, True, torch.float16, "cuda")
    fr = frame_from_gptq_v2(ck)
    x = torch.randn(M, K, device="cuda").half()
    run_out(x, fr)  # module load outside the recording
    try:
        torch.ops.mate.set_num_sms(24)
        (lim,) = records(lambda: run_out(x, fr))
        (call,) = records(lambda: run_out(x, fr, num_sms=9))
        torch.ops.mate.set_num_sms(None)
        (dev,) = records(lambda: run_out(x, fr))
    finally:
        torch.ops.mate.set_num_sms(None)
    assert (int(lim["sms"]), int(call["sms"]), int(dev["sms"])) == (24, 9, device_sms)
    assert dev["kernel"] in torch.ops.mate._variants()
    # the split follows the SM count: fewer SMs never get a larger split, and the grid is the plan's
    splits = [int(r["split"]) for r in (call, lim, dev)]
    assert splits == sorted(splits), splits
    if M == 1:  # the decode plan sizes its split by the SM count: strictly fewer at 9 SMs
        assert splits[0] < splits[2], f"the split does not depend on the SM count: {splits}"


@pytest.mark.gpu
@pytest.mark.parametrize("M", [1, 8])
def test_tiles_between_sms_and_slots_take_stream_k(M):
    """1-8 tokens in 128-feature tiles where the tiles outnumber the SMs but not the two slots an
    SM (whole tiles would leave some SMs two CTAs, the rest one): the routed plan is stream-K over
    every slot (src/plan/bulk.rs bulk_split), right against float64 and bitwise the same on a rerun."""
    from checkpoints import BOUND, errors, reference

    sms = torch.cuda.get_device_properties(0).multi_processor_count
    K, N = 8192, 128 * (sms + sms // 8)  # 148 tiles on 132 SMs
    ck = random_gptq(K, N, 128, True, torch.float16, "cuda")
    fr = frame_from_gptq_v2(ck)
    x = torch.randn(M, K, device="cuda").half()
    (rec,) = records(lambda: run_out(x, fr))
    assert rec["kernel"].endswith("_split") and rec["grid"] == f"{2 * sms},1,1", rec
    a, b = run_out(x, fr), run_out(x, fr)
    total, worst = errors(a, reference(ck, x, None))
    assert total <= BOUND[torch.float16] and worst <= 5 * BOUND[torch.float16], (total, worst)
    assert torch.equal(a, b)


@pytest.mark.gpu
@pytest.mark.parametrize("M,dtype,sym", [(1, torch.float16, True), (5, torch.bfloat16, True), (3, torch.float16, False), (12, torch.bfloat16, False)])
def test_whole_tiles_between_sms_and_slots_take_112_features(M, dtype, sym):
    """1-16 tokens where whole 128-feature tiles outnumber the SMs (the stream-K test declines: a
    K of two stages) and 112-feature tiles fit the slots (160-feature ones would not fit one round
    of the SMs): the routed plan is the 8 / 16-token tile, 112 features wide, one tile a CTA
    (src/plan/bulk.rs bulk_whole_tile), right against float64 with a bias and bitwise the same on
    a rerun."""
    from checkpoints import BOUND, errors, reference

    sms = torch.cuda.get_device_properties(0).multi_processor_count
    # 2 x SMs 112-feature tiles, 1.75 x SMs 128-feature ones of 4 stages (stream-K would save none);
    # >= 2^25 weights, so one token takes 128-feature tiles at all (bulk_tile_features)
    K, N = 2048, 112 * 2 * sms
    ck = random_gptq(K, N, 128, sym, dtype, "cuda")  # zero points: every tile's own (odd and even tiles)
    fr = frame_from_gptq_v2(ck)
    x = torch.randn(M, K, device="cuda").to(dtype)
    bias = torch.randn(N, device="cuda").to(dtype)
    (rec,) = records(lambda: run_out(x, fr, bias))
    tm = 8 if M <= 8 else 16
    assert rec["kernel"].endswith(f"_m{tm}_n112_whole") and rec["grid"] == f"{2 * sms},1,1", rec
    a, b = run_out(x, fr, bias), run_out(x, fr, bias)
    total, worst = errors(a, reference(ck, x, bias))
    assert total <= BOUND[dtype] and worst <= 5 * BOUND[dtype], (total, worst)
    assert torch.equal(a, b)


@pytest.mark.gpu
@pytest.mark.parametrize("M,dtype,sym", [(4, torch.float16, True), (12, torch.bfloat16, False), (16, torch.float16, True)])
def test_whole_tiles_that_fit_one_round_of_160_features_take_it(M, dtype, sym):
    """2-16 tokens where whole 128-feature tiles outnumber the SMs and 160-feature tiles fit one
    round of them (Qwen2-1.5B gate_up's case): the routed plan is the 8 / 16-token tile, 160
    features wide, one CTA an SM (src/plan/bulk.rs bulk_whole_tile), right against float64 with a
    bias and bitwise the same on a rerun."""
    from checkpoints import BOUND, errors, reference

    sms = torch.cuda.get_device_properties(0).multi_processor_count
    # one 160-feature tile per SM (an even count: N % 64 == 0), 1.25 x as many 128-feature tiles
    # of 3 stages (whole: stream-K would save one); > 2^24 weights, so 2-16 tokens take bulk's
    # 128-feature tiles (prefer_bulk)
    tiles = sms - sms % 2
    K, N = 1536, 160 * tiles
    ck = random_gptq(K, N, 128, sym, dtype, "cuda")
    fr = frame_from_gptq_v2(ck)
    x = torch.randn(M, K, device="cuda").to(dtype)
    bias = torch.randn(N, device="cuda").to(dtype)
    (rec,) = records(lambda: run_out(x, fr, bias))
    tm = 8 if M <= 8 else 16
    assert rec["kernel"].endswith(f"_m{tm}_n160_whole") and rec["grid"] == f"{tiles},1,1", rec
    a, b = run_out(x, fr, bias), run_out(x, fr, bias)
    total, worst = errors(a, reference(ck, x, bias))
    assert total <= BOUND[dtype] and worst <= 5 * BOUND[dtype], (total, worst)
    assert torch.equal(a, b)


@pytest.mark.gpu
def test_forced_split_plans_in_process_and_restores():
    """torch.ops.mate._force_split: every later bulk / bwg plan takes that split (the launch record
    shows it, the result stays right and rerun-stable), the plan cache neither serves the routed
    plan while it is set nor keeps the forced one after it is cleared."""
    from checkpoints import BOUND, errors, reference

    # Llama-8B down and K = 8192 x N = 4096: 32 tiles of 128 features; 256-token tiles split 4 ways,
    # 16-token tiles split 8 ways (the ticket; Llama-8B o at M = 16 is dect's since session 42)
    for K, M, routed in ((14336, 256, 4), (8192, 16, 8)):
        ck = random_gptq(K, 4096, 128, True, torch.float16, "cuda")
        fr = frame_from_gptq_v2(ck)
        x = torch.randn(M, K, device="cuda").half()
        ref = reference(ck, x, None)
        run_out(x, fr)  # module load and a cached routed plan
        try:
            seen = {}
            for forced in (None, 2, 1, None):
                torch.ops.mate._force_split(forced)
                (rec,) = records(lambda: run_out(x, fr))
                y = run_out(x, fr)
                total, col = errors(y, ref)
                assert total <= BOUND[torch.float16] and col <= 5 * BOUND[torch.float16], (M, forced, total, col)
                assert torch.equal(y, run_out(x, fr)), (M, forced, "a rerun differs")
                seen.setdefault(forced, []).append((int(rec["split"]), rec["grid"].split(",")[0]))
        finally:
            torch.ops.mate._force_split(None)
        assert seen[None] == [(routed, str(32 * routed))] * 2, (M, seen)  # routed before and after
        assert seen[2] == [(2, "64")] and seen[1] == [(1, "32")], (M, seen)


@pytest.mark.gpu
@pytest.mark.parametrize("M", [16, 32])
def test_one_cta_an_sm_split_runs_alone(M):
    """bwg's one-CTA-an-SM even split (src/plan/bwg.rs bwg_one_an_sm) launches with an SM's shared
    memory (Plan::alone), so no other CTA shares its SMs: Qwen2-1.5B down (12 tiles of 128
    features) at M = 16 / 32 takes sms / 12 parts of one CTA each, asks for more than half an SM's
    shared memory, and is right against float64 and bitwise the same on a rerun. A whole-tile plan
    asks for its variant's own."""
    from checkpoints import BOUND, errors, reference

    props = torch.cuda.get_device_properties(0)
    if props.major != 9:
        pytest.skip("the bwg family is Hopper's (sm_90a)")
    sms = props.multi_processor_count
    K, N = 8960, 1536
    ck = random_gptq(K, N, 128, True, torch.float16, "cuda")
    fr = frame_from_gptq_v2(ck)
    x = torch.randn(M, K, device="cuda").half()
    (rec,) = records(lambda: run_out(x, fr))
    parts = sms // 12
    assert rec["kernel"].startswith("mate_bwg_") and rec["split"] == str(parts), rec
    assert rec["grid"] == f"{12 * parts},1,1" and rec["alone"] == "1", rec
    assert int(rec["smem"]) > props.shared_memory_per_multiprocessor // 2, rec
    a, b = run_out(x, fr), run_out(x, fr)  # into NaN-poisoned outputs
    total, worst = errors(a, reference(ck, x, None))
    assert total <= BOUND[torch.float16] and worst <= 5 * BOUND[torch.float16], (total, worst)
    assert torch.equal(a, b)
    wide = random_gptq(1536, 17920, 128, True, torch.float16, "cuda")  # Qwen2-1.5B gate_up: whole tiles
    (whole,) = records(lambda: run_out(x[:, :1536].contiguous(), frame_from_gptq_v2(wide)))
    assert whole["alone"] == "0", whole
