"""Lab: the SM clock and power while one GEMM runs back to back (is prefill clock/power bound?).
On the GPU machine, from the repo root:
    MATE_LIBRARY=$PWD/target/release/libmate.so python3 bench/lab/clock_probe.py K N M [ARMS]
(ARMS: a comma list of mate, fp16; both by default). Runs mate (g128 sym fp16, random frame) and cuBLAS fp16 (F.linear) ~3 s each, NVML samples every
20 ms in a thread; prints per arm: median SM clock (MHz), median power (W), us per call (events)."""
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "torch_ops"), str(ROOT / "tests" / "python")]
sys.path.insert(0, str(ROOT / "bench"))
import pynvml  # noqa: E402
import torch  # noqa: E402

from random_frame import random_call  # noqa: E402

K, N, M = map(int, sys.argv[1:4])
f = random_call(K, N, M)
w16 = torch.randn(N, K, device="cuda").half()
arms = {"mate": f.call, "fp16": lambda: torch.nn.functional.linear(f.x, w16)}
if len(sys.argv) > 4:
    arms = {a: arms[a] for a in sys.argv[4].split(",")}
pynvml.nvmlInit()
h = pynvml.nvmlDeviceGetHandleByIndex(torch.cuda.current_device())
for name, fn in arms.items():
    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    samples, stop = [], threading.Event()

    def sample():
        while not stop.is_set():
            samples.append((pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM), pynvml.nvmlDeviceGetPowerUsage(h) / 1000))
            time.sleep(0.02)

    t = threading.Thread(target=sample)
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    t.start()
    t0, calls = time.time(), 0
    e0.record()
    while time.time() - t0 < 3.0:
        for _ in range(50):
            fn()
        calls += 50
        torch.cuda.synchronize()
    e1.record()
    torch.cuda.synchronize()
    stop.set()
    t.join()
    steady = samples[len(samples) // 3:]  # after the first second
    print(f"{name}: K={K} N={N} M={M} SM clock median {statistics.median(c for c, _ in steady):.0f} MHz "
          f"(min {min(c for c, _ in steady)}, max {max(c for c, _ in steady)}), power median {statistics.median(p for _, p in steady):.0f} W, "
          f"{e0.elapsed_time(e1) * 1000 / calls:.1f} us a call (warm L2, back to back)", flush=True)
