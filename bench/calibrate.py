"""Measures the constants of the wgmma family's cost model (src/plan/cost.rs) on this GPU and
writes them as the data file the planner is built with:

    python3 bench/calibrate.py --library target/release/libmate.so --write src/plan/calibration-h200.txt

Method (device time, CUDA graph over rotating weight copies, bench/timing.py): for each token tile
TM, the whole-K variant is forced on exactly one wave of CTAs (M = TM, N = 128 x SMs) at two depths
K1 < K2; the per-chunk time is the slope, the fixed cost per CTA the intercept. The per-chunk times
are fitted as issue + mma_per_token x TM. The split variant is then timed on a quarter wave of
tiles with the split the planner picks (read from the launch log); what the model without the
reduction term does not explain is the reduction's cost per split and token. HBM bandwidth is the
pure-read anchor of ../shared/anchors (not re-measured here)."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "torch_ops"), str(ROOT / "tests" / "python"), str(ROOT)]

HBM_BYTES_PER_NS = 4000.0  # anchors: 4.46 TB/s streaming read; ~90 % reached by large reads
TILES = (64, 128, 256)
K1, K2 = 2048, 8192


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--library")
    ap.add_argument("--write", help="data file to write (else print only)")
    args = ap.parse_args()
    if args.library:
        os.environ["MATE_LIBRARY"] = args.library
    import torch

    import mate  # noqa: F401
    from bench.timing import copies_for, graph_time_us
    from checkpoints import pack_frame_v2

    sms = torch.cuda.get_device_properties(0).multi_processor_count
    G = 128

    def frames(K, N, copies):
        out = []
        for _ in range(copies):
            qw = pack_frame_v2(torch.randint(0, 16, (K, N), device="cuda"))
            s = (torch.rand(K // G, N, device="cuda") * 0.02 + 0.002).half()
            out.append((qw, torch.ops.mate.frame_meta(K, N, G, False, False), s))
        return out

    def timed(sym, M, K, N):
        fr = frames(K, N, copies_for(K * N // 2 + K // G * N * 2))
        x = torch.randn(M, K, device="cuda").half()
        out = torch.empty(M, N, device="cuda").half()
        torch.ops.mate._force_variant(sym)
        try:
            need = torch.ops.mate.w4a16_workspace_size(x, fr[0][1])
            ws = torch.zeros(max(need, 1), dtype=torch.uint8, device="cuda")
            call = lambda f: torch.ops.mate.w4a16_gemm.out(x, f[0], f[1], f[2], None, None, None, G, workspace=ws, out=out)  # noqa: E731
            call(fr[0])
            torch.ops.mate._launch_log(True)
            call(fr[0])
            torch.cuda.synchronize()
            (rec,) = torch.ops.mate._launch_log(False)
            t = graph_time_us([lambda f=f: call(f) for f in fr])["median_us"] * 1e3
        finally:
            torch.ops.mate._force_variant(None)
        return t, dict(kv.split("=", 1) for kv in rec.split())

    per_chunk, fixed = {}, {}
    for tm in TILES:
        sym = f"mate_wg_f16_sym_m{tm}_whole"
        t1, _ = timed(sym, tm, K1, 128 * sms)
        t2, _ = timed(sym, tm, K2, 128 * sms)
        per_chunk[tm] = (t2 - t1) / ((K2 - K1) // 64)
        fixed[tm] = t1 - (K1 // 64) * per_chunk[tm]
        print(f"tm={tm:3d}: {t1 / 1e3:8.2f} us at K={K1}, {t2 / 1e3:8.2f} us at K={K2}: {per_chunk[tm]:7.1f} ns/chunk, fixed {fixed[tm]:7.1f} ns", flush=True)
    # least squares: per_chunk = issue + mma * tm
    n = len(TILES)
    sx, sy = sum(TILES), sum(per_chunk.values())
    sxx, sxy = sum(t * t for t in TILES), sum(t * per_chunk[t] for t in TILES)
    mma = (n * sxy - sx * sy) / (n * sxx - sx * sx)
    issue = max(0.0, (sy - mma * sx) / n)
    fixed_ns = max(0.0, sum(fixed.values()) / n)
    # reduction: one quarter wave of tiles, split chosen by the planner
    tm = 128
    N = 128 * (sms // 4)
    t, rec = timed(f"mate_wg_f16_sym_m{tm}_split", tm, K2, N)
    s = int(rec["split"])
    chunks = K2 // 64
    tiles = N // 128
    waves = -(-(tiles * s) // sms)
    predicted = waves * (fixed_ns + -(-chunks // s) * (issue + mma * tm))
    reduce_ns = max(0.0, (t - predicted) / (s * tm))
    print(f"split: tm={tm} tiles={tiles} split={s}: {t / 1e3:.2f} us, model without reduction {predicted / 1e3:.2f} us -> {reduce_ns:.2f} ns per split per token", flush=True)
    commit = os.environ.get("MATE_COMMIT") or subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    text = (
        "# Constants of the wgmma family's cost model (src/plan/cost.rs), in nanoseconds and bytes.\n"
        "# Written by `python3 bench/calibrate.py --write src/plan/calibration-h200.txt` on the GPU.\n"
        f"# per chunk (ns): {', '.join(f'tm={k}: {v:.1f}' for k, v in per_chunk.items())}; fixed (ns): "
        f"{', '.join(f'tm={k}: {v:.0f}' for k, v in fixed.items())}\n"
        f"gpu = {torch.cuda.get_device_name()} ({sms} SMs)\n"
        f"date = {time.strftime('%Y-%m-%d')}\n"
        f"commit = {commit or 'unknown'}\n"
        f"wg.fixed_ns = {fixed_ns:.1f}\n"
        f"wg.mma_ns_per_token = {mma:.3f}\n"
        f"wg.issue_ns = {issue:.1f}\n"
        f"wg.hbm_bytes_per_ns = {HBM_BYTES_PER_NS:.0f}\n"
        f"wg.reduce_ns_per_token = {reduce_ns:.3f}\n"
    )
    print(text)
    if args.write:
        Path(args.write).write_text(text)


if __name__ == "__main__":
    main()
