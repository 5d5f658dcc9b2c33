"""Kernel lab: time experimental builds of a kernel body without rebuilding the library.

    python3 bench/lab/run_cubin.py CUBIN SYMBOL[,SYMBOL...] --tm 256 --split 1 --K 4096 --N 28672 --M 4096

Each cubin holds extern "C" kernels taking mate::GemmParams (kernels/params.cuh). The frame is
random, symmetric, group 128, fp16; each kernel is checked against torch before timing (CUDA events
around back-to-back launches, median of rounds). A lab, not a benchmark: compute-bound shapes only.
"""
import argparse
import ctypes
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "tests" / "python"), str(ROOT / "torch_ops")]
import torch  # noqa: E402

from checkpoints import pack_frame_v2  # noqa: E402


class Params(ctypes.Structure):
    _fields_ = [("x", ctypes.c_void_p), ("qweight", ctypes.c_void_p), ("scales", ctypes.c_void_p), ("zeros", ctypes.c_void_p),
                ("perm", ctypes.c_void_p), ("bias", ctypes.c_void_p), ("out", ctypes.c_void_p), ("x_row_stride", ctypes.c_int64),
                ("M", ctypes.c_int32), ("N", ctypes.c_int32), ("K", ctypes.c_int32), ("group_size", ctypes.c_int32),
                ("workspace", ctypes.c_void_p), ("total_warps", ctypes.c_int32), ("max_seg", ctypes.c_int32)]


assert ctypes.sizeof(Params) == 96


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cubin")
    ap.add_argument("symbols")
    ap.add_argument("--tm", type=int, default=256)
    ap.add_argument("--tn", type=int, default=128)
    ap.add_argument("--smem", type=int, required=True)
    ap.add_argument("--threads", type=int, default=256)
    ap.add_argument("--split", type=int, default=1)
    ap.add_argument("--K", type=int, default=4096)
    ap.add_argument("--N", type=int, default=28672)
    ap.add_argument("--M", type=int, default=4096)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--grid", type=int, default=0, help="persistent kernels (bulk): grid.x, split in total_warps")
    a = ap.parse_args()
    torch.cuda.init()
    torch.zeros(1, device="cuda")
    cu = ctypes.CDLL("libcuda.so.1")
    mod = ctypes.c_void_p()
    data = Path(a.cubin).read_bytes()
    assert cu.cuModuleLoadData(ctypes.byref(mod), ctypes.c_char_p(data)) == 0
    K, N, M, G = a.K, a.N, a.M, 128
    q = torch.randint(0, 16, (K, N), device="cuda")
    qw = pack_frame_v2(q)
    s = (torch.rand(K // G, N, device="cuda") * 0.02 + 0.002).half()
    x = torch.randn(M, K, device="cuda").half()
    w = ((q - 8).half() * s.repeat_interleave(G, 0)).float()
    ref = (x.float() @ w)
    out = torch.empty(M, N, device="cuda", dtype=torch.half)
    tiles = -(-M // a.tm) * -(-N // a.tn)
    ws = torch.zeros(tiles * a.split * a.tm * a.tn * 4 + tiles * 4 + 256, dtype=torch.uint8, device="cuda")
    if a.grid:  # persistent: grid.x CTAs walk (tile, split) items; the split travels in total_warps
        p = Params(x.data_ptr(), qw.data_ptr(), s.data_ptr(), None, None, None, out.data_ptr(), K, M, N, K, G, ws.data_ptr(), a.split, 0)
        grid = (a.grid, 1, 1)
    else:
        p = Params(x.data_ptr(), qw.data_ptr(), s.data_ptr(), None, None, None, out.data_ptr(), K, M, N, K, G, ws.data_ptr(), 0, 0)
        grid = (-(-M // a.tm), -(-N // a.tn), a.split)
    flops = 2 * M * N * K
    for sym in a.symbols.split(","):
        f = ctypes.c_void_p()
        assert cu.cuModuleGetFunction(ctypes.byref(f), mod, sym.encode()) == 0, sym
        assert cu.cuFuncSetAttribute(f, 8, a.smem) == 0  # MAX_DYNAMIC_SHARED_SIZE_BYTES
        pp = ctypes.pointer(p)
        args = (ctypes.c_void_p * 1)(ctypes.cast(pp, ctypes.c_void_p))
        stream = torch.cuda.current_stream().cuda_stream

        def launch():
            rc = cu.cuLaunchKernel(f, grid[0], grid[1], grid[2], a.threads, 1, 1, a.smem, ctypes.c_void_p(stream), args, None)
            assert rc == 0, rc

        out.fill_(float("nan"))
        launch()
        torch.cuda.synchronize()
        err = ((out.float() - ref).norm() / ref.norm()).item()
        times = []
        for _ in range(5):
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record()
            for _ in range(a.iters):
                launch()
            e1.record()
            e1.synchronize()
            times.append(e0.elapsed_time(e1) * 1e3 / a.iters)
        t = statistics.median(times)
        print(f"{sym:28s} err {err:.1e}  {t:9.1f} us  {flops / t / 1e6:7.1f} TFLOP/s  (min {min(times):.1f} max {max(times):.1f})", flush=True)
    # cuBLAS fp16 on the same shape, for scale
    wd = torch.randn(N, K, device="cuda").half()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.nn.functional.linear(x, wd)
    e0.record()
    for _ in range(a.iters):
        torch.nn.functional.linear(x, wd)
    e1.record()
    e1.synchronize()
    t = e0.elapsed_time(e1) * 1e3 / a.iters
    print(f"{'cublas fp16':28s}              {t:9.1f} us  {flops / t / 1e6:7.1f} TFLOP/s")


if __name__ == "__main__":
    main()
