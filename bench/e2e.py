"""Whole decode steps: a Llama-architecture model (random weights from a transformers config), every
decoder Linear W4A16 through mate.hf.swap_linears (qkv and gate_up fused; embedding and lm_head
fp16), against the same model in fp16, in one run.

Per batch (default 1, 8, 32), each arm's decode step is captured in one CUDA graph over a
transformers StaticCache (prompt of 512 tokens prefilled eagerly first), and timed by CUDA events
around single replays (median / min / max of --replays, after warm-up; the cache position is
reset to the prompt length before every replay, outside the events). Arms:

* ``fp16``: the float model;
* ``w4a16``: the swapped model;
* ``nongemm``: the swapped model with every W4A16Linear replaced by a module returning a
  preallocated zero tensor of the right shape: the step's non-GEMM time;
* ``reads`` (once, not per batch): a graph of pure streaming reads (bench/read_arm.py), one
  per W4A16Linear, of as many bytes as its frame tensors (qweight, scales, zeros, perm);
* ``inreads``: the model with every W4A16Linear replaced by a pure read of as many bytes (a
  buffer of its own) followed by the zero stand-in: the GEMMs' floor in situ, between the
  step's other kernels (``gemm_over_inreads`` = (w4a16 - nongemm) / (inreads - nongemm)).

Check at batch 1: ``w4a16_step <= nongemm + 1.15 * reads``. Numerics (batch 1): teacher-forced
over --steps decode steps after the prompt, the W4A16 model's logits against the same model with
the RTN-dequantized weights in fp16 nn.Linear (relative error per step, top-5 overlap).

    python3 bench/e2e.py --model llama8b --library target/release/libmate.so --json OUT.json
    (--model llama8b, qwen1.5b or qwen7b: Qwen2-7B's serving shapes, which several routing rules name)
    python3 bench/e2e.py --tiny --device cpu --json OUT.json     # CPU smoke test (eager, no graphs)
"""

from __future__ import annotations

import argparse
import copy
import inspect
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "torch_ops"), str(ROOT)]

MODELS = {
    # Llama-3-8B: qkv 4096x6144, o 4096x4096, gate_up 4096x28672, down 14336x4096 (DESIGN.md)
    "llama8b": dict(arch="llama", hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
                    num_attention_heads=32, num_key_value_heads=8, vocab_size=128256, rope_theta=500000.0,
                    max_position_embeddings=8192, tie_word_embeddings=False),
    # Qwen2-1.5B: qkv 1536x2048 (with bias), o 1536x1536, gate_up 1536x17920, down 8960x1536
    "qwen1.5b": dict(arch="qwen2", hidden_size=1536, intermediate_size=8960, num_hidden_layers=28,
                     num_attention_heads=12, num_key_value_heads=2, vocab_size=151936, rope_theta=1000000.0,
                     max_position_embeddings=32768, tie_word_embeddings=True),
    # Qwen2-7B, the serving shapes the routing rules name (bench/NOTES.md sessions 43-45): qkv
    # 3584x4608 (with bias), o 3584x3584, gate_up 3584x37888, down 18944x3584
    "qwen7b": dict(arch="qwen2", hidden_size=3584, intermediate_size=18944, num_hidden_layers=28,
                   num_attention_heads=28, num_key_value_heads=4, vocab_size=152064, rope_theta=1000000.0,
                   max_position_embeddings=32768, tie_word_embeddings=False),
    # CPU smoke test
    "tiny": dict(arch="llama", hidden_size=256, intermediate_size=512, num_hidden_layers=2, num_attention_heads=4,
                 num_key_value_heads=2, vocab_size=512, max_position_embeddings=1024, tie_word_embeddings=False),
}


def build_model(name, device, dtype, seed):
    import torch
    import transformers

    spec = dict(MODELS[name])
    arch = spec.pop("arch")
    if arch == "qwen2":
        cfg, cls = transformers.Qwen2Config(**spec), transformers.Qwen2ForCausalLM
    else:
        cfg, cls = transformers.LlamaConfig(**spec), transformers.LlamaForCausalLM
    torch.manual_seed(seed)
    prev = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        with torch.device(device):
            model = cls(cfg)
    finally:
        torch.set_default_dtype(prev)
    return model.eval().requires_grad_(False)


class ZeroLinear:
    """Factory of no-op stand-ins for W4A16Linear: each returns a view of a preallocated zero
    buffer shared by every layer with the same N (nothing writes into projection outputs)."""

    def __init__(self, max_rows, dtype, device):
        self.max_rows, self.dtype, self.device, self.bufs = max_rows, dtype, device, {}

    def __call__(self, out_features):
        import torch
        from torch import nn

        buf = self.bufs.get(out_features)
        if buf is None:
            buf = self.bufs[out_features] = torch.zeros(self.max_rows, out_features, dtype=self.dtype,
                                                        device=self.device)

        class Zero(nn.Module):
            def forward(self, x):
                rows = x.numel() // x.shape[-1]
                return buf[:rows].view(*x.shape[:-1], out_features)

        return Zero()


class ReadThenZero:
    """Factory of stand-ins for W4A16Linear that stream as many bytes as the layer's frame tensors
    (a buffer of their own, bench/read_arm.py on CUDA) and then return the ZeroLinear view."""

    def __init__(self, zero, device):
        self.zero, self.device, self.bufs = zero, device, []

    def __call__(self, layer):
        import torch
        from torch import nn

        n = frame_bytes(layer)
        buf = torch.full((-(-n // 4),), 7, dtype=torch.int32, device=self.device)
        self.bufs.append(buf)
        zero = self.zero(layer.out_features)
        if buf.is_cuda:
            from bench.read_arm import read, sink_for

            sink = sink_for(buf.numel(), self.device)
            stream = lambda: read(buf, sink)  # noqa: E731
        else:
            stream = buf.max

        class Read(nn.Module):
            def forward(self, x):
                stream()
                return zero(x)

        return Read()


def frame_bytes(layer):
    return sum(t.numel() * t.element_size() for t in (layer.qweight, layer.scales, layer.zeros, layer.perm)
               if t is not None)


def w4a16_sites(model):
    """(parent, name, layer) of every W4A16Linear, so stand-ins can replace them and be swapped again."""
    from mate.linear import W4A16Linear

    return [(parent, cname, child) for _, parent in list(model.named_modules())
            for cname, child in list(parent.named_children()) if isinstance(child, W4A16Linear)]


def replace_w4a16(sites, make):
    for parent, cname, layer in sites:
        setattr(parent, cname, make(layer))


class Decoder:
    """One decode step of `model` at batch B over a StaticCache, for eager calls and graph capture.
    Handles both cache APIs: transformers >= 5 (the position lives in each layer's
    `cumulative_length` device tensor; reset in place) and older ones (`cache_position`)."""

    def __init__(self, model, batch, max_cache_len, device, dtype):
        import torch
        from transformers import StaticCache

        self.model, self.batch, self.device = model, batch, device
        try:
            self.cache = StaticCache(config=model.config, max_cache_len=max_cache_len)
        except TypeError:  # transformers 4.x
            self.cache = StaticCache(config=model.config, max_batch_size=batch, max_cache_len=max_cache_len,
                                     device=device, dtype=dtype)
        params = inspect.signature(model.forward).parameters
        self.cache_kw = "cache" if "cache" in params else "past_key_values"
        self.new_api = hasattr(self.cache, "layers") and hasattr(self.cache.layers[0], "cumulative_length")
        self.ids = torch.zeros(batch, 1, dtype=torch.long, device=device)
        self.pos = torch.zeros(1, dtype=torch.long, device=device)

    def forward(self, ids, start):
        import torch

        kw = {self.cache_kw: self.cache, "use_cache": True}
        if not self.new_api:
            kw["cache_position"] = torch.arange(start, start + ids.shape[1], device=self.device)
        return self.model(input_ids=ids, **kw).logits

    def prefill(self, ids):
        self.set_position(0)
        out = self.forward(ids, 0)
        self.set_position(ids.shape[1])
        return out

    def set_position(self, p):
        if self.new_api:
            for layer in self.cache.layers:
                layer.cumulative_length.fill_(p)
        self.pos.fill_(p)

    def step(self):
        """The captured step: reads self.ids, writes the cache at the current position."""
        kw = {self.cache_kw: self.cache, "use_cache": True}
        if not self.new_api:
            kw["cache_position"] = self.pos
        return self.model(input_ids=self.ids, **kw).logits


def wall_us(fn, replays, warmup):
    """Wall-clock microseconds of each of `replays` calls of `fn` after `warmup` (the CPU path)."""
    ts = []
    for i in range(warmup + replays):
        t0 = time.perf_counter()
        fn()
        if i >= warmup:
            ts.append((time.perf_counter() - t0) * 1e6)
    return ts


def time_step(dec, position, replays, warmup, cuda):
    """Per-step seconds x 1e6 (graph replay between CUDA events on GPU; wall clock on CPU)."""
    import torch

    from bench.timing import replay_us, stats

    def once():
        dec.set_position(position)
        return dec.step()

    if cuda:
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(2):
                once()
        torch.cuda.current_stream().wait_stream(s)
        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph()
        dec.set_position(position)
        with torch.cuda.graph(g):
            dec.step()
        ts = replay_us(g, replays, warmup, before=lambda: dec.set_position(position))
        del g
    else:
        ts = wall_us(once, replays, warmup)
    return {**stats(ts), "replays": len(ts)}


def arm(model, batch, args, device, dtype, cuda, prefill=True):
    import torch

    max_len = args.prompt + args.steps + 8
    dec = Decoder(model, batch, max_len, device, dtype)
    gen = torch.Generator().manual_seed(batch)
    with torch.no_grad():
        if prefill:
            dec.prefill(torch.randint(0, model.config.vocab_size, (batch, args.prompt), generator=gen).to(device))
        dec.ids.copy_(torch.randint(0, model.config.vocab_size, (batch, 1), generator=gen))
        r = time_step(dec, args.prompt, args.replays, args.warmup, cuda)
    del dec
    if cuda:
        torch.cuda.empty_cache()
    return r


def host_syncs(model, args, device, dtype):
    """Counts host reads of device values (aten._local_scalar_dense, nonzero, ...) in one decode
    step: any would break CUDA-graph capture. Runs on any device (a dispatch mode)."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    SYNC = {"_local_scalar_dense", "nonzero", "equal", "is_nonzero", "item"}
    seen = []

    class Spy(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, a=(), kw=None):
            if func._overloadpacket.__name__ in SYNC:
                seen.append(str(func))
            return func(*a, **(kw or {}))

    dec = Decoder(model, 1, args.prompt + 8, device, dtype)
    with torch.no_grad():
        dec.set_position(args.prompt)
        dec.step()  # lazy cache init, outside the spy (it happens before capture too)
        dec.set_position(args.prompt)
        with Spy():
            dec.step()
    return sorted(set(seen))


def numerics(model_q, model_ref, args, device, dtype):
    import torch

    gen = torch.Generator().manual_seed(1234)
    V = model_q.config.vocab_size
    prompt = torch.randint(0, V, (1, args.prompt), generator=gen).to(device)
    forced = torch.randint(0, V, (args.steps,), generator=gen).tolist()
    rel, top5 = [], []
    decs = [Decoder(m, 1, args.prompt + args.steps + 8, device, dtype) for m in (model_q, model_ref)]
    with torch.no_grad():
        outs = [d.prefill(prompt)[:, -1] for d in decs]
        for t in range(args.steps + 1):
            a, b = (o.double().reshape(-1) for o in outs)
            rel.append(((a - b).norm() / b.norm()).item())
            ta, tb = set(a.topk(5).indices.tolist()), set(b.topk(5).indices.tolist())
            top5.append(len(ta & tb) / 5)
            if t == args.steps:
                break
            outs = []
            for d in decs:
                d.ids.fill_(forced[t])
                d.pos.fill_(args.prompt + t)
                outs.append(d.forward(d.ids, args.prompt + t)[:, -1])
    return {
        "what": (f"teacher-forced: prompt {args.prompt} random tokens, then {args.steps} random forced tokens; "
                 "W4A16 model vs the same model with RTN-dequantized weights in fp16 nn.Linear; first entry is "
                 "the prefill's last position"),
        "rel_err_median": statistics.median(rel), "rel_err_max": max(rel), "top5_overlap_mean": statistics.fmean(top5),
        "top5_overlap_min": min(top5), "rel_err": rel,
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", choices=[m for m in MODELS if m != "tiny"], default="llama8b")
    ap.add_argument("--tiny", action="store_true", help="a 2-layer 256-wide Llama (CPU smoke test)")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--library")
    ap.add_argument("--batches", default=None, help="comma list (default 1,8,32; --tiny: 1,2)")
    ap.add_argument("--prompt", type=int, default=None, help="prompt tokens (default 512; --tiny: 32)")
    ap.add_argument("--steps", type=int, default=None, help="teacher-forced steps (default 64; --tiny: 8)")
    ap.add_argument("--replays", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--group", type=int, default=128)
    ap.add_argument("--zp", action="store_true", help="zero-point quantization (default symmetric)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-prefill", action="store_true",
                    help="skip the eager prompt prefill before timing (a static cache's step time does not depend "
                         "on its content: attention spans max_cache_len either way)")
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    if args.library:
        os.environ["MATE_LIBRARY"] = args.library
    name = "tiny" if args.tiny else args.model
    args.batches = [int(b) for b in (args.batches or ("1,2" if args.tiny else "1,8,32")).split(",")]
    args.prompt = args.prompt or (32 if args.tiny else 512)
    args.steps = args.steps or (8 if args.tiny else 64)

    import torch
    import transformers

    import mate
    from mate.hf import dequantize_linears_, iter_w4a16, swap_linears

    device = torch.device(args.device)
    cuda = device.type == "cuda"
    dtype = torch.float16
    sym = not args.zp
    t_start = time.time()
    model = build_model(name, device, dtype, args.seed)
    rows = {b: {} for b in args.batches}
    errors = {}

    def run_arm(label, b, *a, **kw):
        # one failing arm (e.g. a capture error) is reported, the others still run
        try:
            rows[b][label] = arm(*a, **kw)
            print(f"{label:8s} B={b:3d} {rows[b][label]['median_us']:10.1f} us", flush=True)
        except Exception as e:  # noqa: BLE001
            errors[f"{label}@{b}"] = f"{type(e).__name__}: {e}"
            print(f"{label:8s} B={b:3d} FAILED {errors[f'{label}@{b}'][:300]}", flush=True)
            if cuda:
                torch.cuda.synchronize()
                torch.cuda.empty_cache()

    syncs = {"fp16": host_syncs(model, args, device, dtype)}
    for b in args.batches:
        run_arm("fp16", b, model, b, args, device, dtype, cuda, prefill=not args.no_prefill)

    model_q = copy.deepcopy(model)
    report = swap_linears(model_q, group_size=args.group, sym=sym, dtype=dtype)
    dequantize_linears_(model, group_size=args.group, sym=sym, dtype=dtype)  # the fp16 twin
    if report["skipped"]:
        raise SystemExit(f"e2e: layers outside mate's envelope stayed float: {report['skipped']}")
    syncs["w4a16"] = host_syncs(model_q, args, device, dtype)
    for b in args.batches:
        run_arm("w4a16", b, model_q, b, args, device, dtype, cuda, prefill=not args.no_prefill)
    num = numerics(model_q, model, args, device, dtype)
    print(f"numerics: rel err median {num['rel_err_median']:.2e} max {num['rel_err_max']:.2e}, "
          f"top-5 overlap mean {num['top5_overlap_mean']:.3f}", flush=True)
    del model
    if cuda:
        torch.cuda.empty_cache()

    # pure reads of the frame bytes, one read per W4A16Linear, in one graph
    layers = [m for _, m in iter_w4a16(model_q)]
    nbytes = [frame_bytes(m) for m in layers]
    reads = {"bytes": sum(nbytes), "launches": len(nbytes)}
    bufs = [torch.full((-(-n // 4),), 7, dtype=torch.int32, device=device) for n in nbytes]
    if cuda:
        from bench.read_arm import read, sink_for

        sink = sink_for(max(b.numel() for b in bufs), device)
        calls = [lambda b=b: read(b, sink) for b in bufs]
        reads["kernel"] = "bench/read_arm.py (Triton, .cg loads)"
    else:
        calls = [lambda b=b: b.max() for b in bufs]
        reads["kernel"] = "torch max over the buffer (CPU smoke run)"
    reads.update(time_graph(calls, args.replays, args.warmup, cuda))
    del bufs
    print(f"reads        {reads['median_us']:10.1f} us ({reads['bytes'] / 1e9:.3f} GB)", flush=True)

    sites = w4a16_sites(model_q)
    zero = ZeroLinear(max(args.batches), dtype, device)
    readers = ReadThenZero(zero, device)
    replace_w4a16(sites, readers)
    for b in args.batches:
        run_arm("inreads", b, model_q, b, args, device, dtype, cuda, prefill=False)
    replace_w4a16(sites, lambda layer: zero(layer.out_features))
    readers.bufs.clear()
    for b in args.batches:
        run_arm("nongemm", b, model_q, b, args, device, dtype, cuda, prefill=False)

    for b, r in rows.items():
        if not all(k in r for k in ("fp16", "w4a16", "nongemm")):
            continue
        r["tok_s"] = {k: b / (r[k]["median_us"] * 1e-6) for k in ("fp16", "w4a16")}
        r["w4a16_over_fp16"] = r["w4a16"]["median_us"] / r["fp16"]["median_us"]
        r["w4a16_over_nongemm_plus_reads"] = r["w4a16"]["median_us"] / (r["nongemm"]["median_us"] + reads["median_us"])
        if "inreads" in r:
            floor = r["inreads"]["median_us"] - r["nongemm"]["median_us"]
            r["gemm_over_inreads"] = (r["w4a16"]["median_us"] - r["nongemm"]["median_us"]) / floor if floor > 0 else None
        if r.get("gemm_over_inreads"):
            print(f"B={b:3d}: GEMMs in situ {r['gemm_over_inreads']:.3f}x their in-situ reads "
                  f"(w4a16 - nongemm over inreads - nongemm)", flush=True)
    b1 = rows.get(1)
    check = {"rule": "w4a16_step <= nongemm + 1.15 * reads (batch 1)"}
    if b1 and "w4a16" in b1 and "nongemm" in b1:
        bound = b1["nongemm"]["median_us"] + 1.15 * reads["median_us"]
        check.update(w4a16_us=b1["w4a16"]["median_us"], bound_us=bound, ok=b1["w4a16"]["median_us"] <= bound)
    if not cuda:
        check["note"] = "CPU smoke run: eager wall-clock times, not the measurement"

    commit = os.environ.get("MATE_COMMIT") or subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    cfg = {k: v for k, v in MODELS[name].items()}
    out = dict(
        what="bench/e2e.py", model=name, config=cfg, gpu=torch.cuda.get_device_name() if cuda else None,
        device=str(device), torch=torch.__version__, transformers=transformers.__version__, commit=commit,
        date=time.strftime("%Y-%m-%d"), library=str(mate.load()),
        quant=dict(group_size=args.group, sym=sym, method="RTN (mate.quantize)", fused=len(report["fused"]),
                   swapped=len(report["swapped"])),
        method=(("one decode step per CUDA graph (StaticCache, position reset to the prompt length before each "
                 "replay, outside the events), CUDA events around single replays" if cuda else
                 "eager decode steps, wall clock (no graphs on CPU)")
                + f"; {args.warmup} warm-up + {args.replays} timed; median/min/max us per step; prompt {args.prompt}"),
        host_syncs_in_step=syncs, errors=errors, batches={str(b): r for b, r in rows.items()}, reads=reads, check=check,
        numerics=num, seconds=time.time() - t_start,
    )
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))
    print("check:", json.dumps(check))
    if errors:
        print("errors:", json.dumps(errors), file=sys.stderr)
        sys.exit(1)
    return out


def time_graph(calls, replays, warmup, cuda):
    """Per-graph us of running every call once (graph replay between events on GPU)."""
    from bench.timing import capture, replay_us, stats

    def every():
        for c in calls:
            c()

    return stats(replay_us(capture(calls), replays, warmup) if cuda else wall_us(every, replays, warmup))


if __name__ == "__main__":
    main()
