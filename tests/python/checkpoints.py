"""Random checkpoints for tests in every convention the frame builder reads (GPTQ v1/v2, AWQ,
compressed-tensors pack-quantized, and vLLM's Marlin repack of GPTQ/AWQ tensors, emulated here
from vLLM's source), and frames built from them by the Rust builder (``mate.from_*``).

``frame_from_gptq_python`` keeps the test-side construction the suite used before the builder
existed (``pack_frame_v2``, written from the layout in src/frame/mod.rs): a cross-check for the
builder, nothing else."""

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
    checkpoint_format: str = "gptq_v2"


def _groups(K, group_size):
    G = K if group_size == -1 else group_size
    return G, K // G


def random_gptq(K, N, group_size, sym, dtype, device, desc_act=False, gen=None, checkpoint_format="gptq_v2") -> Checkpoint:
    G, ng = _groups(K, group_size)
    q = torch.randint(0, 16, (K, N), generator=gen, device=device)
    z = torch.randint(0, 16, (ng, N), generator=gen, device=device)
    scales = (torch.rand(ng, N, generator=gen, device=device) * 0.02 + 0.002).to(dtype)
    if sym:
        # What a symmetric checkpoint carries but must never be read: not the real zero.
        z = torch.randint(0, 16, (ng, N), generator=gen, device=device)
    elif checkpoint_format == "gptq":
        z = torch.randint(1, 16, (ng, N), generator=gen, device=device) - 1  # v1 stores zero - 1
    if desc_act:
        g_idx = (torch.arange(K, device=device) // G)[torch.randperm(K, generator=gen, device=device)]
    else:
        g_idx = torch.randint(-(2**20), 2**20, (K,), generator=gen, device=device)  # "uninitialised"
    return Checkpoint(
        pack_rows(q), scales, pack_cols(z), g_idx.to(torch.int32), group_size, sym, desc_act, checkpoint_format
    )


Frame = mate.Frame


def frame_from_gptq(ck: Checkpoint) -> Frame:
    """The Rust builder on a GPTQ checkpoint, with the checkpoint's own config."""
    return mate.from_gptq(
        ck.qweight, ck.scales, ck.qzeros, ck.g_idx, group_size=ck.group_size, sym=ck.sym,
        desc_act=ck.desc_act, checkpoint_format=ck.checkpoint_format,
    )


frame_from_gptq_v2 = frame_from_gptq  # the name the suite used before the builder existed


def frame_from_gptq_python(ck: Checkpoint) -> Frame:
    """The pre-builder, test-side frame of a GPTQ-v2 checkpoint (a cross-check only)."""
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
        ck.qweight, ck.scales, ck.qzeros, ck.g_idx, group_size=ck.group_size, sym=ck.sym, desc_act=ck.desc_act,
        checkpoint_format=ck.checkpoint_format,
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


# ---------------------------------------------------------------------------------------------
# AWQ


def pack_cols_ordered(v: torch.Tensor, order) -> torch.Tensor:
    """int [R, 8C] nibbles -> int32 [R, C], nibble j of word c = column 8c + order[j]."""
    v = v.to(torch.int64).reshape(v.shape[0], -1, 8)
    w = sum(v[:, :, order[j]] << (4 * j) for j in range(8))
    return torch.where(w >= 2**31, w - 2**32, w).to(torch.int32)


AWQ_ORDER = (0, 2, 4, 6, 1, 3, 5, 7)


@dataclass
class AwqCheckpoint:
    qweight: torch.Tensor  # int32 [K, N/8]
    scales: torch.Tensor  # [K/group, N]
    qzeros: torch.Tensor  # int32 [K/group, N/8]
    group_size: int
    q: torch.Tensor  # the values, int64 [K, N] (for the Marlin emulation)
    z: torch.Tensor  # int64 [K/group, N]


def random_awq(K, N, group_size, dtype, device, gen=None) -> AwqCheckpoint:
    G, ng = _groups(K, group_size)
    q = torch.randint(0, 16, (K, N), generator=gen, device=device)
    z = torch.randint(0, 16, (ng, N), generator=gen, device=device)
    scales = (torch.rand(ng, N, generator=gen, device=device) * 0.02 + 0.002).to(dtype)
    return AwqCheckpoint(pack_cols_ordered(q, AWQ_ORDER), scales, pack_cols_ordered(z, AWQ_ORDER), group_size, q, z)


def reference_awq(ck: AwqCheckpoint, x, bias=None):
    from reference64 import dequantize_awq, gemm64

    return gemm64(x, dequantize_awq(ck.qweight, ck.scales, ck.qzeros, group_size=ck.group_size), bias)


def frame_from_awq(ck: AwqCheckpoint) -> Frame:
    return mate.from_awq(ck.qweight, ck.scales, ck.qzeros, group_size=ck.group_size)


# ---------------------------------------------------------------------------------------------
# compressed-tensors pack-quantized (int4)


@dataclass
class CompressedCheckpoint:
    weight_packed: torch.Tensor  # int32 [N, K/8]
    weight_scale: torch.Tensor  # [N, K/group]
    weight_zero_point: torch.Tensor | None  # int32 [N/8, K/group] (asymmetric only)
    weight_g_idx: torch.Tensor | None  # [K] (actorder "group" only; garbage otherwise)
    weight_shape: torch.Tensor  # [N, K]
    group_size: int
    symmetric: bool
    actorder: str | None


def pack_along_k_offset8(v: torch.Tensor) -> torch.Tensor:
    """signed int4 [R, C] -> int32 [R, C/8], nibble j of word c = v[:, 8c + j] + 8."""
    return pack_cols(v.to(torch.int64) + 8)


def random_compressed(K, N, group_size, symmetric, dtype, device, actorder=None, gen=None) -> CompressedCheckpoint:
    G, ng = _groups(K, group_size)
    v = torch.randint(-8, 8, (N, K), generator=gen, device=device)
    scale = (torch.rand(N, ng, generator=gen, device=device) * 0.02 + 0.002).to(dtype)
    zp = None
    if not symmetric:
        z = torch.randint(-8, 8, (N, ng), generator=gen, device=device)
        zp = pack_along_k_offset8(z.t()).t().contiguous()  # packed along N: [N/8, G]
    if actorder == "group":
        g_idx = (torch.arange(K, device=device) // G)[torch.randperm(K, generator=gen, device=device)]
    else:
        g_idx = torch.randint(-(2**20), 2**20, (K,), generator=gen, device=device)  # never read
    return CompressedCheckpoint(
        pack_along_k_offset8(v), scale, zp, g_idx.to(torch.int32), torch.tensor([N, K]), group_size, symmetric, actorder
    )


def reference_compressed(ck: CompressedCheckpoint, x, bias=None):
    from reference64 import dequantize_compressed, gemm64

    w = dequantize_compressed(
        ck.weight_packed, ck.weight_scale, ck.weight_zero_point, ck.weight_g_idx, weight_shape=ck.weight_shape.tolist(),
        group_size=ck.group_size, symmetric=ck.symmetric, actorder_group=ck.actorder == "group",
    )
    return gemm64(x, w, bias)


def frame_from_compressed(ck: CompressedCheckpoint) -> Frame:
    return mate.from_compressed(
        ck.weight_packed, ck.weight_scale, ck.weight_zero_point, ck.weight_g_idx, weight_shape=ck.weight_shape,
        group_size=ck.group_size, symmetric=ck.symmetric, actorder=ck.actorder,
    )


# ---------------------------------------------------------------------------------------------
# vLLM's Marlin repack, emulated from its source (never imported here; the builder's Rust reads
# the same files): csrc/quantization/gptq_marlin/gptq_marlin_repack.cu (per-thread arithmetic,
# transcribed loop by loop below) and vllm/model_executor/layers/quantization/utils/marlin_utils.py
# (get_scale_perms, marlin_permute_scales, marlin_zero_points, awq_to_marlin_zero_points).


def marlin_repack(q: torch.Tensor, perm: torch.Tensor | None = None) -> torch.Tensor:
    """gptq_marlin_repack (4-bit) of the values q [K, N] (awq_marlin_repack gives the same words
    for the same values): int32 [K/16, 2N]. With perm, tile row r of k-tile t is source row
    perm[16t + r]."""
    K, N = q.shape
    if perm is not None:
        q = q[perm.long()]
    kt, nt = K // 16, N // 64
    tiles = q.to(torch.int64).reshape(kt, 16, nt, 64).permute(0, 2, 1, 3)  # [kt, nt, 16, 64]
    out = torch.zeros(kt, nt, 128, dtype=torch.int64, device=q.device)
    tc_offsets = (0, 1, 8, 9)
    pack_idx = (0, 2, 4, 6, 1, 3, 5, 7)
    for th_id in range(32):
        tc_col, tc_row = th_id // 4, (th_id % 4) * 2
        for warp_id in range(4):
            cur_n = warp_id * 16 + tc_col
            vals = [tiles[:, :, tc_row + tc_offsets[i], cur_n] for i in range(4)]
            vals += [tiles[:, :, tc_row + tc_offsets[i], cur_n + 8] for i in range(4)]
            res = sum(vals[pack_idx[i]] << (i * 4) for i in range(8))
            out[:, :, th_id * 4 + warp_id] = res
    out = out.reshape(kt, nt * 128)
    return torch.where(out >= 2**31, out - 2**32, out).to(torch.int32)


def get_scale_perms():
    scale_perm = []
    for i in range(8):
        scale_perm.extend([i + 8 * j for j in range(8)])
    scale_perm_single = []
    for i in range(4):
        scale_perm_single.extend([2 * i + j for j in [0, 1, 8, 9, 16, 17, 24, 25]])
    return scale_perm, scale_perm_single


def marlin_permute_scales(s: torch.Tensor, size_k: int, size_n: int, group_size: int) -> torch.Tensor:
    scale_perm, scale_perm_single = get_scale_perms()
    if group_size < size_k and group_size != -1:
        s = s.reshape((-1, len(scale_perm)))[:, scale_perm]
    else:
        s = s.reshape((-1, len(scale_perm_single)))[:, scale_perm_single]
    return s.reshape((-1, size_n)).contiguous()


def marlin_zero_points(zp: torch.Tensor, size_k: int, size_n: int) -> torch.Tensor:
    """zp: int [groups, N] exact zeros -> int32 [groups, N/8] (4-bit)."""
    scale_perm, _ = get_scale_perms()
    zp = zp.reshape((-1, len(scale_perm)))[:, scale_perm]
    interleave = [0, 2, 4, 6, 1, 3, 5, 7]
    zp = zp.reshape((-1, len(interleave)))[:, interleave].ravel()
    zp = zp.reshape((-1, size_n)).contiguous()
    return pack_cols(zp)  # vLLM's pack_cols: nibble i of word c = column 8c + i


def awq_to_marlin_zero_points(q_zp_packed: torch.Tensor, size_k: int, size_n: int) -> torch.Tensor:
    from reference64 import unpack_cols

    q_zp = unpack_cols(q_zp_packed)  # vLLM's unpack_cols: sequential
    undo_interleave = torch.argsort(torch.tensor([0, 2, 4, 6, 1, 3, 5, 7]))
    q_zp = q_zp.reshape((-1, 8))[:, undo_interleave].ravel()
    q_zp = q_zp.reshape((-1, size_n)).contiguous()
    return marlin_zero_points(q_zp, size_k, size_n)


@dataclass
class MarlinLayer:
    """What a vLLM Marlin layer holds after process_weights_after_loading."""

    qweight: torch.Tensor
    scales: torch.Tensor
    zeros: torch.Tensor | None
    g_idx: torch.Tensor | None  # sorted
    perm: torch.Tensor | None  # g_idx_sort_indices
    group_size: int
    sym: bool
    desc_act: bool


def marlin_from_gptq(ck: Checkpoint) -> MarlinLayer:
    """vLLM's MarlinLinearKernel on a GPTQ-v2 checkpoint (exact zeros when asymmetric)."""
    from reference64 import unpack_cols, unpack_rows

    q = unpack_rows(ck.qweight)
    K, N = q.shape
    g_idx = perm = None
    if ck.desc_act:
        perm = torch.argsort(ck.g_idx.to(torch.int64)).to(torch.int32)  # marlin_sort_g_idx (not stable)
        g_idx = ck.g_idx[perm.long()]
    zeros = None
    if not ck.sym:
        zeros = marlin_zero_points(unpack_cols(ck.qzeros), ck.scales.shape[0], N)
    return MarlinLayer(
        marlin_repack(q, perm), marlin_permute_scales(ck.scales, K, N, ck.group_size), zeros, g_idx, perm,
        ck.group_size, ck.sym, ck.desc_act,
    )


def marlin_from_awq(ck: AwqCheckpoint) -> MarlinLayer:
    """vLLM's AWQ-Marlin path: awq_marlin_repack, marlin_permute_scales, awq_to_marlin_zero_points."""
    K, N = ck.q.shape
    return MarlinLayer(
        marlin_repack(ck.q), marlin_permute_scales(ck.scales, K, N, ck.group_size),
        awq_to_marlin_zero_points(ck.qzeros, ck.scales.shape[0], N), None, None, ck.group_size, False, False,
    )


def frame_from_marlin(m: MarlinLayer, zero_layout="marlin") -> Frame:
    return mate.from_marlin(
        m.qweight, m.scales, m.zeros, m.g_idx, m.perm, group_size=m.group_size, sym=m.sym, desc_act=m.desc_act,
        zero_layout=zero_layout,
    )
