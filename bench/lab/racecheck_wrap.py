"""One forced call whose CTA ring wraps (K = 4096: 8+ stages per item), for compute-sanitizer
racecheck. The sanitizer driver's shapes (K <= 1024) never wrap bulk's ring, so its clean bulk
runs say nothing about the refill; bwg's wrapping cases report hazards (bench/NOTES.md, session
5). On the GPU machine, from the repo root:
  MATE_LIBRARY=$PWD/target/release/libmate.so PYTORCH_NO_CUDA_MEMORY_CACHING=1 \
    compute-sanitizer --tool racecheck python3 bench/lab/racecheck_wrap.py mate_bulk_f16_sym_m16_n128_whole
(then the same with mate_bwg_f16_sym_m32_n128_whole). `SYMBOL@K` picks another K (a multiple of 64;
an odd number of chunks reaches the one-chunk last stages), `SYMBOL@K@SMS` also the SM count the
plan is sized for (fewer SMs: deeper split parts), `SYMBOL@K@SMS@SPLIT` also a forced split
(torch.ops.mate._force_split: more parts than the SMs hold makes the 128/256-token tiles stream-K;
0 = planned), `...@SPLIT@N@M` also the layer's N and the tokens (several tiles a CTA at few SMs)."""
import sys
sys.path[:0] = ["torch_ops", "tests/python"]
import torch, mate  # noqa
from checkpoints import random_gptq, frame_from_gptq_v2, run_out, reference, errors
for arg in sys.argv[1:]:  # one sanitizer start for several variants
    sym, *rest = arg.split("@")
    K = int(rest[0]) if rest else 4096
    sms = int(rest[1]) if len(rest) > 1 else None  # SYMBOL@K@SMS: the plan for that SM count
    torch.ops.mate._force_split(int(rest[2]) if len(rest) > 2 and int(rest[2]) > 0 else None)
    n_arg = int(rest[3]) if len(rest) > 3 else None
    m_arg = int(rest[4]) if len(rest) > 4 else None
    dt = torch.bfloat16 if "_bf16_" in sym else torch.float16
    ck = random_gptq(K, n_arg or (448 if "_n112_" in sym else 640 if "_n160_" in sym else 128), 128 if K % 128 == 0 else 64, "_sym_" in sym, dt, "cuda")
    fr = frame_from_gptq_v2(ck)
    tm = int(sym.split("_m")[1].split("_")[0])  # the variant's token tile
    x = torch.randn(m_arg or min(16, tm), K, device="cuda").to(dt)
    torch.ops.mate._force_variant(sym)
    out = run_out(x, fr) if sms is None else run_out(x, fr, num_sms=sms)
    torch.cuda.synchronize()
    print(sym, "err", errors(out, reference(ck, x, None))[0], flush=True)
