"""A random frame (group 128, symmetric, fp16) and the buffers of one `w4a16_gemm.out` call on it:
the shared setup of the profiling and lab scripts (bench/profile_one.py, bench/lab/probe_bwg.py,
bench/lab/clock_probe.py). Callers put torch_ops/ and tests/python/ on sys.path first."""
from types import SimpleNamespace

import torch

import mate  # noqa: F401  (loads the op library)
from checkpoints import pack_frame_v2


def random_call(K, N, M, device="cuda", extra_workspace=0):
    """Frame, x, out and a zeroed workspace of the planner's size (`need`) plus `extra_workspace`
    bytes; `.call()` runs the GEMM once into `.out`."""
    f = SimpleNamespace()
    f.qw = pack_frame_v2(torch.randint(0, 16, (K, N), device=device))
    f.s = (torch.rand(K // 128, N, device=device) * 0.02).half()
    f.meta = torch.ops.mate.frame_meta(K, N, 128, False, False)
    f.x = torch.randn(M, K, device=device).half()
    f.out = torch.empty(M, N, device=device).half()
    f.need = torch.ops.mate.w4a16_workspace_size(f.x, f.meta)
    f.ws = torch.zeros(max(f.need + extra_workspace, 1), dtype=torch.uint8, device=device)
    f.call = lambda: torch.ops.mate.w4a16_gemm.out(f.x, f.qw, f.meta, f.s, None, None, None, 128, workspace=f.ws, out=f.out)
    return f
