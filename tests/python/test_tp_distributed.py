"""A tensor-parallel MLP in torch.distributed: gate and up column-parallel, SiLU(gate) * up on each
rank's columns, down row-parallel (act order: "K not full" shard frames) with an all-reduce of the
partial sums, bias added once. Every rank builds its frames from its slice of the whole
checkpoints (mate.shard) and checks the all-reduced output against the float64 reference of the
UNSHARDED MLP (whole layers dequantized from the original tensors, tests/python/reference64.py).

CPU: backend gloo, 2 processes (torch.multiprocessing spawn). GPU: backend NCCL, one process per
GPU, needs 2+ GPUs (`pytest -m gpu tests/python/test_tp_distributed.py` on such a machine)."""

import os

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

HIDDEN, INTER, M = 512, 1024, 6


def _checkpoints(dtype):
    from checkpoints import random_gptq

    gen = torch.Generator().manual_seed(1234)
    gate = random_gptq(HIDDEN, INTER, 128, False, dtype, "cpu", desc_act=True, gen=gen)
    up = random_gptq(HIDDEN, INTER, 64, True, dtype, "cpu", desc_act=False, gen=gen)
    down = random_gptq(INTER, HIDDEN, 128, False, dtype, "cpu", desc_act=True, gen=gen)
    x = torch.randn(M, HIDDEN, generator=gen).to(dtype)
    bias = torch.randn(HIDDEN, generator=gen).to(dtype)
    return gate, up, down, x, bias


def _reference(gate, up, down, x, bias):
    from reference64 import dequantize_gptq

    def w(ck):
        return dequantize_gptq(ck.qweight, ck.scales, ck.qzeros, ck.g_idx, group_size=ck.group_size, sym=ck.sym,
                               desc_act=ck.desc_act, checkpoint_format=ck.checkpoint_format)

    x64 = x.double()
    h = torch.nn.functional.silu(x64 @ w(gate)) * (x64 @ w(up))
    return h @ w(down) + bias.double()


def _frame(ck, style, rank, world, device):
    from mate import shard

    t = [None if v is None else v.to(device) for v in (ck.qweight, ck.scales, ck.qzeros, ck.g_idx)]
    return shard.from_gptq_tp(*t, group_size=ck.group_size, sym=ck.sym, desc_act=ck.desc_act,
                              checkpoint_format=ck.checkpoint_format, style=style, rank=rank, world=world)


def _worker(rank, world, backend, init_file, dtype, result_dir):
    from checkpoints import BOUND, errors

    import mate  # noqa: F401  (loads the library: MATE_LIBRARY is inherited)

    device = torch.device("cuda", rank) if backend == "nccl" else torch.device("cpu")
    if backend == "nccl":
        torch.cuda.set_device(device)
    dist.init_process_group(backend, init_method=f"file://{init_file}", rank=rank, world_size=world)
    try:
        gate, up, down, x, bias = _checkpoints(dtype)
        fg, fu = _frame(gate, "column", rank, world, device), _frame(up, "column", rank, world, device)
        fd = _frame(down, "row", rank, world, device)
        assert fd.in_features == INTER // world
        xd = x.to(device)
        h = torch.nn.functional.silu(fg.gemm(xd)) * fu.gemm(xd)  # this rank's INTER / world columns
        out = fd.gemm(h, bias.to(device) if rank == 0 else None)  # a partial sum of all HIDDEN outputs
        dist.all_reduce(out)
        total, col = errors(out.cpu(), _reference(gate, up, down, x, bias))
        assert total <= BOUND[dtype] and col <= 5 * BOUND[dtype], (rank, total, col)
        with open(os.path.join(result_dir, f"rank{rank}"), "w") as f:
            f.write(f"{total} {col}")
    finally:
        dist.destroy_process_group()


def _run(tmp_path, backend, world, dtype):
    mp.spawn(_worker, args=(world, backend, str(tmp_path / "init"), dtype, str(tmp_path)), nprocs=world, join=True)
    assert all((tmp_path / f"rank{r}").exists() for r in range(world))  # every rank reached its check


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_tp_mlp_gloo_two_processes(tmp_path, dtype):
    _run(tmp_path, "gloo", 2, dtype)


def test_the_reference_can_fail():
    """Rank 1's partial dropped (no all-reduce): far from the reference."""
    import mate  # noqa: F401
    from checkpoints import errors

    gate, up, down, x, bias = _checkpoints(torch.float16)
    h = torch.nn.functional.silu(_frame(gate, "column", 0, 2, "cpu").gemm(x)) * _frame(up, "column", 0, 2, "cpu").gemm(x)
    partial = _frame(down, "row", 0, 2, "cpu").gemm(h, bias)
    assert errors(partial, _reference(gate, up, down, x, bias))[0] > 0.2


@pytest.mark.gpu
@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="the NCCL run needs 2+ GPUs on one host")
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_tp_mlp_nccl(tmp_path, dtype):
    _run(tmp_path, "nccl", 2, dtype)
