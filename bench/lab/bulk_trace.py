"""Lab: where the one-token bulk kernel's time goes (kernels/bulk.cuh), on the GPU machine.

    python3 bench/lab/bulk_trace.py [--shapes 4096x28672,14336x4096] [--out trace.json]

Compiles the m1 (--tm 16: m16) x 128-feature symmetric fp16 body twice with -DMATE_BULK_TRACE (one build also
-DMATE_BULK_NOCOMPUTE: the copy pipeline alone, wrong results), times each in a CUDA graph of
back-to-back launches over rotating weight copies (>= 10x the 60 MB L2; the plan of the library:
whole tiles on at most 2 CTAs per SM, or the even split where tiles < slots), then reads the
timeline of the graph's last launch: per CTA its SM, start and end, and per ring stage the
producer's issue, warp 0's full and warp 0's done times (%globaltimer).
"""
import argparse
import ctypes
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "tests" / "python"), str(ROOT / "torch_ops"), str(ROOT / "bench" / "lab"), str(ROOT)]
import torch  # noqa: E402

from checkpoints import pack_frame_v2  # noqa: E402
from run_cubin import Params  # noqa: E402
from bench.timing import graph_time_us  # noqa: E402

TN, WK, CH, SMS = 128, 9, 8, 132
TM = 1  # token tile (--tm)
RINGS = (2, 3)  # ring stages per CTA (P) compared


def stage_bytes():  # kernels/bulk.cuh stage_bytes (symmetric, post-scale)
    return (TN // 16) * CH * 512 + TM * (CH * 128 + 16) + CH * TN * 2


def source():
    return '#include "params.cuh"\n#include "bulk.cuh"\n' + "".join(
        f'extern "C" __global__ void __launch_bounds__(288, 2) {kind}{P}(const mate::GemmParams p) '
        f'{{ mate::bulk_body<__half, false, {TM}, 128, 9, {P}, {str(kind == "split").lower()}, false>(p); }}\n'
        for P in RINGS for kind in ("whole", "split"))


def smem(P):
    return P * (stage_bytes() + 16) + (TN // 16) * ((TM + 7) // 8) * 512


def build(tmp, flags):
    nvcc = os.environ.get("NVCC", "nvcc")
    cu = Path(tmp) / "t.cu"
    cu.write_text(source())
    out = Path(tmp) / ("t" + "".join(f.replace("-D", "_") for f in flags) + ".cubin")
    subprocess.run([nvcc, "-std=c++17", "-O3", f"-I{ROOT / 'kernels'}", "-gencode", "arch=compute_90a,code=sm_90a", "-cubin", *flags,
                    "-o", str(out), str(cu)], check=True)
    return out.read_bytes()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapes", default="4096x28672,14336x4096,8192x57344")
    ap.add_argument("--out", default="")
    ap.add_argument("--even", default="", help="extra even splits S (grids of tiles x S CTAs, past the resident slots)")
    ap.add_argument("--arms", default="compute_P2,copy_only_P2,compute_P3")
    ap.add_argument("--tm", type=int, default=1, choices=(1, 16), help="token tile (M = TM tokens)")
    a = ap.parse_args()
    global TM
    TM = a.tm
    torch.zeros(1, device="cuda")
    cu = ctypes.CDLL("libcuda.so.1")
    report = {}
    with tempfile.TemporaryDirectory() as tmp:
        mods = {}
        for label, flags in (("compute", ["-DMATE_BULK_TRACE"]), ("copy_only", ["-DMATE_BULK_TRACE", "-DMATE_BULK_NOCOMPUTE"])):
            mod = ctypes.c_void_p()
            data = build(tmp, flags)
            assert cu.cuModuleLoadData(ctypes.byref(mod), ctypes.c_char_p(data)) == 0
            mods[label] = mod
        for shape in a.shapes.split(","):
            K, N = map(int, shape.split("x"))
            G, M = 128, TM
            tiles, chunks = N // TN, K // 64
            slots = 2 * SMS
            if tiles < slots and min(slots // tiles, chunks // CH) > 1:
                plans = [("split", min(slots // tiles, chunks // CH), tiles * min(slots // tiles, chunks // CH), 1)]
            else:
                plans = [("whole", 1, min(tiles, slots), 0)]
            stages = tiles * (-(-chunks // CH))
            plans.append(("split", 0, min(slots, stages), CH))  # stream-K over stages on every slot
            for S in map(int, filter(None, a.even.split(","))):  # even splits past the slots: the hardware balances
                if S * CH <= chunks and tiles * S > slots:
                    plans.append(("split", S, tiles * S, 1))
            wbytes = K * N // 2 + K // G * N * 2
            copies = max(2, -(-600_000_000 // wbytes))
            q = torch.randint(0, 16, (K, N), device="cuda")
            qws = [pack_frame_v2(q)]  # the copies after the first: random words (only copy 0 is checked)
            qws += [torch.randint(-2**31, 2**31 - 1, qws[0].shape, device="cuda", dtype=torch.int32) for _ in range(copies - 1)]
            s = (torch.rand(K // G, N, device="cuda") * 0.02 + 0.002).half()
            scs = [s] + [s.clone() for _ in range(copies - 1)]
            x = torch.randn(M, K, device="cuda").half()
            ref = x.float() @ ((q - 8).half() * s.repeat_interleave(G, 0)).float()
            out = torch.empty(M, N, device="cuda", dtype=torch.half)
            row = dict(K=K, N=N, copies=copies)
            for kind, S, grid, max_seg in plans:
                pname = f"{kind}{S}" if max_seg <= 1 else "streamk"
                trace = torch.zeros(grid * 196, dtype=torch.int64, device="cuda")
                ws = torch.zeros(grid * TM * TN * 4 + tiles * 4 + 256, dtype=torch.uint8, device="cuda")
                params = [Params(x.data_ptr(), qw.data_ptr(), sc.data_ptr(), None, trace.data_ptr(), None, out.data_ptr(), K, M, N, K, G,
                                 ws.data_ptr(), S, max_seg) for qw, sc in zip(qws, scs)]
                ptrs = [ctypes.pointer(pp) for pp in params]
                argv = [(ctypes.c_void_p * 1)(ctypes.cast(pp, ctypes.c_void_p)) for pp in ptrs]
                arms = [(f"{lb}_P{P}", m, P) for P in RINGS for lb, m in mods.items() if f"{lb}_P{P}" in a.arms.split(",")]
                for label, mod, P in arms:
                    label = f"{pname}_{label}"
                    f = ctypes.c_void_p()
                    assert cu.cuModuleGetFunction(ctypes.byref(f), mod, f"{kind}{P}".encode()) == 0
                    assert cu.cuFuncSetAttribute(f, 8, smem(P)) == 0

                    def launch(i):
                        st = torch.cuda.current_stream().cuda_stream
                        rc = cu.cuLaunchKernel(f, grid, 1, 1, WK * 32, 1, 1, smem(P), ctypes.c_void_p(st), argv[i], None)
                        assert rc == 0, rc

                    out.fill_(float("nan"))
                    launch(0)
                    torch.cuda.synchronize()
                    err = ((out.float() - ref).norm() / ref.norm()).item()
                    for i in range(copies):
                        launch(i)
                    torch.cuda.synchronize()
                    t = graph_time_us([lambda i=i: launch(i) for i in range(copies)])  # the bench's graph method
                    tr = trace.view(grid, 196).cpu().tolist()
                    row[label] = dict(err=err, median_us=t["median_us"], min_us=t["min_us"], max_us=t["max_us"],
                                      timeline=summarize(tr, K, TN), rate_TBps_per_us=rate_curve(tr))
                    print(f"K={K} N={N} grid={grid} {label:22s} err {err:.1e} {row[label]['median_us']:7.2f} us", flush=True)
                    print("   " + json.dumps(row[label]["timeline"]), flush=True)
                    print("   TB/s per us: " + " ".join(map(str, row[label]["rate_TBps_per_us"])), flush=True)
            report[shape] = row
    if a.out:
        Path(a.out).write_text(json.dumps(report, indent=1))


def rate_curve(tr):
    """Stage bytes arriving per 1-us bucket of the launch (TB/s), from warp 0's full times."""
    t0 = min(r[1] for r in tr)
    buckets = {}
    for r in tr:
        for v in r[68:132]:
            if v:
                b = int((v - t0) // 1000)
                buckets[b] = buckets.get(b, 0) + stage_bytes()
    return [round(buckets.get(b, 0) / 1e6, 2) for b in range(max(buckets) + 1)] if buckets else []


def summarize(tr, K, tn):
    """Timeline of one launch: kernel span, per-CTA phases, per-SM load (us)."""
    t0 = min(r[1] for r in tr)
    span = (max(r[2] for r in tr) - t0) / 1e3
    med = lambda v: round(statistics.median(v), 3) if v else None  # noqa: E731
    starts = [(r[1] - t0) / 1e3 for r in tr]
    first_full = [(r[68] - r[1]) / 1e3 for r in tr if r[68]]
    issue_to_full, busy, gap = [], [], []
    ends = {}
    for r in tr:
        n = sum(1 for v in r[4:68] if v)
        for i in range(n):
            if r[68 + i]:
                issue_to_full.append((r[68 + i] - r[4 + i]) / 1e3)
            if r[132 + i] and r[68 + i]:
                busy.append((r[132 + i] - r[68 + i]) / 1e3)
            if i and r[68 + i] and r[132 + i - 1]:
                gap.append(max(0, r[68 + i] - r[132 + i - 1]) / 1e3)
        ends.setdefault(r[0], []).append((r[2] - t0) / 1e3)
    sm_end = sorted(max(v) for v in ends.values())
    cta_end = sorted((r[2] - t0) / 1e3 for r in tr)
    return dict(span_us=round(span, 2), ctas=len(tr), sms=len(ends),
                start_us=[round(min(starts), 2), med(starts), round(max(starts), 2)],
                first_full_us=[med(first_full), round(max(first_full), 2)],
                issue_to_full_us=[med(issue_to_full), round(max(issue_to_full), 2)],
                consumer_busy_us_per_stage=[med(busy), round(max(busy), 2) if busy else None],
                wait_for_stage_us=[med(gap), round(sum(gap) / len(tr), 2) if gap else None],
                cta_end_us=[round(cta_end[0], 2), med(cta_end), round(cta_end[-1], 2)],
                sm_end_us=[round(sm_end[0], 2), med(sm_end), round(sm_end[-1], 2)],
                ctas_per_sm={str(k): sum(1 for v in ends.values() if len(v) == k) for k in (1, 2, 3)})


if __name__ == "__main__":
    main()
