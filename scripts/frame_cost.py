#!/usr/bin/env python3
"""Load-time cost of the frame builder: frames for one Llama-3-70B decoder layer (qkv, o,
gate_up, down) built from GPTQ checkpoint tensors, on the CPU or a CUDA device. Reports, per
projection and for the layer, the build time and the peak extra memory against the packed
checkpoint bytes (qweight + scales + qzeros; target: peak extra <= 2x).

Each config builds the whole layer --rounds times (median time reported, every round kept).
Peak extra memory is measured around each build, with the earlier frames still held (as a loader
holds them): on CUDA, torch.cuda.max_memory_allocated() minus the allocated bytes before; on the
CPU, the process's peak resident set (VmHWM, reset through /proc/self/clear_refs) minus the
resident set before. The frame itself (about 1x the packed bytes) counts as extra.

    python3 scripts/frame_cost.py --device cpu --json frame_cost_cpu.json [--library PATH]
"""

from __future__ import annotations

import argparse
import datetime
import gc
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "torch_ops"))

SHAPES = {  # Llama-3-70B, K x N
    "qkv": (8192, 10240),
    "o": (8192, 8192),
    "gate_up": (8192, 57344),
    "down": (28672, 8192),
}


def status_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/self/status")


class CpuMem:
    def start(self):
        gc.collect()
        Path("/proc/self/clear_refs").write_text("5")  # resets VmHWM to the current RSS
        self.base = status_kb("VmRSS") * 1024

    def peak_extra(self) -> int:
        return status_kb("VmHWM") * 1024 - self.base


class CudaMem:
    def __init__(self, device):
        self.device = device

    def start(self):
        gc.collect()
        torch.cuda.synchronize(self.device)
        torch.cuda.reset_peak_memory_stats(self.device)
        self.base = torch.cuda.memory_allocated(self.device)

    def peak_extra(self) -> int:
        torch.cuda.synchronize(self.device)
        return torch.cuda.max_memory_allocated(self.device) - self.base


def checkpoint(K, N, group, sym, desc_act, device, gen):
    ng = K // group
    return dict(
        qweight=torch.randint(-(2**31), 2**31 - 1, (K // 8, N), dtype=torch.int32, device=device, generator=gen),
        scales=(torch.rand(ng, N, device=device, generator=gen) * 0.02).half(),
        qzeros=torch.randint(-(2**31), 2**31 - 1, (ng, N // 8), dtype=torch.int32, device=device, generator=gen),
        g_idx=(torch.arange(K, device=device) // group)[torch.randperm(K, device=device, generator=gen)].int()
        if desc_act
        else None,
    )


def packed_bytes(ck, sym):
    t = [ck["qweight"], ck["scales"]] + ([] if sym else [ck["qzeros"]])
    return sum(x.numel() * x.element_size() for x in t)


def run(device: str, group: int, sym: bool, desc_act: bool, rounds: int):
    import mate

    dev = torch.device(device)
    mem = CudaMem(dev) if dev.type == "cuda" else CpuMem()
    gen = torch.Generator(dev).manual_seed(0)
    # All four checkpoints first (the loader holds them), then the frames one by one. Each round
    # builds the whole layer again (the previous round's frames dropped first); a projection's
    # time is the median over rounds (all kept), its peak extra memory the largest.
    cks = {name: checkpoint(K, N, group, sym, desc_act, dev, gen) for name, (K, N) in SHAPES.items()}
    times = {name: [] for name in SHAPES}
    peaks = {name: [] for name in SHAPES}
    for _ in range(rounds):
        frames = []
        for name, (K, N) in SHAPES.items():
            ck = cks[name]
            mem.start()
            t0 = time.perf_counter()
            fr = mate.from_gptq(ck["qweight"], ck["scales"], ck["qzeros"], ck["g_idx"], group_size=group, sym=sym,
                                desc_act=desc_act, checkpoint_format="gptq_v2")
            if dev.type == "cuda":
                torch.cuda.synchronize(dev)
            times[name].append(time.perf_counter() - t0)
            peaks[name].append(mem.peak_extra())
            frames.append(fr)
        del frames, fr
        gc.collect()
    rows = []
    for name, (K, N) in SHAPES.items():
        pb = packed_bytes(cks[name], sym)
        ts = sorted(times[name])
        extra = max(peaks[name])
        rows.append(dict(projection=name, K=K, N=N, packed_bytes=pb, seconds=ts[len(ts) // 2], seconds_all=times[name],
                         peak_extra_bytes=extra, peak_extra_over_packed=extra / pb))
    total_pb = sum(r["packed_bytes"] for r in rows)
    return dict(
        config=dict(group_size=group, sym=sym, desc_act=desc_act, checkpoint_format="gptq_v2", scales="float16"),
        projections=rows,
        layer=dict(packed_bytes=total_pb, seconds=sum(r["seconds"] for r in rows),
                   worst_peak_extra_over_packed=max(r["peak_extra_over_packed"] for r in rows)),
    )


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cpu", help="cpu or cuda[:i]")
    ap.add_argument("--json", required=True, help="where to write the results")
    ap.add_argument("--library", help="path of libmate.so (default: the package's search)")
    ap.add_argument("--configs", default="g128-sym,g128-asym-act", help="comma list of gGROUP-(sym|asym)[-act]")
    ap.add_argument("--rounds", type=int, default=3, help="builds of the whole layer per config (median time)")
    args = ap.parse_args()
    if args.library:
        os.environ["MATE_LIBRARY"] = args.library
    if args.device == "cpu":
        torch.set_num_threads(os.cpu_count() or 1)
    results = []
    for c in args.configs.split(","):
        parts = c.split("-")
        group = int(parts[0][1:])
        r = run(args.device, group, parts[1] == "sym", "act" in parts[2:], args.rounds)
        r["name"] = c
        results.append(r)
        gc.collect()
        if args.device.startswith("cuda"):
            torch.cuda.empty_cache()
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    except OSError:
        commit = ""
    dev_name = torch.cuda.get_device_name(torch.device(args.device)) if args.device.startswith("cuda") else platform.processor() or platform.machine()
    out = dict(
        what="frame builder load-time cost, one Llama-3-70B decoder layer from GPTQ tensors",
        device=args.device,
        device_name=dev_name,
        cpu_threads=torch.get_num_threads(),
        torch=torch.__version__,
        commit=commit,
        date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        method=("per projection, earlier frames of the layer held; time = median over rounds of whole-layer builds "
                "(seconds_all keeps every round); peak extra = max over rounds of torch.cuda.max_memory_allocated - "
                "allocated before (CUDA) or VmHWM (reset via /proc/self/clear_refs) - VmRSS before (CPU); the frame "
                "itself counts as extra. CPU caveat: on a VM whose memory is not yet backed by the host, first "
                "touches of fresh pages can make a round 20-50x slower; see seconds_all"),
        results=results,
    )
    Path(args.json).write_text(json.dumps(out, indent=2) + "\n")
    print(f"{'config':<16} {'proj':<8} {'K x N':>13} {'packed MB':>10} {'seconds':>8} {'peak extra MB':>14} {'x packed':>9}")
    for r in results:
        for p in r["projections"]:
            print(f"{r['name']:<16} {p['projection']:<8} {p['K']:>6}x{p['N']:<6} {p['packed_bytes'] / 1e6:>10.1f} "
                  f"{p['seconds']:>8.2f} {p['peak_extra_bytes'] / 1e6:>14.1f} {p['peak_extra_over_packed']:>9.2f}")
        L = r["layer"]
        print(f"{r['name']:<16} {'layer':<8} {'':>13} {L['packed_bytes'] / 1e6:>10.1f} {L['seconds']:>8.2f} "
              f"{'':>14} {L['worst_peak_extra_over_packed']:>9.2f} (worst)")
    print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
