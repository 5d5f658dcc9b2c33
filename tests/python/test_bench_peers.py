"""CPU checks of the benchmark peers (bench/): the Triton W4A16 kernel under Triton's interpreter
against float64, its packer and quantizer, and torch's tinygemm conventions (CPU ops numerically,
the CUDA ops' signatures through their meta kernels, the CUDA weight layout by transcription)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

pytest.importorskip("triton")

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench import arms as A  # noqa: E402
from bench import decode_step, tinygemm  # noqa: E402
from bench import triton_w4a16 as T  # noqa: E402
from checkpoints import BOUND, errors  # noqa: E402
from reference64 import unpack_rows  # noqa: E402

# (M, G, sms): sms=1 keeps one program per tile (plain store), 132 splits K (atomic adds).
KERNEL_CASES = [(M, G, sms) for M in (1, 16, 33) for G in (32, 128) for sms in (1, 132)]

# Runs in a child with TRITON_INTERPRET=1 (read when triton is imported; setting it here would
# turn every later Triton kernel of this process into Python). Prints one JSON line per case.
INTERPRETED = r"""
import json, sys, torch
sys.path.insert(0, sys.argv[1])
from bench import triton_w4a16 as T
from checkpoints import errors
for M, G, sms in json.loads(sys.argv[2]):
    gen = torch.Generator().manual_seed(M * 1000 + G + sms)
    K, N = 256, 128
    q = torch.randint(0, 16, (K, N), generator=gen)
    s = (torch.rand(K // G, N, generator=gen) * 0.02 + 0.002).half()
    x = torch.randn(M, K, generator=gen).half()
    c = T.choose(M, N, K, G, sms)
    out = T.w4a16_mm(x, T.pack(q), s, G, config=c)
    w = T.dequantize(q, s, G)
    right = errors(out, x.double() @ w)
    zero7 = errors(out, x.double() @ (w + s.double().repeat_interleave(G, 0)))  # (q - 7) * s: a wrong zero
    print(json.dumps(dict(case=[M, G, sms], split=c.split_k, right=right, zero7=zero7)))
"""


@pytest.fixture(scope="module")
def interpreted():
    env = dict(os.environ, TRITON_INTERPRET="1", PYTHONPATH=os.pathsep.join([str(Path(__file__).resolve().parent), str(ROOT / "torch_ops")]))
    r = subprocess.run([sys.executable, "-c", INTERPRETED, str(ROOT), json.dumps(KERNEL_CASES)],
                       env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    return {tuple(d["case"]): d for d in map(json.loads, r.stdout.splitlines())}


@pytest.mark.parametrize("M,G,sms", KERNEL_CASES)
def test_triton_kernel_matches_float64(interpreted, M, G, sms):
    d = interpreted[(M, G, sms)]
    total, col = d["right"]
    assert total <= BOUND[torch.float16] and col <= 5 * BOUND[torch.float16], d
    assert d["zero7"][0] > 10 * BOUND[torch.float16], d  # the comparison can tell a wrong zero


def test_cases_cover_both_store_paths(interpreted):
    splits = {d["split"] for d in interpreted.values()}
    assert 1 in splits and any(s > 1 for s in splits), splits


def test_choose_splits_evenly_and_keeps_one_scale_row_per_block():
    for K, N in [(4096, 6144), (14336, 4096), (8960, 1536), (1536, 1536), (28672, 8192)]:
        for M in (1, 16, 32, 64):
            for G in (32, 64, 128, -1):
                c = T.choose(M, N, K, G, 132)
                g = K if G == -1 else G
                assert g % c.block_k == 0 and c.split_k * c.kb_per_split * c.block_k == K, (K, N, M, G, c)
                assert 1 <= c.split_k <= 16
    with pytest.raises(ValueError, match="multiple of 16"):
        T.choose(1, 128, 264, 8, 132)


def test_pack_is_the_gptq_row_layout():
    q = torch.randint(0, 16, (64, 24))
    assert torch.equal(unpack_rows(T.pack(q)), q)


def test_quantize_round_trip_within_half_a_step():
    w = torch.randn(256, 64, dtype=torch.float64)
    q, s = T.quantize(w, 64)
    assert q.min() >= 0 and q.max() <= 15
    err = (T.dequantize(q, s, 64) - w).abs()
    half_step = s.double().repeat_interleave(64, 0) / 2
    assert (err <= half_step * (1 + 2e-3)).all(), (err / half_step).max()  # scales rounded to fp16
    qw, s2 = T.pack_from_float(w, 64)
    assert torch.equal(unpack_rows(qw), q) and torch.equal(s2, s)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("with_zero", [False, True])
def test_tinygemm_cpu_convention(dtype, with_zero):
    gen = torch.Generator().manual_seed(5)
    K, N, G = 256, 64, 64
    q = torch.randint(0, 16, (K, N), generator=gen)
    s = torch.rand(K // G, N, generator=gen) * 0.02 + 0.002
    z = (torch.rand(K // G, N, generator=gen) - 0.5) * 0.05 if with_zero else None
    x = torch.randn(3, K, generator=gen).to(dtype)
    out = tinygemm.mm(x, tinygemm.pack(q, s, G, zeros=z, act_dtype=dtype))
    w = tinygemm.dequantize(q, s, G, zeros=z, dtype=dtype)
    bound = {torch.float32: 1e-5, torch.float16: BOUND[torch.float16], torch.bfloat16: BOUND[torch.bfloat16]}[dtype]
    assert errors(out, x.double() @ w)[0] <= bound
    if with_zero:  # "+ zero" is the convention, not "- zero" (the kernel's comment says "-")
        w_minus = tinygemm.dequantize(q, s, G, dtype=dtype) - (w - tinygemm.dequantize(q, s, G, dtype=dtype))
        assert errors(out, x.double() @ w_minus)[0] > 10 * bound


def test_tinygemm_cuda_branch_on_fake_tensors():
    """The arm's CUDA branch through the installed torch's meta kernels (FakeTensorMode: no GPU):
    the ops take what it passes (uint8 [N, K/2]; bf16 x) and return the layout it expects."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    K, N, G, ikt = 512, 256, 128, tinygemm.INNER_K_TILES
    with FakeTensorMode():
        q = torch.empty(K, N, dtype=torch.uint8, device="cuda")
        s = torch.empty(K // G, N, dtype=torch.float16, device="cuda")
        p = tinygemm.pack(q, s, G)
        assert p.weight.dtype == torch.int32 and p.weight.shape == (N // 8, K // (16 * ikt), 32, ikt // 2)
        assert p.scales_and_zeros.dtype == torch.bfloat16 and p.scales_and_zeros.shape == (K // G, N, 2)
        out = tinygemm.mm(torch.empty(5, K, dtype=torch.bfloat16, device="cuda"), p)
        assert out.shape == (5, N) and out.dtype == torch.bfloat16
        with pytest.raises(ValueError, match="must be torch.bfloat16"):
            tinygemm.mm(torch.empty(5, K, dtype=torch.float16, device="cuda"), p)
        with pytest.raises(RuntimeError, match="expected w to be uint8"):  # the int32 [N, K] form is CPU-only
            torch.ops.aten._convert_weight_to_int4pack(q.t().to(torch.int32).contiguous(), ikt)


def _cuda_layout_word(u8: torch.Tensor, n: int, k_outer: int, lane: int, inner: int, inner_k_tiles: int) -> int:
    """One int32 of torch's matrix_to_m16n8k16_Bint4_layout (aten/src/ATen/native/cuda/int4mm.cu,
    the non-ROCm branch), transcribed: lane t of n-tile n/8 packs bytes k0 + {0, 4, 8, 12} (in
    bytes, k0 = t % 4 within the k-tile pair) high nibbles first, then low nibbles."""
    base0 = (k_outer * inner_k_tiles + inner) * 16 // 2
    ks = [base0 + lane % 4, base0 + lane % 4 + 4, base0 + 8 + lane % 4, base0 + 8 + lane % 4 + 4]
    v = [int(u8[n, k]) for k in ks]
    word = 0
    for i in range(4):
        word |= ((v[i] & 0xF0) >> 4) << (4 * i)  # high nibbles -> nibbles 0..3
        word |= (v[i] & 0x0F) << (16 + 4 * i)  # low nibbles -> nibbles 4..7
    return word


def test_tinygemm_uint8_packing_matches_the_mma_fragment_rows():
    """Packed through torch's CUDA layout kernel, lane t's word must hold, in nibbles (i, i + 4),
    rows (k0 + 8i, k0 + 8i + 1) with k0 = 2 (t % 4): the m16n8k16 B fragment of two k-tiles.
    Swapping the nibbles of a byte fails this."""
    K, N, ikt = 64, 16, 2
    q = torch.randint(0, 16, (K, N))
    u8 = tinygemm.pack_uint8(q)
    assert u8.shape == (N, K // 2) and u8.dtype == torch.uint8
    for k_outer in range(K // (16 * ikt)):
        for lane in range(32):
            n = lane // 4  # n-tile 0
            word = _cuda_layout_word(u8, n, k_outer, lane, 0, ikt)
            k0 = k_outer * 16 * ikt + 2 * (lane % 4)
            for i in range(4):
                assert (word >> (4 * i)) & 0xF == q[k0 + 8 * i, n]
                assert (word >> (4 * (i + 4))) & 0xF == q[k0 + 8 * i + 1, n]


def test_arm_check_catches_a_wrong_weight():
    arm = A.build("mate", 256, 128, 128, torch.float16, "cpu", copies=1)
    x = torch.randn(4, 256).half()
    assert arm.check(x)["ok"]
    qw, meta, s, z = arm.weights[0]
    arm.weights[0] = (qw, meta, s * 1.01, z)
    chk = arm.check(x)
    assert not chk["ok"] and chk["rel_err"] > BOUND[torch.float16], chk
    tg = A.build("tinygemm", 256, 128, 128, torch.float16, "cpu", copies=1)
    assert tg.dtype == torch.bfloat16 and tg.check(x)["ok"]
    tg.q0 = (tg.q0 + 1) % 16
    assert not tg.check(x)["ok"]


def test_unknown_arm_is_named():
    with pytest.raises(ValueError, match="unknown arm 'cublas'"):
        A.build("cublas", 256, 128, 128, torch.float16, "cpu")


def test_decode_step_verdict():
    steps = {"read": {"median_us": 100.0}, "mate": {"median_us": 110.0}, "fp16": {"median_us": 400.0}, "bf16": {"median_us": 390.0}}
    v = decode_step.verdict("llama8b", steps)
    assert v["mate/read"] == pytest.approx(1.1) and v["fp16/mate"] == pytest.approx(400 / 110)
    assert v["target"]["mate/read_met"] and v["target"]["fp16/mate_met"]
    steps["mate"]["median_us"] = 140.0  # 1.4x the read: met for Qwen (1.5x), missed for Llama (1.15x)
    assert not decode_step.verdict("llama8b", steps)["target"]["mate/read_met"]
    assert decode_step.verdict("qwen1.5b", steps)["target"]["mate/read_met"]
    assert decode_step.verdict("qwen1.5b", steps)["target"]["fp16/mate_met"]  # 400 / 140 = 2.86 >= 2
    assert not decode_step.verdict("llama8b", steps)["target"]["fp16/mate_met"]  # < 3
    assert "mate_net/read_net" not in decode_step.verdict("llama8b", steps)
    steps["between"] = {"median_us": 60.0}  # --between: the ratio net of the kernels between
    assert decode_step.verdict("llama8b", steps)["mate_net/read_net"] == pytest.approx((140 - 60) / (100 - 60))
