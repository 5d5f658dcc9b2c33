"""Lab: how the SM clock falls once a prefill GEMM runs back to back (the graph method's warm-up
length). On the GPU machine, from the repo root:
    MATE_LIBRARY=$PWD/target/release/libmate.so python3 bench/lab/clock_ramp.py K N M SECONDS [ARMS]
Each arm (mate, fp16 by default): its rotating-copy graph (bench/decode.py's), 300 ms idle, then
replays back to back for SECONDS; prints (t_ms, us per call, SM MHz) every ~50 ms of the run."""
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "torch_ops"), str(ROOT / "tests" / "python")]
import torch  # noqa: E402

import mate  # noqa: E402,F401
from bench import arms as A  # noqa: E402
from bench.timing import capture, copies_for, sm_clock_reader  # noqa: E402

K, N, M = map(int, sys.argv[1:4])
secs = float(sys.argv[4])
names = sys.argv[5].split(",") if len(sys.argv) > 5 else ["mate", "fp16"]
clock = sm_clock_reader()
x = torch.randn(M, K, device="cuda").half()
for name in names:
    arm = A.build(name, K, N, 128, torch.float16, "cuda", copies=copies_for(A.mate_bytes(K, N, 128, False)))
    calls = arm.calls(x)
    g = capture(calls)
    torch.cuda.synchronize()
    time.sleep(0.3)
    t0, rows, last = time.perf_counter(), [], -1e9
    while time.perf_counter() - t0 < secs:
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        g.replay()
        b.record()
        b.synchronize()
        t = (time.perf_counter() - t0) * 1e3
        if t - last >= 50:
            rows.append((t, a.elapsed_time(b) * 1e3 / len(calls), clock() if clock else None))
            last = t
    print(f"{name} K={K} N={N} M={M} calls/replay={len(calls)}: " + "  ".join(f"{t:.0f}ms {u:.1f}us {c}MHz" for t, u, c in rows), flush=True)
    del g, arm, calls
    torch.cuda.empty_cache()
