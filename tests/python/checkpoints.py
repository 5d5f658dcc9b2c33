"""Random GPTQ checkpoints for tests, and (until the Rust frame builder lands) the test-side
construction of a frame from them (layout: src/frame/mod.rs, version 2). With act order the rows
are sorted by g_idx and the permutation is kept."""

from __future__ import annotations

from dataclasses import dataclass

import torch

import mate
from reference64 import unpack_rows


def pack_rows(q: torch.Tensor) -> torch.Tensor:
    """int [8R, C] nibbles -> int32 [R, C], nibble j of word r = row 8r + j."""
    q = q.to(torch.int64).reshape(-1, 8, q.shape[1])
    w = sum(q[:, j, :] << (4 * j) for j in range(8))
    return torch.where(w >= 2**31, w - 2**32, w).to(torch.int32)


def pack_cols(z: torch.Tensor) -> torch.Tensor:
    """int [R, 8C] nibbles -> int32 [R, C], nibble j of word c = column 8c + j."""
    z = z.to(torch.int64).reshape(z.shape[0], -1, 8)
    w = sum(z[:, :, j] << (4 * j) for j in range(8))
    return torch.where(w >= 2**31, w - 2**32, w).to(torch.int32)


def pack_frame_v2(q: torch.Tensor) -> torch.Tensor:
    """q int [K, N] (0..15) -> int32 [N/16, K/64, 128]: nibble p of word j of lane 4*gi+ci in block
    (s, c) is q[64c + 16ci + 4j + 2*((p>>1)&1) + (p>>2), 16s + gi + 8*(p&1)]."""
    K, N = q.shape
    # k = 64c + 16ci + 4j + 2b + e ; n = 16s + 8h + gi ; nibble p = h + 2b + 4e
    v = q.to(torch.int64).reshape(K // 64, 4, 4, 2, 2, N // 16, 2, 8)  # c ci j b e s h gi
    v = v.permute(5, 0, 7, 1, 2, 4, 3, 6)  # s c gi ci j e b h
    v = v.reshape(N // 16, K // 64, 128, 8)
    w = sum(v[..., p] << (4 * p) for p in range(8))
    return torch.where(w >= 2**31, w - 2**32, w).to(torch.int32).contiguous()


@dataclass
class Checkpoint:
    qweight: torch.Tensor
    scales: torch.Tensor
    qzeros: torch.Tensor  # present even for symmetric configs, as in real checkpoints
    g_idx: torch.Tensor  # filled with garbage unless desc_act, as in real checkpoints
    group_size: int
    sym: bool
    desc_act: bool


def random_gptq(K, N, group_size, sym, dtype, device, desc_act=False, gen=None) -> Checkpoint:
    G = K if group_size == -1 else group_size
    ng = K // G
    q = torch.randint(0, 16, (K, N), generator=gen, device=device)
    z = torch.randint(0, 16, (ng, N), generator=gen, device=device)
    scales = (torch.rand(ng, N, generator=gen, device=device) * 0.02 + 0.002).to(dtype)
    if sym:
        # What a symmetric checkpoint carries but must never be read: not the real zero.
        z = torch.randint(0, 16, (ng, N), generator=gen, device=device)
    if desc_act:
        g_idx = (torch.arange(K, device=device) // G)[torch.randperm(K, generator=gen, device=device)]
    else:
        g_idx = torch.randint(-(2**20), 2**20, (K,), generator=gen, device=device)  # "uninitialised"
    return Checkpoint(pack_rows(q), scales, pack_cols(z), g_idx.to(torch.int32), group_size, sym, desc_act)


@dataclass
class Frame:
    qweight: torch.Tensor
    meta: list
    scales: torch.Tensor
    zeros: torch.Tensor | None
    perm: torch.Tensor | None
    group_size: int

    def args(self):
        return (self.qweight, self.meta, self.scales, self.zeros, self.perm)


def frame_from_gptq_v2(ck: Checkpoint) -> Frame:
    K = ck.qweight.shape[0] * 8
    N = ck.qweight.shape[1]
    q, perm = unpack_rows(ck.qweight), None
    if ck.desc_act:
        order = torch.argsort(ck.g_idx.to(torch.int64), stable=True)
        q = q[order]
        perm = order.to(torch.int32)
    qweight = pack_frame_v2(q)
    zeros = None if ck.sym else ck.qzeros
    meta = mate.frame_meta(K, N, ck.group_size, not ck.sym, ck.desc_act)
    return Frame(qweight.contiguous(), meta, ck.scales.contiguous(), zeros, perm, ck.group_size)


def reference(ck: Checkpoint, x: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
    from reference64 import dequantize_gptq, gemm64

    w = dequantize_gptq(
        ck.qweight, ck.scales, ck.qzeros, ck.g_idx, group_size=ck.group_size, sym=ck.sym, desc_act=ck.desc_act
    )
    return gemm64(x, w, bias)


def run_out(x, fr: Frame, bias=None, out=None, **kw):
    """Calls the .out overload into a NaN-poisoned output (so unwritten elements show)."""
    if out is None:
        out = torch.full((*x.shape[:-1], fr.scales.shape[1]), float("nan"), dtype=x.dtype, device=x.device)
    torch.ops.mate.w4a16_gemm.out(
        x, fr.qweight, fr.meta, fr.scales, fr.zeros, fr.perm, bias, fr.group_size, out=out, **kw
    )
    return out


def errors(out: torch.Tensor, ref: torch.Tensor):
    """(‖out−ref‖/‖ref‖, worst column error). A column's error is ‖out[:,n]−ref[:,n]‖ over the RMS
    column norm of ref, so one wrong column scores ~1 while rounding scores like the total."""
    o = out.double().reshape(-1, out.shape[-1])
    r = ref.reshape(-1, ref.shape[-1])
    d = o - r
    total = (d.norm() / r.norm()).item()
    col_scale = r.norm() / (r.shape[1] ** 0.5)
    worst_col = (d.norm(dim=0) / col_scale).max().item()
    return total, worst_col


BOUND = {torch.float16: 2e-3, torch.bfloat16: 1e-2}
