"""Demo: one W4A16 GEMM checked against the float64 reference and timed against fp16 matmul.

On a GPU: Llama-3-8B o_proj (K = N = 4096), group 128, symmetric, fp16, at M = 1, 16, 256, timed
as CUDA-graph device time over rotating weight copies (bench/timing.py). On the CPU: a smaller
shape, wall-clock. `--library PATH` loads a prebuilt libmate.so (the GPU machine has no Rust).
"""

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "torch_ops"), str(ROOT / "tests" / "python"), str(ROOT)]

ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument("--library", help="path to a prebuilt libmate.so")
ap.add_argument("--cpu", action="store_true", help="run on the CPU even if a GPU is present")
ap.add_argument("--json", help="also write the results here (GPU, commit, method, shapes)")
args = ap.parse_args()
if args.library:
    os.environ["MATE_LIBRARY"] = args.library

import torch  # noqa: E402

import mate  # noqa: E402
from checkpoints import BOUND, errors, frame_from_gptq_v2, random_gptq, reference, run_out  # noqa: E402

gpu = torch.cuda.is_available() and not args.cpu
dev = "cuda" if gpu else "cpu"
K, N, G = (4096, 4096, 128) if gpu else (1024, 1024, 128)
print(f"mate demo: library {mate.load()}")
print(f"device {torch.cuda.get_device_name() if gpu else 'cpu'}, K={K} N={N} group={G} symmetric fp16")

ck = random_gptq(K, N, G, True, torch.float16, dev)
fr = frame_from_gptq_v2(ck)
ok = True
rows = []
for M in (1, 16, 256):
    x = torch.randn(M, K, device=dev).half()
    out = run_out(x, fr)
    total, col = errors(out, reference(ck, x, None))
    passed = total <= BOUND[torch.float16] and col <= 5 * BOUND[torch.float16]
    ok &= passed
    w16 = torch.randn(N, K, device=dev).half()
    if gpu:
        from bench.timing import copies_for, graph_time_us

        n4 = copies_for(fr.qweight.numel() * 4)
        frames = [frame_from_gptq_v2(random_gptq(K, N, G, True, torch.float16, dev)) for _ in range(n4)]
        outs = torch.empty(M, N, device=dev).half()
        need = torch.ops.mate.w4a16_workspace_size(x, frames[0].meta)
        ws = torch.zeros(need, dtype=torch.uint8, device=dev) if need else None
        t4 = graph_time_us([lambda f=f: run_out(x, f, out=outs, workspace=ws) for f in frames])["median_us"]
        ws = [torch.randn(N, K, device=dev).half() for _ in range(copies_for(w16.numel() * 2))]
        t16 = graph_time_us([lambda w=w: torch.nn.functional.linear(x, w) for w in ws])["median_us"]
        del frames, ws
    else:
        reps = 5
        t0 = time.perf_counter()
        for _ in range(reps):
            run_out(x, fr)
        t4 = (time.perf_counter() - t0) / reps * 1e6
        t0 = time.perf_counter()
        for _ in range(reps):
            torch.nn.functional.linear(x, w16)
        t16 = (time.perf_counter() - t0) / reps * 1e6
    rows.append(dict(M=M, K=K, N=N, group=G, rel_err=total, worst_col_err=col, passed=passed, w4a16_us=t4, fp16_us=t16))
    print(
        f"M={M:5d}  rel.err {total:.2e} (worst column {col:.2e}) {'ok' if passed else 'FAIL'}   "
        f"w4a16 {t4:9.1f} us   fp16 matmul {t16:9.1f} us   ratio {t16 / t4:5.2f}x"
    )
print("timing:", "CUDA-graph device time, rotating weights, median" if gpu else "CPU wall clock, mean of 5")
if args.json:
    import json
    import subprocess

    commit = os.environ.get("MATE_COMMIT") or subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    Path(args.json).write_text(json.dumps(dict(
        what="scripts/demo.py", gpu=torch.cuda.get_device_name() if gpu else "cpu", commit=commit,
        date=time.strftime("%Y-%m-%d"), torch=torch.__version__,
        method="CUDA graph of back-to-back calls over rotating weight copies (>= 10x L2), 2 warm-up + 7 timed replays, median per call"
        if gpu else "CPU wall clock, mean of 5 calls",
        config="group 128, symmetric, fp16, no act order, no bias", rows=rows), indent=1))
sys.exit(0 if ok else 1)
