"""Lab: what staging the activation rows costs the multi-token bulk kernel (kernels/bulk.cuh).

    python3 bench/lab/bulk_x_cost.py [--shapes 8192x57344,4096x6144] [--m 8,16] [--out r.json]

Compiles the 8/16-token bodies on the GPU machine in three forms: the library's, -DMATE_BULK_NOX
(x rows never staged: the consumers read stale shared memory, wrong results; the bound on what
cheaper x staging could gain) and -DMATE_BULK_NOCOMPUTE (the copy pipeline alone), each for the
128-feature tile (8 consumer warps, two CTAs an SM, the library's) and a 256-feature tile (16
consumer warps, one CTA an SM: half the x bytes per weight byte). Times each in a CUDA graph of
back-to-back launches over rotating weight copies (>= 10x the 60 MB L2) on the library's kind of
plan: whole tiles on the resident slots, or an even split of K where the tiles do not fill them.
"""
import argparse
import ctypes
import json
import os
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

SMS, CH = 132, 8
# tile: (TN, consumer warps, ring stages, CTAs per SM)
TILES = {"n128": (128, 8, 2, 2), "n256": (256, 16, 2, 1), "n128p4": (128, 8, 4, 1), "n32": (32, 8, 3, 2), "n32p4": (32, 8, 4, 2)}
FORMS = {"lib": [], "nox": ["-DMATE_BULK_NOX"], "copy": ["-DMATE_BULK_NOCOMPUTE"], "copy_nox": ["-DMATE_BULK_NOCOMPUTE", "-DMATE_BULK_NOX"],
         "nocopy": ["-DMATE_BULK_NOCOPY"], "x1": ["-DMATE_BULK_X1"]}


def sym(tm, tile, split):
    return f"m{tm}_{tile}_{'split' if split else 'whole'}"


def source(ms, tiles):
    s = '#include "params.cuh"\n#include "bulk.cuh"\n'
    for tm in ms:
        for tile in tiles:
            tn, wc, p, minb = TILES[tile]
            for split in (False, True):
                s += (f'extern "C" __global__ void __launch_bounds__({(wc + 1) * 32}, {minb}) {sym(tm, tile, split)}(const mate::GemmParams p) '
                      f'{{ mate::bulk_body<__half, false, {tm}, {tn}, {wc + 1}, {p}, {str(split).lower()}, false>(p); }}\n')
    return s


def smem(tm, tn, wc, p):
    """Variant::dynamic_smem for the post-scale forms (kernels/bulk.cuh stage_bytes)."""
    ns, mt, ch = tn // 16, (tm + 7) // 8, CH if tn >= 128 else 16
    nsw = ns if ns <= 2 else 1
    ph = wc // (ns // nsw)
    stage = ns * ch * 512 + tm * (ch * 128 + 16) + ch * tn * 2
    return p * (stage + 16) + max(ph - 1, 1) * ns * mt * 512


def build(tmp, name, flags, src, kernels):
    cu = Path(tmp) / "x.cu"
    cu.write_text(src)
    out = Path(tmp) / f"{name}.cubin"
    r = subprocess.run([os.environ.get("NVCC", "nvcc"), "-std=c++17", "-O3", f"-I{kernels}", "-gencode", "arch=compute_90a,code=sm_90a",
                        "-cubin", "-Xptxas", "-v", *flags, "-o", str(out), str(cu)], capture_output=True, text=True, check=True)
    spills = [ln.strip() for ln in r.stderr.splitlines() if "spill" in ln and not ln.strip().startswith("0 bytes")]
    return out.read_bytes(), spills


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapes", default="8192x57344,4096x28672,28672x8192,4096x6144,14336x4096")
    ap.add_argument("--m", default="8,16")
    ap.add_argument("--forms", default="lib,nox,copy,copy_nox")
    ap.add_argument("--tiles", default="n128,n256")
    ap.add_argument("--out", default="")
    ap.add_argument("--old", default="", help="a second kernels/ directory: forms named old_<form> compile against it (A/B)")
    a = ap.parse_args()
    tm_of = lambda m: 1 if m == 1 else 8 if m <= 8 else 16  # noqa: E731
    ms = sorted({tm_of(int(m)) for m in a.m.split(",")})
    torch.zeros(1, device="cuda")
    cu = ctypes.CDLL("libcuda.so.1")
    report = {"what": __doc__.strip().splitlines()[0], "rows": []}
    with tempfile.TemporaryDirectory() as tmp:
        mods = {}
        for form in a.forms.split(","):
            old = form.startswith("old_")
            data, spills = build(tmp, form, FORMS[form[4:] if old else form], source(ms, a.tiles.split(",")), Path(a.old) if old else ROOT / "kernels")
            mod = ctypes.c_void_p()
            assert cu.cuModuleLoadData(ctypes.byref(mod), ctypes.c_char_p(data)) == 0
            mods[form] = mod
            print(f"built {form}: spills {spills or 'none'}", flush=True)
        for shape in a.shapes.split(","):
            K, N = map(int, shape.split("x"))
            G = 128
            wbytes = K * N // 2 + K // G * N * 2
            copies = max(2, -(-600_000_000 // wbytes))
            q = torch.randint(0, 16, (K, N), device="cuda")
            qws = [pack_frame_v2(q)] + [torch.randint(-2**31, 2**31 - 1, (K // 8 * N,), device="cuda", dtype=torch.int32).view(-1)
                                        for _ in range(copies - 1)]
            qws[1:] = [w.view(qws[0].shape) for w in qws[1:]]
            s = (torch.rand(K // G, N, device="cuda") * 0.02 + 0.002).half()
            scs = [s] + [s.clone() for _ in range(copies - 1)]
            for M in map(int, a.m.split(",")):
                tm = tm_of(M)
                x = torch.randn(M, K, device="cuda").half()
                ref = x.float() @ ((q - 8).half() * s.repeat_interleave(G, 0)).float()
                out = torch.empty(M, N, device="cuda", dtype=torch.half)
                for tile in a.tiles.split(","):
                    tn, wc, p, minb = TILES[tile]
                    tiles, chunks, slots = N // tn, K // 64, minb * SMS
                    S = min(slots // tiles, chunks // (CH if tn >= 128 else 16)) if tiles < slots else 1
                    split = S > 1
                    grid = tiles * S if split else min(tiles, slots)
                    ws = torch.zeros(grid * tm * tn * 4 + tiles * 4 + 256, dtype=torch.uint8, device="cuda")
                    params = [Params(x.data_ptr(), qw.data_ptr(), sc.data_ptr(), None, None, None, out.data_ptr(), K, M, N, K, G,
                                     ws.data_ptr(), S, 1 if split else 0) for qw, sc in zip(qws, scs)]
                    ptrs = [ctypes.pointer(pp) for pp in params]
                    argv = [(ctypes.c_void_p * 1)(ctypes.cast(pp, ctypes.c_void_p)) for pp in ptrs]
                    sm = smem(tm, tn, wc, p)
                    for form in a.forms.split(","):
                        f = ctypes.c_void_p()
                        assert cu.cuModuleGetFunction(ctypes.byref(f), mods[form], sym(tm, tile, split).encode()) == 0
                        assert cu.cuFuncSetAttribute(f, 8, sm) == 0

                        def launch(i, f=f):
                            st = torch.cuda.current_stream().cuda_stream
                            rc = cu.cuLaunchKernel(f, grid, 1, 1, (wc + 1) * 32, 1, 1, sm, ctypes.c_void_p(st), argv[i], None)
                            assert rc == 0, rc

                        out.fill_(float("nan"))
                        launch(0)
                        torch.cuda.synchronize()
                        err = ((out.float() - ref).norm() / ref.norm()).item()
                        t = graph_time_us([lambda i=i: launch(i) for i in range(copies)])
                        row = dict(K=K, N=N, M=M, tile=tile, form=form, S=S, grid=grid, err=err, median_us=t["median_us"],
                                   min_us=t["min_us"], max_us=t["max_us"], read_bytes=wbytes)
                        report["rows"].append(row)
                        print(f"K={K:5d} N={N:5d} M={M:2d} {tile} S={S} grid={grid:3d} {form:8s} err {err:.1e} {t['median_us']:7.2f} us "
                              f"({t['min_us']:.2f}-{t['max_us']:.2f})", flush=True)
    if a.out:
        Path(a.out).write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
