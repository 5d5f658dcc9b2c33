#!/usr/bin/env python3
"""Drives mate's op through a sweep of small problems, for scripts/sanitize.sh to run under
compute-sanitizer (memcheck, racecheck, initcheck, synccheck). Exits non-zero on any wrong result.

The sweep: M in 1, 3, 17, 33, 100, 255 (and 0) over several K x N, cycling through every group size
(-1/32/64/128), symmetric and zero-point, fp16 and bf16, bias on/off and act order; then every one
of those 32 configurations, with and without act order, on one shape. Some cases use a padded row
stride or 3-D x. Each case runs, for each kernel variant in VARIANTS:

* the functional overload (its output comes from torch.empty: uninitialised, so initcheck sees a
  kernel that reads the output before writing it);
* the .out overload into a NaN-poisoned output (so unwritten elements show);

and checks, on the CPU: no NaN left, the error against the float64 GPTQ reference within
tests/python/checkpoints.BOUND (total, and 5x per column), and functional == .out bit for bit.

Checkpoints, frames and references are made on the CPU and only the inputs are copied over, so
the sanitizer sees few kernels besides mate's. Every tensor is exactly sized (its own allocation
when torch's caching allocator is off, as sanitize.sh sets), so an access past its end is outside
any allocation.

Usage: sanitize_driver.py [--device cuda|cpu] [--limit N] [--shapes KxN,...] [--json PATH] [--variants planner|all|SYM,...]
(`--device cpu` is the CI smoke run: the same sweep through the CPU implementation.)
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import itertools
import json
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "torch_ops"), str(ROOT / "tests" / "python")]

import torch  # noqa: E402

import mate  # noqa: E402,F401  (loads the library: $MATE_LIBRARY, else target/release)
from checkpoints import BOUND, errors, frame_from_gptq_v2, random_gptq, reference  # noqa: E402

# ---------------------------------------------------------------------------------------------
# HOOK (kernel variants). VARIANTS lists what every case runs under; None = "the planner's choice"
# (no override). To sweep every compiled variant through the planner's test-only override, put
# the variants' symbols here (kernels/variants.def), or pass --variants all / --variants SYM,SYM.
# force_variant() below uses torch.ops.mate._force_variant(symbol) when the library has it.
VARIANTS: list = [None]


@contextlib.contextmanager
def force_variant(spec):
    """Makes every call inside use the given variant. None: the planner chooses (no override)."""
    if spec is None:
        yield
        return
    if not hasattr(torch.ops.mate, "_force_variant"):
        raise NotImplementedError(f"variant {spec!r}: this library has no test-only override (_force_variant)")
    torch.ops.mate._force_variant(spec)
    try:
        yield
    finally:
        torch.ops.mate._force_variant(None)


def variants_from_arg(arg: str | None) -> list:
    if arg is None or arg == "planner":
        return list(VARIANTS)
    if arg == "all":
        return [None] + list(torch.ops.mate._variants())
    return [None if v == "planner" else v for v in arg.split(",")]


# ---------------------------------------------------------------------------------------------

M_LIST = [1, 3, 17, 33, 100, 255]
SHAPES = [(64, 64), (256, 192), (384, 320), (1024, 128), (512, 512)]  # K x N
CONFIGS = list(itertools.product([-1, 32, 64, 128], [True, False], [torch.float16, torch.bfloat16], [False, True]))


def build_cases():
    """(M-or-lead, K, N, group, sym, dtype, bias, act order, row pad) tuples."""
    cases = []
    i = 0
    for (K, N), M in itertools.product(SHAPES, M_LIST):
        while True:
            g, sym, dtype, bias = CONFIGS[i % len(CONFIGS)]
            i += 1
            if g == -1 or K % g == 0:
                break
        act = i % 3 == 0
        pad = 8 * (i % 4 == 1) + 64 * (i % 4 == 3)
        lead = (M,) if i % 5 else ((3, M // 3) if M % 3 == 0 else (1, M))
        cases.append((lead, K, N, g, sym, dtype, bias, act, pad))
    for (g, sym, dtype, bias), act in itertools.product(CONFIGS, [False, True]):
        cases.append(((33,), 256, 192, g, sym, dtype, bias, act, 8 if bias else 0))
    cases.append(((0,), 256, 128, 64, False, torch.float16, True, False, 0))
    cases.append(((2, 0), 128, 64, -1, True, torch.bfloat16, False, True, 0))
    return cases


def case_name(c):
    lead, K, N, g, sym, dtype, bias, act, pad = c
    return (
        f"x{list(lead)}xK{K}-N{N}-g{g}-{'sym' if sym else 'zp'}-{str(dtype)[6:]}"
        + ("-bias" if bias else "")
        + ("-act" if act else "")
        + (f"-pad{pad}" if pad else "")
    )


def run_case(c, device, seed):
    """Returns (calls made, list of problems found)."""
    lead, K, N, g, sym, dtype, with_bias, act, pad = c
    gen = torch.Generator("cpu").manual_seed(seed)
    ck = random_gptq(K, N, g, sym, dtype, "cpu", desc_act=act, gen=gen)
    fr_cpu = frame_from_gptq_v2(ck)
    wide = torch.randn(*lead, K + pad, generator=gen).to(dtype)
    bias = torch.randn(N, generator=gen).to(dtype) if with_bias else None
    ref = reference(ck, wide[..., :K], bias)

    def dev(t):
        return None if t is None else t.to(device).contiguous()

    fr = dataclasses.replace(
        fr_cpu, qweight=dev(fr_cpu.qweight), scales=dev(fr_cpu.scales), zeros=dev(fr_cpu.zeros), perm=dev(fr_cpu.perm)
    )
    x = dev(wide)[..., :K]  # padded rows: the slice is taken on the device
    b = dev(bias)
    problems, calls = [], 0
    for spec in VARIANTS:
        tag = "planner" if spec is None else str(spec)
        with force_variant(spec):
            try:
                y = torch.ops.mate.w4a16_gemm(x, *fr.args(), b, g)
            except ValueError as e:
                if "forced variant cannot serve" in str(e):
                    continue  # outside that variant's envelope (token tile, group): not applicable
                raise
            out = torch.full((*lead, N), float("nan"), dtype=dtype, device=device)
            torch.ops.mate.w4a16_gemm.out(x, *fr.args(), b, g, out=out)
            calls += 2
        if device != "cpu":
            torch.cuda.synchronize()
        y, out = y.cpu(), out.cpu()
        if out.shape != (*lead, N) or y.shape != out.shape:
            problems.append(f"[{tag}] shapes {list(y.shape)} / {list(out.shape)}, expected {[*lead, N]}")
            continue
        if out.numel() == 0:
            continue
        if out.isnan().any():
            problems.append(f"[{tag}] {int(out.isnan().sum())} outputs unwritten (NaN poison left)")
            continue
        total, col = errors(out, ref)
        bound = BOUND[dtype]
        if not (total <= bound and col <= 5 * bound):
            problems.append(
                f"[{tag}] off the float64 reference: total {total:.3e} (bound {bound}), column {col:.3e} (bound {5 * bound})"
            )
        if not torch.equal(y, out):
            problems.append(f"[{tag}] functional and .out differ in {int((y != out).sum())} elements")
    return calls, problems


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    ap.add_argument("--limit", type=int, default=None, help="run only the first N cases")
    ap.add_argument(
        "--shapes", default=None, help="only the cases of these KxN shapes (e.g. 1024x128,512x512: forced variants that need N % 128 == 0)"
    )
    ap.add_argument("--json", default=None, help="write a summary here")
    ap.add_argument(
        "--variants", default=None, help="planner (default: VARIANTS), all, or a comma list of variant symbols"
    )
    args = ap.parse_args(argv)
    VARIANTS[:] = variants_from_arg(args.variants)
    if args.device == "cuda" and not torch.cuda.is_available():
        print("sanitize_driver: CUDA is not available", file=sys.stderr)
        return 2
    cases = build_cases()
    if args.shapes:
        keep = {tuple(int(v) for v in s_.split("x")) for s_ in args.shapes.split(",")}
        cases = [c for c in cases if (c[1], c[2]) in keep]
    cases = cases[: args.limit]
    t0 = time.time()
    failed, calls, crashed = [], 0, []
    for i, c in enumerate(cases):
        try:
            n, problems = run_case(c, args.device, seed=1000 + i)
        except Exception as e:  # noqa: BLE001 - any exception inside the envelope is a failure
            crashed.append(f"{case_name(c)}: {type(e).__name__}: {e}")
            traceback.print_exc()
            continue
        calls += n
        failed += [f"{case_name(c)}: {p}" for p in problems]
    ok = not failed and not crashed
    summary = {
        "device": torch.cuda.get_device_name() if args.device == "cuda" else "cpu",
        "cases": len(cases),
        "variants": [v if v is None or isinstance(v, (str, int)) else str(v) for v in VARIANTS],
        "op_calls": calls,
        "wrong_results": len(failed),
        "exceptions": len(crashed),
        "failures": (failed + crashed)[:100],
        "seconds": round(time.time() - t0, 1),
        "ok": ok,
    }
    if args.json:
        Path(args.json).write_text(json.dumps(summary, indent=1))
    for f in (failed + crashed)[:20]:
        print("WRONG:", f, file=sys.stderr)
    print(
        f"sanitize_driver: {len(cases)} cases x {len(VARIANTS)} variant(s), {calls} op calls on {args.device}, "
        f"{len(failed)} wrong results, {len(crashed)} exceptions, {summary['seconds']} s"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
