"""The op's own workspace (src/device/workspace.rs): split-K calls that pass no `workspace` (the functional
overload, as torch.compile, mate.adapter and mate.marlin_compat call it) reuse one zeroed buffer
per device and stream instead of allocating and zeroing one per call, and keep an outgrown one
for the CUDA graphs captured with it."""

import subprocess
import sys
from pathlib import Path

import pytest
import torch

from checkpoints import BOUND, errors, frame_from_gptq_v2, random_gptq, reference, run_out

pytestmark = pytest.mark.gpu
ROOT = Path(__file__).resolve().parents[2]


def _split_layer(K, N, M, seed):
    gen = torch.Generator("cuda").manual_seed(seed)
    ck = random_gptq(K, N, 128, True, torch.float16, "cuda", gen=gen)
    fr = frame_from_gptq_v2(ck)
    x = torch.randn(M, K, generator=gen, device="cuda").half()
    need = torch.ops.mate.w4a16_workspace_size(x, fr.meta)
    assert need > 0, f"K x N = {K} x {N}, M = {M}: the test needs a split plan"
    alone = run_out(x, fr, workspace=torch.zeros(need, dtype=torch.uint8, device="cuda"))
    assert errors(alone, reference(ck, x, None))[0] <= BOUND[torch.float16]
    return fr, x, need, alone


def _op(fr, x):
    return torch.ops.mate.w4a16_gemm(x, fr.qweight, fr.meta, fr.scales, fr.zeros, fr.perm, None, fr.group_size)


def _allocations():
    return torch.cuda.memory_stats()["allocation.all.allocated"]


def test_functional_calls_reuse_one_workspace():
    layers = [_split_layer(4096, 4096, 1, 1), _split_layer(14336, 4096, 1, 2), _split_layer(4096, 6144, 8, 3)]
    for fr, x, _, alone in layers:  # first calls: the stream's workspace grows to the largest
        assert torch.equal(_op(fr, x), alone)
    torch.cuda.synchronize()
    before = _allocations()
    outs = [_op(fr, x) for _ in range(5) for fr, x, _, _ in layers]
    torch.cuda.synchronize()
    # one torch allocation per call: its output (the per-call workspace of before made it two)
    assert _allocations() - before == len(outs)
    for i, out in enumerate(outs):
        assert torch.equal(out, layers[i % len(layers)][3])


def test_outgrown_op_workspace_outlives_a_captured_graph():
    s = torch.cuda.Stream()
    small = _split_layer(4096, 4096, 1, 4)
    large = _split_layer(14336, 4096, 8, 5)
    assert small[2] < large[2]
    with torch.cuda.stream(s):
        _op(small[0], small[1])  # the capture stream's workspace, allocated eagerly
    s.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, stream=s):
        out = _op(small[0], small[1])
    with torch.cuda.stream(s):
        for _ in range(3):  # a larger eager need on the same stream outgrows the captured workspace
            assert torch.equal(_op(large[0], large[1]), large[3])
        junk = [torch.full((small[2],), 255, dtype=torch.uint8, device="cuda") for _ in range(4)]
    s.synchronize()
    for _ in range(3):
        out.fill_(float("nan"))
        g.replay()
        torch.cuda.synchronize()
        assert torch.equal(out, small[3]), f"the captured call differs (NaN: {int(out.isnan().sum())})"
        for t in junk:
            assert bool((t == 255).all()), "the graph wrote into a tensor allocated after its workspace was outgrown"


SCRIPT = r"""
import sys, warnings
sys.path[:0] = [{tests!r}, {torch_ops!r}]
import torch, mate
from checkpoints import frame_from_gptq_v2, random_gptq
gen = torch.Generator("cuda").manual_seed(7)
ck = random_gptq(4096, 4096, 128, True, torch.float16, "cuda", gen=gen)
fr = frame_from_gptq_v2(ck)
x = torch.randn(1, 4096, generator=gen, device="cuda").half()
op = lambda: torch.ops.mate.w4a16_gemm(x, fr.qweight, fr.meta, fr.scales, None, None, None, 128)
want = op()
s = torch.cuda.Stream()
if {warm}:
    with torch.cuda.stream(s):
        op()
    s.synchronize()
g = torch.cuda.CUDAGraph()
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    with torch.cuda.graph(g, stream=s):
        out = op()
g.replay()
torch.cuda.synchronize()
assert torch.equal(out, want), "replay differs"
print("WARNED" if any("split-K call without `workspace`" in str(m.message) for m in w) else "QUIET")
"""
WARNING = "split-K call without `workspace` was captured"


@pytest.mark.parametrize("warm,said", [(False, "WARNED"), (True, "QUIET")])
def test_capture_before_a_warm_call_says_so(warm, said):
    """Without an eager call on the capture stream the captured call falls back to its own
    zeroed workspace (correct, a memset per replay) and torch warns; with one it is quiet."""
    code = SCRIPT.format(tests=str(ROOT / "tests/python"), torch_ops=str(ROOT / "torch_ops"), warm=warm)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    # torch prints the op's warning on stderr or raises it as a Python warning (the script's WARNED)
    warned = r.stdout.strip().splitlines()[-1] == "WARNED" or WARNING in r.stderr
    assert warned == (said == "WARNED"), r.stdout + r.stderr
