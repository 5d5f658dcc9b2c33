"""Lab: how fast can one SM write fp32 to an L2-resident buffer, with P SMs writing at once?

bwg's split fix-ups measured ~26-40 GB/s an SM in the kernel (a stream-K contributor's 128 KB
partial ~3.3 us, an owner's 64 KB fp16 epilogue 2.45 us with 48 SMs writing; bench/NOTES.md
sessions 23-24). If a bare store loop does several times that, the kernel's stores are not at
the hardware's rate; if it does the same, the fix-up's bytes are the floor.

Each of P programs (one an SM: P <= the SM count) writes R times over its own region of B KB
(16 KB blocks, 8 warps, 16-byte stores), in one graph of `calls` launches; also the same
programs reading their regions (.cg), for the comparison.

    python3 bench/lab/store_rate.py [--json out.json]
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
from timing import graph_time_us  # noqa: E402

BLOCK = 4096  # fp32 a block (16 KB)


@triton.jit
def _write(buf, NB: tl.constexpr, R: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    v = tl.arange(0, BLOCK).to(tl.float32)
    for r in range(R):
        for j in tl.static_range(NB):
            offs = (pid.to(tl.int64) * NB + j) * BLOCK + tl.arange(0, BLOCK)
            tl.store(buf + offs, v + r)


@triton.jit
def _read(buf, sink, NB: tl.constexpr, R: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for r in range(R):
        for j in tl.static_range(NB):
            offs = (pid.to(tl.int64) * NB + j) * BLOCK + tl.arange(0, BLOCK)
            acc += tl.load(buf + offs, cache_modifier=".cg")
    tl.store(sink + pid, tl.sum(acc, 0))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    ap.add_argument("--progs", default="1,8,48,84,132")
    ap.add_argument("--kb", default="64,128")
    ap.add_argument("--reps", type=int, default=16)
    args = ap.parse_args()
    dev = torch.device("cuda")
    rows = []
    for kb in [int(v) for v in args.kb.split(",")]:
        nb = kb // 16
        for p in [int(v) for v in args.progs.split(",")]:
            buf = torch.randn(p * nb * BLOCK, device=dev)
            sink = torch.empty(p, device=dev)
            row = {"programs": p, "region_kb": kb, "reps": args.reps}
            for arm, fn in {"write": lambda: _write[(p,)](buf, NB=nb, R=args.reps, BLOCK=BLOCK, num_warps=8),
                            "read": lambda: _read[(p,)](buf, sink, NB=nb, R=args.reps, BLOCK=BLOCK, num_warps=8)}.items():
                t = graph_time_us([fn] * 8, replays=7)
                byts = nb * BLOCK * 4 * args.reps
                row[arm] = {**t, "GBps_per_sm": byts / t["median_us"] / 1e3, "TBps": p * byts / t["median_us"] / 1e6}
            rows.append(row)
            print(f"P={p:4d} {kb:4d} KB x{args.reps}: write {row['write']['median_us']:7.2f} us "
                  f"({row['write']['GBps_per_sm']:6.1f} GB/s an SM, {row['write']['TBps']:.2f} TB/s)  "
                  f"read {row['read']['median_us']:7.2f} ({row['read']['GBps_per_sm']:6.1f}, {row['read']['TBps']:.2f})",
                  flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"what": "lab: per-SM store / load rate to an L2-resident region, P SMs at once",
                       "gpu": torch.cuda.get_device_name(), "method": "graph of 8 launches, Triton 16 KB blocks, "
                       "8 warps, medians of 7 replays", "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
