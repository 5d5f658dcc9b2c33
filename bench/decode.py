"""Decode-path benchmark (M <= 64): per-call device time in a CUDA graph of back-to-back calls over
rotating weight copies (>= 10x L2), median of 7 replays after warm-up (bench/timing.py).

Arms, all in one run (bench/arms.py): `read` (a pure streaming read of the bytes the GEMM must
read: qweight + scales (+ zeros), Triton), `mate` (torch.ops.mate.w4a16_gemm.out), `triton` (the
straightforward Triton W4A16 peer, bench/triton_w4a16.py), `tinygemm` (torch._weight_int4pack_mm,
bf16 activations), `fp16` / `bf16` (torch.nn.functional.linear). Each arm has its own rotating
copies of its own format and is checked against float64 at every (shape, M) before it is timed;
an arm that fails its check (or cannot be built) is recorded with its error, not timed, and the
script exits 1 after writing the JSON. Arms run interleaved per M, order alternating; with
--orders 2 every M runs in both orders and each arm reports the median of its two passes (at
prefill sizes the arm right after cuBLAS reads 5-16 % slow; bench/NOTES.md session 22); forced
arms (--variants) take their turns with the others. Prefill sizes also want --sustain-ms 1000
(the power-capped clock; README, bench/NOTES.md session 23).
Headline config: group 128, symmetric, fp16, no act order.

    python3 bench/decode.py --library target/release/libmate.so --json OUT.json [--png OUT.png]
    python3 bench/decode.py --library ... --dry-run   # CPU: tiny versions of every arm, checks only
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import statistics
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


def shape_of(ap, name):
    """A --shapes entry: a name of SHAPES or KxN (planner crossover sweeps)."""
    if name in SHAPES:
        return SHAPES[name]
    k, x, n = name.partition("x")
    if x and k.isdigit() and n.isdigit() and int(k) % 64 == 0 and int(n) % 64 == 0:
        return int(k), int(n)
    ap.error(f"--shapes: {name!r} is neither a known shape ({', '.join(SHAPES)}) nor KxN with K and N multiples of 64")


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--library")
    ap.add_argument("--json")
    ap.add_argument("--png")
    ap.add_argument("--shapes", default=",".join(SHAPES), help="comma list of names above or KxN (e.g. 4096x4096)")
    ap.add_argument("--m", default=",".join(map(str, M_LIST)))
    ap.add_argument("--arms", default="read,mate,triton,tinygemm,fp16,bf16")
    ap.add_argument("--group", type=int, default=128)
    ap.add_argument("--zp", action="store_true")
    ap.add_argument("--act", action="store_true", help="act order: the mate arm gathers x by a random permutation")
    ap.add_argument("--dtype", default="float16", choices=["float16", "bfloat16"])
    ap.add_argument("--variants", default="",
                    help="comma list of extra mate arms, each a variant symbol to force, SYMBOL@S (also split S: CTAs per "
                         "tile of bulk / bwg plans), @S (the routed variant, split S), or 'dec' (every dec variant); "
                         "they take their turns with the other arms (both orders with --orders 2)")
    ap.add_argument("--orders", type=int, choices=(1, 2), default=1,
                    help="2: time every M's arms in both orders and report each arm's median over the two "
                         "(at prefill sizes the arm right after cuBLAS reads 5-16 %% slow: bench/NOTES.md session 22)")
    ap.add_argument("--sustain-ms", type=float, default=None,
                    help="GPU time of warm-up replays before each arm's timed ones (default: bench/timing.py "
                         "WARMUP_MS, 30 ms); ~1000 puts every prefill arm at its own power-capped steady clock "
                         "(short bursts land anywhere on the clock's fall: bench/NOTES.md session 23)")
    ap.add_argument("--dry-run", action="store_true", help="CPU, tiny shapes, Triton interpreted: build and check every arm, no timing")
    args = ap.parse_args(argv)
    if args.library:
        os.environ["MATE_LIBRARY"] = args.library
    if args.dry_run:
        os.environ["TRITON_INTERPRET"] = "1"  # read before triton is imported
    import torch

    import mate  # noqa: F401
    from bench import arms as A
    from bench.timing import WARMUP_MS

    sustain_ms = WARMUP_MS if args.sustain_ms is None else args.sustain_ms
    if sustain_ms < WARMUP_MS:
        ap.error(f"--sustain-ms {args.sustain_ms:g}: below WARMUP_MS = {WARMUP_MS:g}, the warm-up every arm gets; give {WARMUP_MS:g} or more")

    dtype = getattr(torch, args.dtype)
    arms = args.arms.split(",")
    for a in arms:
        if a not in A.ARMS:
            ap.error(f"--arms: unknown arm {a!r}; arms are {', '.join(A.ARMS)}")
    if args.dry_run:
        return dry_run(torch, A, arms, args, dtype)
    from bench.timing import copies_for, graph_time_us
    graph_time_us = functools.partial(graph_time_us, warmup_ms=sustain_ms)

    torch.manual_seed(0)
    rows, failures = [], []
    for name in args.shapes.split(","):
        K, N = shape_of(ap, name)
        G = K if args.group == -1 else args.group
        w_bytes = A.mate_bytes(K, N, G, args.zp)
        built = {}
        for a in arms:
            try:
                built[a] = A.build(a, K, N, args.group, dtype, "cuda", args.zp, act=args.act)
            except Exception as e:  # an arm that cannot serve this config: recorded, not fatal
                built[a] = f"{type(e).__name__}: {e}"
                failures.append(f"{name} {a}: {built[a]}")
                print(f"   {name}: arm {a} not built: {built[a]}", flush=True)
        mate_ok = "mate" in built and not isinstance(built["mate"], str)
        forced = forced_specs(torch, args.variants) if mate_ok else []
        for mi, M in enumerate(map(int, args.m.split(","))):
            x = torch.randn(M, K, device="cuda").to(dtype)
            res = dict(shape=name, K=K, N=N, M=M, group=args.group, zp=args.zp, act=args.act, dtype=args.dtype,
                       copies=copies_for(w_bytes), bytes=w_bytes)
            timings, plans, skipped = {}, {}, set()
            # the forced arms take their turns with the others (both orders with --orders 2)
            for order in arm_orders(arms + forced, mi, args.orders):
                for a in order:
                    is_forced = a in forced and a not in arms
                    arm = built["mate"] if is_forced else built[a]
                    if isinstance(arm, str):
                        res[a] = {"error": arm}
                        continue
                    if a in res or a in skipped:  # failed, or cannot serve, in an earlier pass
                        continue
                    xa = x.to(arm.dtype)
                    try:
                        with forcing(torch, a) if is_forced else contextlib.nullcontext():
                            if a not in timings:  # checked once, before its first timing
                                chk = arm.check(xa)  # (check and calls size the buffers for a forced plan)
                                if not chk["ok"]:
                                    raise AssertionError(f"failed its float64 check: {chk}")
                                timings[a] = (chk, [])
                                if is_forced:
                                    plans[a] = launch_plan(torch, arm, xa)
                            timings[a][1].append(graph_time_us(arm.calls(xa)))
                    except Exception as e:  # recorded and reported; the other arms still run
                        if is_forced and "cannot serve" in str(e):  # a forced variant that cannot serve this M / dtype
                            skipped.add(a)
                            timings.pop(a, None)
                            continue
                        res[a] = {"error": f"{type(e).__name__}: {e}"}
                        if not is_forced:  # (a forced arm's failure is recorded in its row, not fatal)
                            failures.append(f"{name} M={M} {a}: {res[a]['error']}")
                        print(f"   {name} M={M}: arm {a} FAILED: {res[a]['error']}", flush=True)
            for a, (chk, passes) in timings.items():
                if a in res:
                    continue
                if a in plans:
                    res[a] = dict(combine_passes(passes), check=chk, plan=plans[a])
                    continue
                arm = built[a]
                res[a] = dict(combine_passes(passes), check=chk, copies=arm.copies, bytes_per_copy=arm.nbytes)
                if a == "mate":
                    res[a]["plan"] = launch_plan(torch, arm, x.to(arm.dtype))
            if forced:
                best = sorted((res[k]["median_us"], k) for k in res if (k == "mate" or k in forced) and "median_us" in res.get(k, {}))
                print(f"   {name} M={M}: " + "  ".join(f"{k.replace('mate_dec_', '')}={t:.2f}" for t, k in best[:6]), flush=True)
            rows.append(res)
            print(table_line(res, arms), flush=True)
        del built
        torch.cuda.empty_cache()
    if args.json:
        from bench.timing import provenance

        Path(args.json).write_text(json.dumps(dict(
            what="bench/decode.py", gpu=torch.cuda.get_device_name(), **provenance(ROOT, args.library), date=time.strftime("%Y-%m-%d"),
            torch=torch.__version__, arms=arms, failures=failures,
            method="CUDA graph of back-to-back calls over rotating weight copies (>= 10x 60 MB L2, each arm its own "
                   "format), 2 warm-up replays topped up to " + f"{sustain_ms:g}" + " ms of GPU time (bench/timing.py WARMUP_MS = 30; more: --sustain-ms) + 7 timed replays, the SM clock (NVML) after each; per-call median/min/max (us); arms interleaved per M, order "
                   "alternating" + (", every M timed in both orders (median of the two passes' medians; passes kept)" if args.orders == 2 else "")
                   + "; each arm checked against float64 (rel_err, worst_col <= 5x bound) before timing",
            orders=args.orders, sustain_ms=sustain_ms,
            rows=rows), indent=1))
    if args.png:
        plot(rows, args.png)
    if failures:
        print(f"{len(failures)} arm failure(s):\n  " + "\n  ".join(failures), file=sys.stderr)
        return 1
    return 0


def arm_orders(arms, mi, orders):
    """The arm orders of the mi-th M: one pass, reversed at every other M; with orders = 2 that
    pass and its reverse, so each arm is timed once before and once after each other arm (the
    arm right after cuBLAS reads 5-16 % slow at prefill sizes: bench/NOTES.md session 22)."""
    first = list(arms) if mi % 2 == 0 else list(arms)[::-1]
    return [first] if orders == 1 else [first, first[::-1]]


def combine_passes(passes):
    """One arm's timings over its passes (graph_time_us dicts): the median of the passes' medians,
    the extremes over all of them; with several passes, the passes themselves too."""
    out = dict(passes[0])
    out["median_us"] = statistics.median(p["median_us"] for p in passes)
    out["min_us"] = min(p["min_us"] for p in passes)
    out["max_us"] = max(p["max_us"] for p in passes)
    clocks = [p["sm_clock_mhz"] for p in passes if "sm_clock_mhz" in p]
    out.pop("sm_clock_mhz", None)
    if len(clocks) == len(passes):  # a clock for every pass or none
        out["sm_clock_mhz"] = statistics.median(clocks)
    if len(passes) > 1:
        out["passes"] = list(passes)
    return out


def launch_plan(torch, arm, x):
    """The launches of one mate call (kernel, grid, split, ...: torch.ops.mate._launch_log), so
    each row records which plan it timed."""
    torch.ops.mate._launch_log(True)
    try:
        arm.calls(x)[0]()  # calls() prepares the output for this M first
        torch.cuda.synchronize()
    finally:
        log = torch.ops.mate._launch_log(False)
    return log


def forced_specs(torch, variants):
    """--variants: extra mate arms, each a variant symbol to force, SYMBOL@S, @S (the routed
    variant, split S), any of these (or nothing: the routed plan) with /nopairs (bwg's paired
    splits planned unpaired: torch.ops.mate._pairs(False)), or 'dec' (every dec variant)."""
    if variants == "dec":
        return [v for v in torch.ops.mate._variants() if "_dec_" in v]
    return [v for v in variants.split(",") if v]


@contextlib.contextmanager
def forcing(torch, spec):
    """The plans of the mate arm with `spec`'s variant and / or split forced (test / lab hooks),
    planning restored after."""
    spec, _, flag = spec.partition("/")
    if flag not in ("", "nopairs"):
        raise ValueError(f"--variants: {spec}/{flag}: the only flag after '/' is 'nopairs'")
    sym, _, split = spec.partition("@")
    try:
        torch.ops.mate._force_variant(sym or None)
        torch.ops.mate._force_split(int(split) if split else None)
        if flag:
            torch.ops.mate._pairs(False)
        yield
    finally:
        torch.ops.mate._force_variant(None)
        torch.ops.mate._force_split(None)
        if flag:
            torch.ops.mate._pairs(True)


def us(res, arm):
    r = res.get(arm)
    return r["median_us"] if isinstance(r, dict) and "median_us" in r else None


def table_line(res, arms):
    line = f"{res['shape']:18s} M={res['M']:3d}"
    for arm in arms:
        t = us(res, arm)
        line += f"  {arm} {t:8.2f}" if t is not None else f"  {arm} {'ERR':>8s}"
    mate, read, fp16 = us(res, "mate"), us(res, "read"), us(res, "fp16")
    if mate and read:
        line += f"  mate/read {mate / read:5.2f}"
    if mate and fp16:
        line += f"  fp16/mate {fp16 / mate:5.2f}"
    clocks = [f"{arm} {res[arm]['sm_clock_mhz']:.0f}" for arm in arms if isinstance(res.get(arm), dict) and "sm_clock_mhz" in res[arm]]
    if clocks:
        line += "  MHz " + " ".join(clocks)
    return line


DRY_SHAPE = (256, 128)  # K, N: the smallest that every arm's layout accepts (tinygemm: K % 128)


def dry_run(torch, A, arms, args, dtype):
    """Every arm built tiny on the CPU (Triton interpreted) and checked against float64; every
    call of every copy run once. No timing: CPU graphs do not exist."""
    torch.manual_seed(0)
    K, N = DRY_SHAPE
    bad = 0
    for M in (1, 16):
        x = torch.randn(M, K).to(dtype)
        for a in arms:
            if a == "triton" and dtype == torch.bfloat16:
                # Triton 3.6's interpreter converts int -> bf16 wrongly (a 16x16 probe: NaN); the GPU run checks it
                print(f"dry-run K={K} N={N} M={M} arm={a} skipped: the interpreter cannot run bf16", flush=True)
                continue
            if args.act and a in ("triton", "tinygemm"):
                print(f"dry-run K={K} N={N} M={M} arm={a} skipped: serves no act-order frame", flush=True)
                continue
            arm = A.build(a, K, N, args.group, dtype, "cpu", args.zp, copies=2, act=args.act)
            xa = x.to(arm.dtype)
            chk = arm.check(xa)
            for c in arm.calls(xa):
                c()
            bad += not chk["ok"]
            print(f"dry-run K={K} N={N} M={M} arm={a} {'ok' if chk['ok'] else 'BAD'} {chk}", flush=True)
    return 1 if bad else 0


def plot(rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    shapes = list(dict.fromkeys(r["shape"] for r in rows))
    fig, axes = plt.subplots(3, 4, figsize=(16, 10), squeeze=False)
    for ax, sh in zip(axes.flat, shapes):
        rs = [r for r in rows if r["shape"] == sh]
        for arm in ("read", "mate", "triton", "tinygemm", "fp16", "bf16"):
            pts = [(r["M"], us(r, arm)) for r in rs if us(r, arm) is not None]
            if pts:
                ax.plot(*zip(*pts), marker="o", label=arm)
        ax.set_xscale("log", base=2)
        ax.set_title(sh)
        ax.set_xlabel("M")
        ax.set_ylabel("us / call")
    axes.flat[0].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=80)


if __name__ == "__main__":
    sys.exit(main())
