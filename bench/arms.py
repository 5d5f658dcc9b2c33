"""The benchmark arms of the decode path (issue 4), one registry for bench/decode.py and its CPU
dry run. Every arm holds its own rotating copies of its own weight format (distinct random data,
so the working set is what `copies` says), makes one zero-arg call per copy for a graph, and checks
copy 0 against a float64 reference before any timing, so a wrong convention cannot produce a fast
wrong number.

Weights are the headline convention: values q in 0..15, symmetric (zero 8) unless `zp`, scales in
[0.002, 0.022) — W[k, n] = (q[k, n] - zero) * scale[k // G, n]. Arms: read (pure streaming read
of mate's bytes), mate, triton (bench/triton_w4a16.py), tinygemm (torch's int4 kernel, bf16),
fp16, bf16 (F.linear on dense [N, K] weights)."""

from __future__ import annotations

import torch

from bench import read_arm, tinygemm, triton_w4a16
from checkpoints import BOUND, errors, pack_cols, pack_frame_v2

ARMS = ("read", "mate", "triton", "tinygemm", "fp16", "bf16")


def mate_bytes(K: int, N: int, G: int, zp: bool) -> int:
    """Bytes a GEMM must read: qweight + scales (+ packed zeros)."""
    return K * N // 2 + (K // G) * N * 2 + ((K // G) * N // 2 if zp else 0)


def random_weight(K, N, G, dtype, device, zp=False):
    """(q uint8 [K, N], scales [K/G, N], zeros uint8 [K/G, N] or None)."""
    q = torch.randint(0, 16, (K, N), dtype=torch.uint8, device=device)
    s = (torch.rand(K // G, N, device=device) * 0.02 + 0.002).to(dtype)
    z = torch.randint(0, 16, (K // G, N), dtype=torch.uint8, device=device) if zp else None
    return q, s, z


def reference(x, q, s, G, z=None, chunk=8192):
    """float64 x @ W, W dequantized in column chunks (a 70B gate_up in float64 would be 3.8 GB)."""
    x64 = x.double()
    out = torch.empty(x.shape[0], q.shape[1], dtype=torch.float64, device=x.device)
    for c in range(0, q.shape[1], chunk):
        zero = 8.0 if z is None else z[:, c:c + chunk].double().repeat_interleave(G, 0)
        w = (q[:, c:c + chunk].double() - zero) * s[:, c:c + chunk].double().repeat_interleave(G, 0)
        out[:, c:c + chunk] = x64 @ w
    return out


def graded(name, out, ref, dtype):
    total, col = errors(out, ref)
    bound = BOUND[dtype]
    return dict(arm=name, rel_err=total, worst_col=col, bound=bound, ok=total <= bound and col <= 5 * bound)


class Arm:
    """Base: `dtype` is the activation dtype the arm runs on (its x is `x.to(dtype)`)."""

    name = ""
    dtype = torch.float16
    nbytes = 0  # per copy
    copies = 0

    def prepare(self, M):  # per-M output buffers, made before capture
        pass

    def call(self, i, x):
        raise NotImplementedError

    def calls(self, x):
        self.prepare(x.shape[0])
        return [self.call(i, x) for i in range(self.copies)]

    def check(self, x) -> dict:
        raise NotImplementedError


class QuantArm(Arm):
    """Quantized arms keep copy 0's values for the reference."""

    def __init__(self, K, N, G, dtype, device, copies, zp=False):
        self.K, self.N, self.G, self.dtype, self.zp, self.copies = K, N, G, dtype, zp, copies
        self.weights = []
        for i in range(copies):
            q, s, z = random_weight(K, N, G, dtype, device, zp)
            if i == 0:
                self.q0, self.s0, self.z0 = q, s, z
            self.weights.append(self.build(q, s, z))
            del q

    def reference(self, x):
        return reference(x, self.q0, self.s0, self.G, self.z0)

    def check(self, x):
        x = x.to(self.dtype)
        self.prepare(x.shape[0])
        out = self.call(0, x)()
        return graded(self.name, out, self.reference(x), self.dtype)


class Mate(QuantArm):
    name = "mate"

    def build(self, q, s, z):
        self.nbytes = mate_bytes(self.K, self.N, self.G, self.zp)
        meta = torch.ops.mate.frame_meta(self.K, self.N, self.group_arg, self.zp, self.perm is not None)
        return (pack_frame_v2(q), meta, s, pack_cols(z) if z is not None else None)

    def __init__(self, K, N, G, dtype, device, copies, zp=False, group_arg=None, act=False):
        self.group_arg = G if group_arg is None else group_arg  # -1 (whole K) is its own frame_meta value
        # act order: x column perm[k] feeds frame row k (one random permutation for every copy)
        self.perm = torch.randperm(K, device=device).to(torch.int32) if act else None
        super().__init__(K, N, G, dtype, device, copies, zp)

    def reference(self, x):
        return super().reference(x if self.perm is None else x[:, self.perm.long()])

    def prepare(self, M):
        x = torch.empty(M, self.K, dtype=self.dtype, device=self.q0.device)
        need = torch.ops.mate.w4a16_workspace_size(x, self.weights[0][1])
        self.ws = torch.zeros(need, dtype=torch.uint8, device=x.device) if need else None
        self.out = torch.empty(M, self.N, dtype=self.dtype, device=x.device)

    def call(self, i, x):
        qw, meta, s, z = self.weights[i]
        ws, out, g, perm = self.ws, self.out, self.group_arg, self.perm

        def run():
            torch.ops.mate.w4a16_gemm.out(x, qw, meta, s, z, perm, None, g, workspace=ws, out=out)
            return out
        return run


class Triton(QuantArm):
    name = "triton"

    def build(self, q, s, z):
        if z is not None:
            raise ValueError("triton arm: serves the symmetric headline config only (no --zp)")
        self.nbytes = self.K * self.N // 2 + s.numel() * s.element_size()
        return (triton_w4a16.pack(q), s)

    def prepare(self, M):
        dev = self.q0.device
        sms = torch.cuda.get_device_properties(dev).multi_processor_count if dev.type == "cuda" else 132
        self.config = triton_w4a16.choose(M, self.N, self.K, self.G, sms)
        self.out = torch.empty(M, self.N, dtype=self.dtype, device=dev)
        self.ws = torch.empty(M, self.N, dtype=torch.float32, device=dev)

    def call(self, i, x):
        qw, s = self.weights[i]
        c, out, ws, G = self.config, self.out, self.ws, self.G
        return lambda: triton_w4a16.w4a16_mm(x, qw, s, G, out=out, workspace=ws, config=c)


class Tinygemm(QuantArm):
    name = "tinygemm"

    def __init__(self, K, N, G, dtype, device, copies, zp=False):
        # tinygemm runs bf16 activations on CUDA whatever the headline dtype is
        super().__init__(K, N, G, torch.bfloat16, device, copies, zp)

    def build(self, q, s, z):
        if z is not None:
            raise ValueError("tinygemm arm: serves the symmetric headline config only (no --zp)")
        p = tinygemm.pack(q, s, self.G, act_dtype=self.dtype)
        self.nbytes = p.nbytes
        return p

    def reference(self, x):  # the scales as tinygemm stores them (bf16), zero 0
        return x.double() @ tinygemm.dequantize(self.q0, self.s0, self.G, dtype=self.weights[0].scales_and_zeros.dtype)

    def call(self, i, x):
        p = self.weights[i]
        return lambda: tinygemm.mm(x, p)


class Dense(Arm):
    def __init__(self, name, K, N, device, copies):
        self.name, self.K, self.N, self.copies = name, K, N, copies
        self.dtype = torch.float16 if name == "fp16" else torch.bfloat16
        self.nbytes = K * N * 2
        self.weights = [torch.randn(N, K, device=device, dtype=self.dtype) for _ in range(copies)]

    def call(self, i, x):
        w = self.weights[i]
        return lambda: torch.nn.functional.linear(x, w)

    def check(self, x):
        x = x.to(self.dtype)
        out = self.call(0, x)()
        w = self.weights[0]
        ref = torch.cat([x.double() @ w[c:c + 8192].double().t() for c in range(0, self.N, 8192)], dim=1)
        return graded(self.name, out, ref, self.dtype)


class Read(Arm):
    """Random int32 buffers with mate's byte count (one launch per copy, like one GEMM)."""

    name = "read"

    def __init__(self, nbytes, device, copies):
        self.nbytes, self.copies = nbytes, copies
        self.bufs = [torch.randint(-(2**31), 2**31 - 1, (nbytes // 4,), dtype=torch.int32, device=device) for _ in range(copies)]
        self.sink = read_arm.sink_for(nbytes // 4, device)

    def call(self, i, x):
        b, sink = self.bufs[i], self.sink
        return lambda: read_arm.read(b, sink)

    def check(self, x):
        self.call(0, x)()
        ok = torch.equal(self.sink, read_arm.expected_sink(self.bufs[0]))
        return dict(arm=self.name, ok=ok, what="sink == xor of every 16 KB block of copy 0")


def build(name, K, N, group, dtype, device, zp=False, copies=None, act=False):
    """Arm `name` for a K x N weight; `copies` defaults to >= 10x L2 of its own format. `act`: the
    mate arm serves an act-order frame (x gathered by a random permutation); read, fp16 and bf16
    are the same work either way (no gather); triton and tinygemm refuse it."""
    from bench.timing import copies_for

    G = K if group == -1 else group
    if name == "read":
        nb = mate_bytes(K, N, G, zp)
        return Read(nb, device, copies or copies_for(nb))
    if name in ("fp16", "bf16"):
        return Dense(name, K, N, device, copies or copies_for(K * N * 2))
    nb = mate_bytes(K, N, G, zp)  # the format's own size is within a few % of this
    R = copies or copies_for(nb)
    if name == "mate":
        return Mate(K, N, G, dtype, device, R, zp, group_arg=group, act=act)
    if act and name in ("triton", "tinygemm"):
        raise ValueError(f"{name} arm: serves no act-order frame (--act)")
    if name == "triton":
        return Triton(K, N, G, dtype, device, R, zp)
    if name == "tinygemm":
        return Tinygemm(K, N, G, dtype, device, R, zp)
    raise ValueError(f"unknown arm {name!r}; arms are {', '.join(ARMS)}")
