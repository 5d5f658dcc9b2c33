"""Whole decode steps in one CUDA graph (issue 4): every layer's four projections (qkv, o, gate_up,
down) back to back, each layer with its OWN weights (Llama-8B: 32 x 4 distinct weight sets, about
3.5 GB of int4 frames — the rotation is the model itself, far beyond the 60 MB L2).

Arms, each one graph of the same structure: `mate` (w4a16_gemm.out on each layer's frame), `read`
(a pure streaming read of each layer's frame bytes — the very qweight + scales buffer mate reads,
one launch per projection), `fp16` / `bf16` (F.linear on dense [N, K] weights per layer), and with
--op-arm `mate_op` (the functional w4a16_gemm without a workspace: what torch.compile'd callers and
mate.adapter / mate.marlin_compat run, on the op's own workspace, src/device/workspace.rs). With
--between every arm runs a small torch kernel (an elementwise op on a scratch buffer, standing in
for a model's norms and activations) before each projection, and the arm `between` runs those
alone: in a model a GEMM follows a kernel that does not trigger a programmatic launch, so
`mate_net/read_net` = (mate - between) / (read - between) is the in-situ ratio (bench/NOTES.md
session 35); --projs times a subset of the projections (one layer kind at a time). Otherwise only
the GEMMs are in the graph: activations are reused buffers of the right shapes and a projection's
output does not feed the next one (no attention, norms or activation functions), so the step is
the weight-streaming part of a decode step. Graphs are captured once, then replayed in rounds
with the arms interleaved and the order alternating; per-step time: median, min, max over
rounds x replays. Every arm is checked against float64 (layer 0 of each projection) first.

Targets (../shared/DESIGN.md), at M = 1 and 16: Llama-8B mate <= 1.15x read and fp16 >= 3x mate;
Qwen2-1.5B mate <= 1.5x read and fp16 >= 2x mate. Headline config: g128, symmetric, fp16; the
others beside it: --dtype bfloat16 (the mate arms' activations and outputs) and --zp (frames with
zero points; the read arm streams their packed zeros too).

    python3 bench/decode_step.py --library target/release/libmate.so --json OUT.json
        [--models llama8b,qwen1.5b] [--m 1,16] [--dtype bfloat16] [--zp]
    python3 bench/decode_step.py --library ... --dry-run   # CPU: a tiny model, one eager step per arm, checks
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "torch_ops"), str(ROOT / "tests" / "python"), str(ROOT)]

PROJS = ("qkv", "o", "gate_up", "down")
MODELS = {  # name: (layers, {projection: (K, N)}) — shapes as in bench/decode.py
    "llama8b": (32, {"qkv": (4096, 6144), "o": (4096, 4096), "gate_up": (4096, 28672), "down": (14336, 4096)}),
    "qwen1.5b": (28, {"qkv": (1536, 2048), "o": (1536, 1536), "gate_up": (1536, 17920), "down": (8960, 1536)}),
}
TARGETS = {"llama8b": {"mate/read_max": 1.15, "fp16/mate_min": 3.0},
           "qwen1.5b": {"mate/read_max": 1.5, "fp16/mate_min": 2.0}}
# Two layers of small projections: the interpreter reduces the read arm's words one by one in Python
DRY_MODEL = (2, {"qkv": (128, 192), "o": (128, 128), "gate_up": (128, 256), "down": (256, 128)})
GROUP = 128
ARMS = ("read", "mate", "fp16", "bf16")
OP_ARM = "mate_op"  # --op-arm
BETWEEN_ARM = "between"  # --between


class Model:
    """All layers' weights for every arm. Layer l, projection p: `bufs[l][p]` int32 words holding
    qweight, scales, then with zero points the packed zeros (the frame mate reads is views into it,
    so the read arm streams exactly those bytes), `dense[dtype][l][p]` [N, K]. `dtype`: the mate
    arms' scales, activations and outputs."""

    def __init__(self, layers, shapes, device, group=GROUP, dtype=None, zp=False):
        import torch

        from bench.arms import random_weight
        from checkpoints import pack_cols, pack_frame_v2

        self.layers, self.shapes, self.device, self.group = layers, shapes, device, group
        self.dtype, self.zp = dtype or torch.float16, zp
        self.bufs, self.frames, self.keep = [], [], {}
        for layer in range(layers):
            bl, fl = {}, {}
            for p, (K, N) in shapes.items():
                qw_words, s_words = K * N // 8, (K // group) * N // 2
                z_words = (K // group) * N // 8 if zp else 0
                buf = torch.empty(qw_words + s_words + z_words, dtype=torch.int32, device=device)
                qw = buf[:qw_words].view(N // 16, K // 64, 128)
                s = buf[qw_words:qw_words + s_words].view(self.dtype).view(K // group, N)
                zw = buf[qw_words + s_words:].view(K // group, N // 8) if zp else None
                if layer == 0:  # the checked layer: values known, packed by the test-side packer
                    q, scales, z = random_weight(K, N, group, self.dtype, device, zp)
                    qw.copy_(pack_frame_v2(q))
                    s.copy_(scales)
                    if zp:
                        zw.copy_(pack_cols(z))
                    self.keep[p] = (q, scales, z)
                else:  # any int32 words are a valid frame v2 (and packed zeros) of uniform random nibbles
                    qw.copy_(torch.randint(-(2**31), 2**31 - 1, qw.shape, dtype=torch.int32, device=device))
                    s.copy_(torch.rand(K // group, N, device=device) * 0.02 + 0.002)
                    if zp:
                        zw.copy_(torch.randint(-(2**31), 2**31 - 1, zw.shape, dtype=torch.int32, device=device))
                bl[p] = buf
                fl[p] = (qw, torch.ops.mate.frame_meta(K, N, group, zp, False), s, zw)
            self.bufs.append(bl)
            self.frames.append(fl)
        self.dense = {dt: [{p: torch.randn(N, K, device=device, dtype=dt) for p, (K, N) in shapes.items()}
                           for _ in range(layers)] for dt in (torch.float16, torch.bfloat16)}

    def nbytes(self, arm):
        import torch

        if arm == BETWEEN_ARM:
            return 0
        if arm in ("mate", "read", OP_ARM):
            return sum(b.numel() * 4 for bl in self.bufs for b in bl.values())
        dt = torch.float16 if arm == "fp16" else torch.bfloat16
        return sum(w.numel() * 2 for wl in self.dense[dt] for w in wl.values())

    def steps(self, M, projs=PROJS, between=False):
        """arm -> a zero-arg function running the whole step (what the graph captures), and the
        per-M buffers it uses (made here, before capture). `projs`: the projections in the step;
        `between`: a small torch kernel before each of them (and the arm of those alone)."""
        import torch
        import torch.nn.functional as F

        from bench import read_arm

        dev = self.device
        xs = {K: torch.randn(M, K, device=dev).half() for K in {K for K, _ in self.shapes.values()}}
        xb = {K: x.bfloat16() for K, x in xs.items()}
        xm = xs if self.dtype == torch.float16 else xb  # the mate arms' activations
        outs = {p: torch.empty(M, N, dtype=self.dtype, device=dev) for p, (K, N) in self.shapes.items()}
        ws = {}
        for p, (K, N) in self.shapes.items():
            need = torch.ops.mate.w4a16_workspace_size(xm[K], self.frames[0][p][1])
            ws[p] = torch.zeros(need, dtype=torch.uint8, device=dev) if need else None
        sink = read_arm.sink_for(max(b.numel() for b in self.bufs[0].values()), dev)
        order = [(layer, p, self.shapes[p][0]) for layer in range(self.layers) for p in projs]
        scratch = torch.ones(M, 4096, dtype=torch.float16, device=dev)
        gap = (lambda: scratch.mul_(1.0)) if between else (lambda: None)

        def gaps():
            for _ in order:
                gap()

        def mate():
            for layer, p, K in order:
                gap()
                qw, meta, s, z = self.frames[layer][p]
                torch.ops.mate.w4a16_gemm.out(xm[K], qw, meta, s, z, None, None, self.group, workspace=ws[p], out=outs[p])

        def read():
            for layer, p, _ in order:
                gap()
                read_arm.read(self.bufs[layer][p], sink)

        def dense(dt, x):
            return lambda: [(gap(), F.linear(x[K], self.dense[dt][layer][p])) for layer, p, K in order]

        def mate_op():
            for layer, p, K in order:
                gap()
                qw, meta, s, z = self.frames[layer][p]
                torch.ops.mate.w4a16_gemm(xm[K], qw, meta, s, z, None, None, self.group)  # its own output

        fns = {"mate": mate, "read": read, "fp16": dense(torch.float16, xs), "bf16": dense(torch.bfloat16, xb),
               OP_ARM: mate_op, BETWEEN_ARM: gaps}
        ctx = dict(xs=xs, xb=xb, xm=xm, outs=outs, ws=ws, sink=sink, projs=projs)
        return fns, ctx

    def check(self, M, fns, ctx):
        """arm -> check dict: layer 0 of each projection against float64 (read: the sink holds the
        xor of every block of the last buffer it read)."""
        import torch
        import torch.nn.functional as F

        from bench import read_arm
        from bench.arms import graded, reference

        res = {}
        fns["mate"]()  # the whole step eagerly; outs then hold the last layer's results

        def layer0(p, K, N):  # (.out with the step's workspace, the functional op without one)
            qw, meta, sv, zv = self.frames[0][p]
            x = ctx["xm"][K]
            out = torch.empty(M, N, dtype=self.dtype, device=self.device)
            torch.ops.mate.w4a16_gemm.out(x, qw, meta, sv, zv, None, None, self.group, workspace=ctx["ws"][p], out=out)
            return out, torch.ops.mate.w4a16_gemm(x, qw, meta, sv, zv, None, None, self.group)

        errs = {"mate": [], OP_ARM: []}
        for p, (K, N) in self.shapes.items():
            q, s, z = self.keep[p]
            ref = reference(ctx["xm"][K], q, s, self.group, z)
            for arm, out in zip(("mate", OP_ARM), layer0(p, K, N)):
                errs[arm].append(graded(f"{arm}.{p}", out, ref, self.dtype))
        for arm, e in errs.items():
            res[arm] = dict(ok=all(x["ok"] for x in e), layers_checked=e)
        for arm, dt, x in (("fp16", torch.float16, ctx["xs"]), ("bf16", torch.bfloat16, ctx["xb"])):
            errs = []
            for p, (K, N) in self.shapes.items():
                w = self.dense[dt][0][p]
                errs.append(graded(f"{arm}.{p}", F.linear(x[K], w), x[K].double() @ w.double().t(), dt))
            res[arm] = dict(ok=all(e["ok"] for e in errs), layers_checked=errs)
        fns["read"]()
        last = self.bufs[-1][ctx["projs"][-1]]
        n = triton_cdiv(last.numel(), read_arm.BLOCK)
        res["read"] = dict(ok=bool(torch.equal(ctx["sink"][:n], read_arm.expected_sink(last))),
                           what="sink == xor of every 16 KB block of the step's last buffer")
        return res


def triton_cdiv(a, b):
    return -(-a // b)


def time_interleaved(torch, graphs: dict, rounds=7, per_round=3, warmup=2):
    """Per-step microseconds for each graph: rounds of `per_round` replays each, arms in turn, the
    order reversed every other round."""
    from bench.timing import replay_us, stats

    names = list(graphs)
    for n in names:
        for _ in range(warmup):
            graphs[n].replay()
    torch.cuda.synchronize()
    samples = {n: [] for n in names}
    clocks = {n: [] for n in names}  # the SM clock (NVML) after each replay, where it answers
    for r in range(rounds):
        for n in names if r % 2 == 0 else names[::-1]:
            samples[n] += replay_us(graphs[n], per_round, 0, clock=clocks[n])
    out = {n: dict(stats(v), samples=len(v)) for n, v in samples.items()}
    for n in names:
        if clocks[n]:
            out[n]["sm_clock_mhz"] = statistics.median(clocks[n])
    return out


def verdict(model, steps):
    """Ratios and the target checks from per-step medians."""
    t = {a: steps[a]["median_us"] for a in steps if "median_us" in steps.get(a, {})}
    out = {}
    if "mate" in t and "read" in t:
        out["mate/read"] = t["mate"] / t["read"]
    if "mate" in t and "fp16" in t:
        out["fp16/mate"] = t["fp16"] / t["mate"]
    if "mate" in t and "bf16" in t:
        out["bf16/mate"] = t["bf16"] / t["mate"]
    if "mate" in t and OP_ARM in t:
        out["mate_op/mate"] = t[OP_ARM] / t["mate"]
    if "mate" in t and "read" in t and BETWEEN_ARM in t and t["read"] > t[BETWEEN_ARM]:
        out["mate_net/read_net"] = (t["mate"] - t[BETWEEN_ARM]) / (t["read"] - t[BETWEEN_ARM])
    tg = TARGETS.get(model)
    if tg:
        out["target"] = dict(tg)
        if "mate/read" in out:
            out["target"]["mate/read_met"] = out["mate/read"] <= tg["mate/read_max"]
        if "fp16/mate" in out:
            out["target"]["fp16/mate_met"] = out["fp16/mate"] >= tg["fp16/mate_min"]
    return out


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--library")
    ap.add_argument("--json")
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--m", default="1,16")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--op-arm", action="store_true",
                    help=f"also time `{OP_ARM}`: the functional op without a workspace (the torch.compile / adapter path)")
    ap.add_argument("--between", action="store_true",
                    help=f"a small torch kernel before every projection in every arm, and the arm `{BETWEEN_ARM}` of those "
                         "alone: GEMMs as a model runs them (behind kernels that do not trigger a programmatic launch)")
    ap.add_argument("--projs", default=",".join(PROJS), help="the projections in the step (default all four)")
    ap.add_argument("--dtype", default="float16", choices=["float16", "bfloat16"],
                    help="the mate arms' activations, scales and outputs (the fp16 / bf16 arms keep theirs)")
    ap.add_argument("--zp", action="store_true", help="frames with zero points (asymmetric; the read arm streams them too)")
    ap.add_argument("--unchecked", action="store_true",
                    help="lab builds that compute wrong results on purpose (MATE_KERNEL_FLAGS switches): time the mate "
                         "arm whatever its float64 check says (the check is still recorded); never for a claim")
    ap.add_argument("--dry-run", action="store_true", help="CPU, a tiny 2-layer model, Triton interpreted: one eager step per arm and the checks, no timing")
    args = ap.parse_args(argv)
    if args.library:
        os.environ["MATE_LIBRARY"] = args.library
    if args.dry_run:
        os.environ["TRITON_INTERPRET"] = "1"  # read before triton is imported
    import torch

    import mate  # noqa: F401

    Ms = [int(m) for m in args.m.split(",")]
    projs = tuple(args.projs.split(","))
    if not projs or any(p not in PROJS for p in projs):
        ap.error(f"--projs: {args.projs!r}: a comma list of {', '.join(PROJS)}")
    for name in args.models.split(","):
        if name not in MODELS:
            ap.error(f"--models: unknown model {name!r}; models are {', '.join(MODELS)}")
    dtype = getattr(torch, args.dtype)
    if args.dry_run:
        return dry_run(torch, Ms, projs, args.between, dtype, args.zp)
    arms = ARMS + ((OP_ARM,) if args.op_arm else ()) + ((BETWEEN_ARM,) if args.between else ())
    torch.manual_seed(0)
    rows, failures = [], []
    for name in args.models.split(","):
        layers, shapes = MODELS[name]
        t0 = time.time()
        model = Model(layers, shapes, "cuda", dtype=dtype, zp=args.zp)
        torch.cuda.synchronize()
        print(f"{name} ({args.dtype}{', zero points' if args.zp else ''}): {layers} layers x {len(shapes)} projections built in {time.time() - t0:.1f} s; "
              + ", ".join(f"{a} {model.nbytes(a) / 1e9:.2f} GB" for a in arms), flush=True)
        for M in Ms:
            fns, ctx = model.steps(M, projs, args.between)
            checks = model.check(M, fns, ctx)
            checks = {a: c for a, c in checks.items() if a in arms}
            bad = [a for a, c in checks.items() if not c["ok"] and not (args.unchecked and a == "mate")]
            for a in bad:
                failures.append(f"{name} M={M} {a}: failed its float64 check {checks[a]}")
                print(f"   {name} M={M}: arm {a} FAILED its check: {checks[a]}", flush=True)
            from bench.timing import capture

            graphs = {a: capture([fns[a]]) for a in arms if a not in bad}
            steps = time_interleaved(torch, graphs, rounds=args.rounds)
            del graphs
            for a in bad:
                steps[a] = {"error": "failed its float64 check"}
            row = dict(model=name, layers=layers, M=M, projs=list(projs), between=args.between, dtype=args.dtype, zp=args.zp,
                       gemms_per_step=layers * len(projs), steps=steps,
                       checks=checks, bytes_per_step={a: model.nbytes(a) for a in arms}, **verdict(name, steps))
            rows.append(row)
            print(line(row), flush=True)
        del model, fns, ctx
        torch.cuda.empty_cache()
    if args.json:
        from bench.timing import provenance

        Path(args.json).write_text(json.dumps(dict(
            what="bench/decode_step.py", gpu=torch.cuda.get_device_name(), **provenance(ROOT, args.library), date=time.strftime("%Y-%m-%d"),
            torch=torch.__version__, group=GROUP, dtype=f"{args.dtype} (the fp16 / bf16 arms: their own)", zp=args.zp,
            failures=failures,
            shapes={n: dict(layers=MODELS[n][0], projections={p: dict(K=k, N=nn) for p, (k, nn) in MODELS[n][1].items()})
                    for n in args.models.split(",")},
            method=f"one CUDA graph per arm per step: layers x (qkv, o, gate_up, down) GEMMs back to back, every layer its "
                   f"own weights (no rotation beyond the model); activations reused, outputs not chained; eager warm-up, "
                   f"2 warm-up replays, then {args.rounds} rounds x 3 replays with arms interleaved and the order "
                   f"alternating; per-step median/min/max (us); each arm checked against float64 (layer 0 of every "
                   f"projection) first; the SM clock (NVML) after each timed replay, median per arm (sm_clock_mhz)",
            rows=rows), indent=1))
    if failures:
        print(f"{len(failures)} arm failure(s):\n  " + "\n  ".join(failures), file=sys.stderr)
        return 1
    return 0


def line(row):
    s = f"{row['model']:9s} M={row['M']:3d} step us:"
    for a in row["steps"]:
        st = row["steps"].get(a, {})
        s += f"  {a} {st['median_us']:9.1f} [{st['min_us']:.1f}-{st['max_us']:.1f}]" if "median_us" in st else f"  {a} ERR"
    for k in ("mate/read", "fp16/mate", "bf16/mate", "mate_op/mate", "mate_net/read_net"):
        if k in row:
            s += f"  {k} {row[k]:.2f}"
    tg = row.get("target", {})
    if "mate/read_met" in tg:
        s += f"  target read<={tg['mate/read_max']}: {'met' if tg['mate/read_met'] else 'MISSED'}"
    if "fp16/mate_met" in tg:
        s += f"  fp16>={tg['fp16/mate_min']}x: {'met' if tg['fp16/mate_met'] else 'MISSED'}"
    clocks = [f"{a} {row['steps'][a]['sm_clock_mhz']:.0f}" for a in row["steps"] if "sm_clock_mhz" in row["steps"].get(a, {})]
    if clocks:
        s += "  MHz " + " ".join(clocks)
    return s


def dry_run(torch, Ms, projs=PROJS, between=False, dtype=None, zp=False):
    """The tiny model on the CPU: each arm's step run once eagerly (the function a graph would
    capture) and every check; no timing (CPU graphs do not exist)."""
    torch.manual_seed(0)
    layers, shapes = DRY_MODEL
    model = Model(layers, shapes, "cpu", dtype=dtype, zp=zp)
    bad = 0
    for M in Ms:
        fns, ctx = model.steps(M, projs, between)
        for a in ("fp16", "bf16", BETWEEN_ARM):  # check() runs the whole mate and read steps itself
            fns[a]()
        checks = model.check(M, fns, ctx)
        for a, c in checks.items():
            bad += not c["ok"]
            print(f"dry-run layers={layers} M={M} arm={a} {'ok' if c['ok'] else 'BAD'} {c}", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
