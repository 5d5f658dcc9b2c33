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
import torch  # noqa: E402

import mate  # noqa: E402,F401
from checkpoints import pack_frame_v2  # noqa: E402

SLOTS = 16  # u64 per CTA (kernels/bwg.cuh)


def probe(K, N, M, calls=20):
    q = torch.randint(0, 16, (K, N), device="cuda")
    qw = pack_frame_v2(q)
    s = (torch.rand(K // 128, N, device="cuda") * 0.02).half()
    meta = torch.ops.mate.frame_meta(K, N, 128, False, False)
    x = torch.randn(M, K, device="cuda").half()
    out = torch.empty(M, N, device="cuda").half()
    need = torch.ops.mate.w4a16_workspace_size(x, meta)
    if need == 0:
        return {"K": K, "N": N, "M": M, "error": "whole-K plan: no split workspace to hold the probe"}
    ws = torch.zeros(need + 1024 * SLOTS * 8, dtype=torch.uint8, device="cuda")
    call = lambda: torch.ops.mate.w4a16_gemm.out(x, qw, meta, s, None, None, None, 128, workspace=ws, out=out)  # noqa: E731
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
        "end (after the first CTA's start)": lambda r: (r[8] - t0) / 1e3,
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
