"""Eager CPU issue time per call (DESIGN.md lesson 6: the host, reported as its own number).

A tiny shape (M=1, K=N=128, group 128, symmetric, fp16) so the GPU never holds the CPU back.
Each burst issues `--calls` back-to-back calls of one arm between two time.perf_counter_ns()
reads; torch.cuda.synchronize() runs between bursts, never inside one. Arms are interleaved
burst by burst, their order alternating (lesson 7); per-call medians and p10/p90 over
`--bursts` bursts, after `--warmup` warm-up bursts of every arm.

Arms:
* ``mate_out``: ``torch.ops.mate.w4a16_gemm.out`` (C++-registered op, Rust planner + launch);
* ``mate``: the functional overload (allocates its output through torch);
* ``empty``: ``mate_bench::empty(Tensor x, *, Tensor(a!) out)``, the same dispatcher path
  launching an empty kernel (bench/host/empty_op.cu; build it with bench/host/build.sh): the floor;
* ``empty_mate_schema``: the same empty kernel behind mate's own ``.out`` schema and arguments, so
  the dispatcher's (and Python's) handling of the ten arguments is in the floor too;
* ``linear``: ``torch.nn.functional.linear`` fp16 on the same shape;
* ``custom_op``: a Python ``torch.library.custom_op`` wrapping the mate op (what the seed shipped);
* ``module``: ``W4A16Linear.forward`` (the functional op behind an ``nn.Module`` call);
* ``split_ws`` / ``split_own``: the functional op on a split-K shape (Qwen2-1.5B down, 8960 x 1536,
  M = 1: a few us of GPU time, still below the CPU's) with a preallocated workspace, and with none
  (the op's own per-stream buffer, src/device/workspace.rs): their difference is that lookup.

* ``raw``: the raw path (``mate_gemm_raw``, src/raw.rs, through ctypes: torch_ops/mate/raw.py), no
  dispatcher; its device time is reported separately (``raw_device``: a graph of raw launches).

Check: ``mate_out - empty <= 1.5 us`` (DESIGN.md "Targets", host), and the like-for-like
``mate_out - empty_mate_schema``.

    bench/host/build.sh
    python3 bench/host_cost.py --library target/release/libmate.so --json OUT.json
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
sys.path[:0] = [str(ROOT / "torch_ops")]

RAW_NOTE = ("raw: mate_gemm_raw (src/raw.rs) through ctypes (torch_ops/mate/raw.py), descriptors built once; "
            "CPU time per call includes ctypes' own call cost (~0.3-0.5 us); device time = CUDA graph of "
            "back-to-back raw launches, per call")


def percentile(xs, q):
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, round(q * (len(s) - 1))))]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--library", help="libmate.so (default: mate's own search, $MATE_LIBRARY first)")
    ap.add_argument("--empty-lib", default=str(ROOT / "bench" / "host" / "libempty_op.so"))
    ap.add_argument("--device", default="cuda", help="cuda (the measurement) or cpu (a smoke run of this script)")
    ap.add_argument("--bursts", type=int, default=200)
    ap.add_argument("--calls", type=int, default=20, help="calls per burst")
    ap.add_argument("--warmup", type=int, default=20, help="warm-up bursts per arm")
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    if args.library:
        os.environ["MATE_LIBRARY"] = args.library
    import torch

    import mate

    dev = torch.device(args.device)
    cuda = dev.type == "cuda"
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    M, K, N, G = 1, 128, 128, 128
    gen = torch.Generator().manual_seed(0)
    torch.manual_seed(0)
    lin = torch.nn.Linear(K, N, bias=False)
    fr = mate.W4A16Linear.from_linear(lin, group_size=G, sym=True, dtype=torch.float16).to(dev)
    x = torch.randn(M, K, generator=gen).half().to(dev)
    out = torch.empty(M, N, dtype=torch.float16, device=dev)
    w16 = torch.randn(N, K, generator=gen).half().to(dev)
    qw, meta, s = fr.qweight, fr.meta, fr.scales
    op_out, op = torch.ops.mate.w4a16_gemm.out, torch.ops.mate.w4a16_gemm
    need = torch.ops.mate.w4a16_workspace_size(x, meta)  # preallocated, as serving does (README "Workspace")
    ws = torch.zeros(need, dtype=torch.uint8, device=dev) if need else None

    @torch.library.custom_op("mate_bench_py::w4a16_out", mutates_args=("out",), schema=(
        "(Tensor x, Tensor qweight, int[] frame_meta, Tensor scales, int group_size, Tensor(a!) out) -> ()"))
    def py_wrapper(x, qweight, frame_meta, scales, group_size, out):
        torch.ops.mate.w4a16_gemm.out(x, qweight, frame_meta, scales, None, None, None, group_size, workspace=ws,
                                      out=out)

    Ks, Ns = (8960, 1536) if cuda else (K, N)  # the split-K arms' shape (a CPU smoke run: the tiny one)
    big = mate.W4A16Linear.from_linear(torch.nn.Linear(Ks, Ns, bias=False), group_size=G, sym=True,
                                       dtype=torch.float16).to(dev)
    xs = torch.randn(M, Ks, generator=gen).half().to(dev)
    need_s = torch.ops.mate.w4a16_workspace_size(xs, big.meta)
    if cuda and need_s == 0:
        raise SystemExit(f"host_cost: {Ks} x {Ns} at M = {M} no longer splits K; pick a split shape for the split arms")
    ws_s = torch.zeros(need_s, dtype=torch.uint8, device=dev) if need_s else None
    arms = {
        "mate_out": lambda: op_out(x, qw, meta, s, None, None, None, G, workspace=ws, out=out),
        "mate": lambda: op(x, qw, meta, s, None, None, None, G, workspace=ws),
        "linear": lambda: torch.nn.functional.linear(x, w16),
        "custom_op": lambda: py_wrapper(x, qw, meta, s, G, out),
        "module": lambda: fr(x),
        "split_ws": lambda: op(xs, big.qweight, big.meta, big.scales, None, None, None, G, workspace=ws_s),
        "split_own": lambda: op(xs, big.qweight, big.meta, big.scales, None, None, None, G),
    }
    from mate.raw import RawCall

    raw_call = RawCall(x, fr, out, workspace=ws)  # W4A16Linear has the frame fields
    arms["raw"] = raw_call
    missing = {}
    if Path(args.empty_lib).is_file():
        torch.ops.load_library(args.empty_lib)
        empty = torch.ops.mate_bench.empty
        arms["empty"] = lambda: empty(x, out=out)
        empty_mate = torch.ops.mate_bench.empty_mate  # same schema and arguments as mate_out
        arms["empty_mate_schema"] = lambda: empty_mate(x, qw, meta, s, None, None, None, G, workspace=ws, out=out)
    else:
        missing["empty"] = f"{args.empty_lib} not built (run bench/host/build.sh)"

    # the timed op must compute the right thing: once against F.linear on the dequantized weight
    arms["mate_out"]()
    want = torch.nn.functional.linear(x.float(), mate.quantize.rtn_dequantize(lin.weight, group_size=G).to(dev))
    err = ((out.float() - want).norm() / want.norm()).item()
    if not err < 1e-2:
        raise SystemExit(f"host_cost: mate_out is wrong on this device (relative error {err:.3g})")

    names = list(arms)
    for _ in range(args.warmup):
        for n in names:
            for _ in range(args.calls):
                arms[n]()
            sync()
    per_call = {n: [] for n in names}
    for b in range(args.bursts):
        for n in (names if b % 2 == 0 else names[::-1]):
            f = arms[n]
            sync()
            t0 = time.perf_counter_ns()
            for _ in range(args.calls):
                f()
            t1 = time.perf_counter_ns()
            per_call[n].append((t1 - t0) / args.calls / 1e3)
    sync()

    result = {}
    for n in names:
        v = per_call[n]
        result[n] = {"median_us": statistics.median(v), "p10_us": percentile(v, 0.1), "p90_us": percentile(v, 0.9)}
    for n, why in missing.items():
        result[n] = None
    if cuda:  # device time of the raw path, as its own number (graph of back-to-back launches)
        g_stream = torch.cuda.Stream()
        with torch.cuda.stream(g_stream):
            raw_call()
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for _ in range(100):
                raw_call()
        graph.replay()
        torch.cuda.synchronize()
        times = []
        for _ in range(7):
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record()
            graph.replay()
            e1.record()
            e1.synchronize()
            times.append(e0.elapsed_time(e1) * 1e3 / 100)
        result["raw_device"] = {"median_us": statistics.median(times), "min_us": min(times), "max_us": max(times)}
    if result.get("empty_mate_schema") and result.get("mate_out"):
        d = result["mate_out"]["median_us"] - result["empty_mate_schema"]["median_us"]
        result["check_same_schema"] = {"rule": "mate_out - empty_mate_schema <= 1.5 us (same argument list)",
                                       "value_us": d, "ok": d <= 1.5}
    if result.get("split_ws") and result.get("split_own"):
        result["own_workspace_us"] = result["split_own"]["median_us"] - result["split_ws"]["median_us"]
    check = {"rule": "mate_out - empty <= 1.5 us"}
    if result.get("empty") and result.get("mate_out"):
        d = result["mate_out"]["median_us"] - result["empty"]["median_us"]
        check.update(value_us=d, ok=d <= 1.5)
    else:
        check.update(value_us=None, ok=None, why="the empty arm is missing: " + missing.get("empty", ""))
    if not cuda:
        check["note"] = "CPU smoke run: the mate arms include the CPU GEMM itself; not the host-cost measurement"

    commit = os.environ.get("MATE_COMMIT") or subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    report = dict(
        what="bench/host_cost.py",
        gpu=torch.cuda.get_device_name() if cuda else None,
        device=str(dev),
        torch=torch.__version__,
        commit=commit,
        date=time.strftime("%Y-%m-%d"),
        shape=dict(M=M, K=K, N=N, group_size=G, sym=True, dtype="float16"), workspace_bytes=need,
        split_shape=dict(M=M, K=Ks, N=Ns, workspace_bytes=need_s),
        method=(f"eager CPU issue time per call: bursts of {args.calls} back-to-back calls timed with "
                f"time.perf_counter_ns, torch.cuda.synchronize between bursts (never inside), arms interleaved "
                f"with alternating order, {args.warmup} warm-up bursts per arm, median/p10/p90 over "
                f"{args.bursts} bursts"),
        arms=result,
        missing=missing,
        raw_note=RAW_NOTE,
        check=check,
    )
    text = json.dumps(report, indent=1)
    if args.json:
        Path(args.json).write_text(text)
    for n in names:
        r = result[n]
        print(f"{n:18s} median {r['median_us']:8.2f} us  p10 {r['p10_us']:8.2f}  p90 {r['p90_us']:8.2f}")
    print("check:", json.dumps(check))
    if result.get("raw_device"):
        print(f"raw device time per call (graph): {result['raw_device']['median_us']:.2f} us")
    if "own_workspace_us" in result:
        print(f"the op's own workspace (split_own - split_ws): {result['own_workspace_us']:+.2f} us")
    if "check_same_schema" in result:
        print("check (same schema):", json.dumps(result["check_same_schema"]))
    return report


if __name__ == "__main__":
    main()
