"""Decode-path benchmark (M <= 64): per-call device time in a CUDA graph of back-to-back calls over
rotating weight copies (>= 10x L2), median of 7 replays after warm-up (bench/timing.py).

Arms, all in one run: `read` (a pure streaming read of the bytes the GEMM must read: qweight +
scales (+ zeros), Triton), `mate` (torch.ops.mate.w4a16_gemm.out), `fp16` / `bf16`
(torch.nn.functional.linear). Headline config: group 128, symmetric, fp16, no act order.

    python3 bench/decode.py --library target/release/libmate.so --json OUT.json [--png OUT.png]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "torch_ops"), str(ROOT / "tests" / "python"), str(ROOT)]

SHAPES = {  # name: (K, N)
    "llama8b.qkv": (4096, 6144),
    "llama8b.o": (4096, 4096),
    "llama8b.gate_up": (4096, 28672),
    "llama8b.down": (14336, 4096),
    "llama70b.qkv": (8192, 10240),
    "llama70b.o": (8192, 8192),
    "llama70b.gate_up": (8192, 57344),
    "llama70b.down": (28672, 8192),
    "qwen1.5b.qkv": (1536, 2048),
    "qwen1.5b.o": (1536, 1536),
    "qwen1.5b.gate_up": (1536, 17920),
    "qwen1.5b.down": (8960, 1536),
}
M_LIST = [1, 2, 4, 8, 16, 32, 64]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--library")
    ap.add_argument("--json")
    ap.add_argument("--png")
    ap.add_argument("--shapes", default=",".join(SHAPES))
    ap.add_argument("--m", default=",".join(map(str, M_LIST)))
    ap.add_argument("--arms", default="read,mate,fp16,bf16")
    ap.add_argument("--group", type=int, default=128)
    ap.add_argument("--zp", action="store_true")
    ap.add_argument("--dtype", default="float16")
    ap.add_argument("--variants", default="", help="comma list of variant symbols (or 'dec') to force as extra arms")
    args = ap.parse_args()
    if args.library:
        os.environ["MATE_LIBRARY"] = args.library
    import torch
    import triton

    import mate  # noqa: F401
    from bench.timing import copies_for, graph_time_us
    from checkpoints import pack_cols, pack_frame_v2

    from bench.stream_read import read_kernel as _read  # shared with bench/e2e.py

    dtype = getattr(torch, args.dtype)
    arms = args.arms.split(",")
    rows = []
    for name in args.shapes.split(","):
        K, N = SHAPES[name]
        G = K if args.group == -1 else args.group
        w_bytes = K * N // 2 + (K // G) * N * 2 + ((K // G) * N // 2 if args.zp else 0)
        R = copies_for(w_bytes)
        frames = []
        for _ in range(R):
            q = torch.randint(0, 16, (K, N), device="cuda")
            qw = pack_frame_v2(q)
            del q
            s = (torch.rand(K // G, N, device="cuda") * 0.02 + 0.002).to(dtype)
            z = pack_cols(torch.randint(0, 16, (K // G, N), device="cuda")) if args.zp else None
            meta = torch.ops.mate.frame_meta(K, N, args.group, args.zp, False)
            frames.append((qw, meta, s, z))
        # the read arm reads one buffer per copy with the same byte count
        read_bufs = [torch.randint(-(2**31), 2**31 - 1, (w_bytes // 4,), dtype=torch.int32, device="cuda") for _ in range(R)]
        BLOCK = 4096
        sink = torch.empty(triton.cdiv(w_bytes // 4, BLOCK), dtype=torch.int32, device="cuda")
        dense = None
        for M in map(int, args.m.split(",")):
            x = torch.randn(M, K, device="cuda").to(dtype)
            out = torch.empty(M, N, device="cuda", dtype=dtype)
            res = dict(shape=name, K=K, N=N, M=M, group=args.group, zp=args.zp, dtype=args.dtype, copies=R, bytes=w_bytes)
            if "read" in arms:
                calls = [lambda b=b: _read[(triton.cdiv(b.numel(), BLOCK),)](b, sink, b.numel(), BLOCK=BLOCK, num_warps=8) for b in read_bufs]
                res["read"] = graph_time_us(calls)
            if "mate" in arms:
                need = torch.ops.mate.w4a16_workspace_size(x, frames[0][1])
                ws = torch.zeros(max(need, 1), dtype=torch.uint8, device="cuda") if need else None
                calls = [lambda f=f: torch.ops.mate.w4a16_gemm.out(x, f[0], f[1], f[2], f[3], None, None, args.group, workspace=ws, out=out) for f in frames]
                res["mate"] = graph_time_us(calls)
                res["workspace_bytes"] = need
            forced = [v for v in torch.ops.mate._variants() if args.variants == "dec" and "_dec_" in v] if args.variants == "dec" else [v for v in args.variants.split(",") if v]
            for sym in forced:
                try:
                    torch.ops.mate._force_variant(sym)
                    need = torch.ops.mate.w4a16_workspace_size(x, frames[0][1])
                    ws = torch.zeros(max(need, 1), dtype=torch.uint8, device="cuda")
                    calls = [lambda f=f: torch.ops.mate.w4a16_gemm.out(x, f[0], f[1], f[2], f[3], None, None, args.group, workspace=ws, out=out) for f in frames]
                    res[sym] = graph_time_us(calls)
                except Exception as e:  # a variant that cannot serve this M / dtype
                    pass
                finally:
                    torch.ops.mate._force_variant(None)
            if forced:
                best = sorted((res[k]["median_us"], k) for k in res if k.startswith("mate_"))
                print(f"   {name} M={M}: " + "  ".join(f"{k.replace('mate_dec_', '')}={t:.2f}" for t, k in best[:6]), flush=True)
            for arm, dt in (("fp16", torch.float16), ("bf16", torch.bfloat16)):
                if arm in arms:
                    if dense is None or dense[0].dtype != dt:
                        dense = None
                        torch.cuda.empty_cache()
                        dense = [torch.randn(N, K, device="cuda", dtype=dt) for _ in range(copies_for(N * K * 2))]
                    xd = x.to(dt)
                    res[arm] = graph_time_us([lambda w=w: torch.nn.functional.linear(xd, w) for w in dense])
            rows.append(res)
            line = f"{name:18s} M={M:3d}"
            for arm in arms:
                if arm in res:
                    line += f"  {arm} {res[arm]['median_us']:8.2f}"
            if "read" in res and "mate" in res:
                line += f"  mate/read {res['mate']['median_us'] / res['read']['median_us']:5.2f}"
            if "fp16" in res and "mate" in res:
                line += f"  fp16/mate {res['fp16']['median_us'] / res['mate']['median_us']:5.2f}"
            print(line, flush=True)
        del frames, read_bufs, dense
        torch.cuda.empty_cache()
    if args.json:
        commit = os.environ.get("MATE_COMMIT") or subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
        Path(args.json).write_text(json.dumps(dict(
            what="bench/decode.py", gpu=torch.cuda.get_device_name(), commit=commit, date=time.strftime("%Y-%m-%d"),
            torch=torch.__version__,
            method="CUDA graph of back-to-back calls over rotating weight copies (>= 10x 60 MB L2), 2 warm-up + 7 timed replays; per-call median/min/max (us)",
            rows=rows), indent=1))
    if args.png:
        plot(rows, args.png)


def plot(rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    shapes = list(dict.fromkeys(r["shape"] for r in rows))
    fig, axes = plt.subplots(3, 4, figsize=(16, 10), squeeze=False)
    for ax, sh in zip(axes.flat, shapes):
        rs = [r for r in rows if r["shape"] == sh]
        for arm in ("read", "mate", "fp16", "bf16"):
            if arm in rs[0]:
                ax.plot([r["M"] for r in rs], [r[arm]["median_us"] for r in rs], marker="o", label=arm)
        ax.set_xscale("log", base=2)
        ax.set_title(sh)
        ax.set_xlabel("M")
        ax.set_ylabel("us / call")
    axes.flat[0].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=80)


if __name__ == "__main__":
    main()
