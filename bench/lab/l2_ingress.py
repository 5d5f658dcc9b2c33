"""Lab: is the multi-token GEMM bound by the bytes entering the SMs (weights from HBM plus the
activation re-read from L2 by every 128-feature tile)?

A 128-feature tile reads x (M x K halves) once per tile, so the L2 -> SM traffic of x is
M / 32 times the weight bytes (M = 16: 0.5, 32: 1, 64: 2). This streams, in one graph over
rotating weight copies, the weight bytes alone, an L2-resident x buffer alone (re-read that many
times), and both together in that ratio, and reports the time and the bytes per second. If the
combined arm takes about as long as the GEMM at that M, the x re-reads are the floor the tile
shape sets, and instruction tuning cannot go below it.

    python3 bench/lab/l2_ingress.py [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import torch
import triton
import triton.language as tl

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from timing import copies_for, graph_time_us  # noqa: E402

BLOCK = 4096  # int32 words a block (16 KB)


@triton.jit
def _mixed(w_ptr, x_ptr, out, x_blocks, WB: tl.constexpr, XB: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.int32)
    for j in tl.static_range(WB):
        offs = (pid.to(tl.int64) * WB + j) * BLOCK + tl.arange(0, BLOCK)
        acc ^= tl.load(w_ptr + offs, cache_modifier=".cg")
    for j in tl.static_range(XB):
        b = (pid * XB + j) % x_blocks
        offs = b.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        acc ^= tl.load(x_ptr + offs, cache_modifier=".cg")
    tl.store(out + pid, tl.xor_sum(acc, 0))


SHAPES = {
    "llama8b.gate_up": (4096, 28672),
    "llama8b.down": (14336, 4096),
    "llama70b.gate_up": (8192, 57344),
    "llama70b.down": (28672, 8192),
}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    ap.add_argument("--m", default="16,32,64")
    args = ap.parse_args()
    dev = torch.device("cuda")
    rows = []
    for name, (k, n) in SHAPES.items():
        w_words = k * n // 8  # int4 weights as int32 words
        w_words -= w_words % BLOCK
        copies = copies_for(w_words * 4)
        ws = [torch.randint(-2**31, 2**31 - 1, (w_words,), dtype=torch.int32, device=dev) for _ in range(copies)]
        for m in [int(v) for v in args.m.split(",")]:
            x_words = max(BLOCK, m * k * 2 // 4 // BLOCK * BLOCK)
            x = torch.randint(-2**31, 2**31 - 1, (x_words,), dtype=torch.int32, device=dev)
            # x : w byte ratio m / 32 as (weight blocks, x blocks) a program
            wb, xb = {16: (2, 1), 32: (1, 1), 64: (1, 2)}[m]
            progs = w_words // BLOCK // wb
            sink = torch.empty(progs, dtype=torch.int32, device=dev)
            row = {"shape": name, "K": k, "N": n, "M": m, "w_bytes": progs * wb * BLOCK * 4,
                   "x_bytes": progs * xb * BLOCK * 4, "x_footprint": x_words * 4}
            for arm, (a, b) in {"w": (wb, 0), "x": (0, xb), "w+x": (wb, xb)}.items():
                calls = [(lambda w=w, a=a, b=b: _mixed[(progs,)](w, x, sink, x_words // BLOCK, WB=a, XB=b,
                                                                  BLOCK=BLOCK, num_warps=8)) for w in ws]
                t = graph_time_us(calls, replays=7)
                byts = progs * (a + b) * BLOCK * 4
                row[arm] = {**t, "TBps": byts / t["median_us"] / 1e6}
            rows.append(row)
            print(f"{name:18} M={m:3}  w {row['w']['median_us']:7.2f} us ({row['w']['TBps']:.2f} TB/s)  "
                  f"x {row['x']['median_us']:7.2f} ({row['x']['TBps']:.2f})  "
                  f"w+x {row['w+x']['median_us']:7.2f} ({row['w+x']['TBps']:.2f})", flush=True)
        del ws
        torch.cuda.empty_cache()
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"what": "lab: weight stream + L2 re-reads of x in the ratio of a 128-feature tile",
                       "gpu": torch.cuda.get_device_name(), "method": "graph over rotating weight copies, "
                       "Triton .cg 16 KB blocks, medians of 7 replays", "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
