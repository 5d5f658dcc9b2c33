"""Where a bwg split plan's time goes, per CTA, from a probe build (kernels/bwg.cuh MATE_PROBE).

Build the probe library apart from the shipped one, then run on the GPU machine:
    MATE_KERNEL_FLAGS=-DMATE_PROBE cargo build --release && cp target/release/libmate.so target/probe/
    MATE_LIBRARY=$PWD/target/probe/libmate.so python3 bench/lab/probe_bwg.py K N M [K N M ...]
Each shape: a CUDA graph of 20 back-to-back calls (as bench/decode.py times them, programmatic
dependent launch included; one weight copy, so warm L2), replayed; the last call's probes are read.
Split plans only (the probe lives after the split workspace). Prints per-phase medians (min-max)
over CTAs in microseconds, separately for the CTAs that summed a tile and the others.
"""
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "torch_ops"), str(ROOT / "tests" / "python")]
sys.path.insert(0, str(ROOT / "bench"))
import torch  # noqa: E402

from random_frame import random_call  # noqa: E402

SLOTS = 16  # u64 per CTA (kernels/bwg.cuh)


def probe(K, N, M, calls=20):
    f = random_call(K, N, M, extra_workspace=1024 * SLOTS * 8)  # the probe's slots after the split's
    if f.need == 0:
        return {"K": K, "N": N, "M": M, "error": "whole-K plan: no split workspace to hold the probe"}
    call, ws, need = f.call, f.ws, f.need
    for _ in range(3):
        call()
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(calls):
            call()
    g.replay()
    torch.cuda.synchronize()
    ws[need:].zero_()
    g.replay()
    torch.cuda.synchronize()
    pr = ws[need:].view(torch.int64).view(-1, SLOTS).cpu().tolist()
    ctas = [r for r in pr if r[0] != 0]
    # clock64 -> ns from the CTAs' own spans (globaltimer brackets the same interval)
    ghz = sum(r[7] - r[1] for r in ctas) / max(1, sum(r[8] - r[0] for r in ctas))
    t0 = min(r[0] for r in ctas)
    span_us = (max(r[8] for r in ctas) - t0) / 1e3

    def us(a, b):
        return lambda r: (r[b] - r[a]) / ghz / 1e3

    phases = {
        "start (after the first CTA)": lambda r: (r[0] - t0) / 1e3,
        "to pdl_wait done": us(1, 2),
        "to first weights": us(1, 3),
        "to first x": us(1, 4),
        "mainloop (first x to end)": us(4, 5),
        "reduction": us(5, 6),
        "epilogue": us(6, 7),
        # the sliced split's exchange (zero elsewhere)
        "  sliced: store the partial": lambda r: us(5, 11)(r) if r[11] else 0.0,
        "  sliced: arrive": lambda r: us(11, 12)(r) if r[11] else 0.0,
        "  sliced: wait for every part": lambda r: us(12, 13)(r) if r[11] else 0.0,
        "  sliced: sum the slice": lambda r: us(13, 6)(r) if r[11] else 0.0,
        "end (after the first CTA's start)": lambda r: (r[8] - t0) / 1e3,
        # every item (stream-K CTAs have two or more; the phases above are item 0's)
        "all items (from the CTA's start)": lambda r: us(1, 14)(r) if r[14] else 0.0,
        "  stream-K owner's wait done": lambda r: us(1, 15)(r) if r[15] else 0.0,
    }
    res = {"K": K, "N": N, "M": M, "ctas": len(ctas), "sm_ghz": round(ghz, 3), "span_us": round(span_us, 2), "groups": {}}
    for name, sel in [("summed", lambda r: r[9] != 0), ("others", lambda r: r[9] == 0)]:
        rows = [r for r in ctas if sel(r)]
        if not rows:
            continue
        grp = {"ctas": len(rows)}
        for ph, f in phases.items():
            v = [f(r) for r in rows]
            grp[ph] = [round(statistics.median(v), 2), round(min(v), 2), round(max(v), 2)]
        res["groups"][name] = grp
    return res


def main():
    a = list(map(int, sys.argv[1:]))
    out = []
    for i in range(0, len(a), 3):
        r = probe(*a[i:i + 3])
        out.append(r)
        print(f"K={r['K']} N={r['N']} M={r['M']}: " + (r.get("error") or f"{r['ctas']} CTAs, span {r['span_us']} us, SM {r['sm_ghz']} GHz"))
        for name, grp in r.get("groups", {}).items():
            print(f"  {name} ({grp['ctas']} CTAs): median (min-max) us")
            for ph, v in grp.items():
                if ph != "ctas":
                    print(f"    {ph:36s} {v[0]:7.2f} ({v[1]:.2f}-{v[2]:.2f})")
    print(json.dumps(out))


if __name__ == "__main__":
    main()
