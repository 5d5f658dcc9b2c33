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
    layers = [_split_layer(4096, 4096, 1, 1), _split_layer(14336, 4096, 1, 2), _split_layer(8192, 8192, 8, 3)]
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
    small = _split_layer(8960, 1536, 1, 4)  # splits in both launch contexts: eager and the capture's first call
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


# Run in a fresh process: torch hands out pooled streams, so in this one a "new" stream may be one
# whose buffer an earlier test grew, and the path under test would not run.
SCRIPT = r"""
import sys, threading
sys.path[:0] = [{tests!r}, {torch_ops!r}]
import torch, mate
from checkpoints import frame_from_gptq_v2, random_gptq, run_out

def layer(K, N, seed):
    gen = torch.Generator("cuda").manual_seed(seed)
    fr = frame_from_gptq_v2(random_gptq(K, N, 128, True, torch.float16, "cuda", gen=gen))
    x = torch.randn(1, K, generator=gen, device="cuda").half()
    need = torch.ops.mate.w4a16_workspace_size(x, fr.meta)
    assert need > 0
    return fr, x, run_out(x, fr, workspace=torch.zeros(need, dtype=torch.uint8, device="cuda"))

def op(fr, x):
    return torch.ops.mate.w4a16_gemm(x, fr.qweight, fr.meta, fr.scales, None, None, None, 128)

allocs = lambda: torch.cuda.memory_stats()["allocation.all.allocated"]
# both split at one token in both launch contexts (eager calls overlap, a capture's first does not)
small, large = layer(8960, 1536, 7), layer(14336, 4096, 8)
torch.cuda.synchronize()
if {mode!r} == "capture":
    # the stream's first call is inside the capture: its buffer is allocated and zeroed then
    s, g = torch.cuda.Stream(), torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, stream=s):
        before = allocs()  # (the graph's own set-up allocates too: counted from here)
        out = op(*large[:2])
        made = allocs() - before
    assert made == 1, ("torch allocations of the captured call", made)
    for _ in range(3):
        out.fill_(float("nan"))
        g.replay()
        torch.cuda.synchronize()
        assert torch.equal(out, large[2]), "replay differs"
    with torch.cuda.stream(s):  # an eager call afterwards reuses the buffer
        before = allocs()
        y = op(*large[:2])
        made = allocs() - before
        assert made == 1, ("torch allocations of the eager call after the capture", made)
        assert torch.equal(y, large[2]), "the eager call differs"
else:
    # another thread's stream outgrows its buffer while this thread captures in global mode
    sa, sb = torch.cuda.Stream(), torch.cuda.Stream()
    keep = []
    for st in (sa, sb):
        with torch.cuda.stream(st):
            op(*small[:2])
            # torch's own first elementwise call, made in the other thread during the capture,
            # is refused too (measured without this line, with either mate): not what is tested
            keep.append(small[1] * 2)
    torch.cuda.synchronize()
    seen = {{}}
    def other():
        try:
            with torch.cuda.stream(sb):
                seen["y"] = op(*large[:2])
        except Exception as e:
            seen["error"] = repr(e)
    g = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(g, stream=sa):
            out = op(*small[:2])
            t = threading.Thread(target=other)
            t.start()
            t.join()
    except Exception as e:
        raise AssertionError(f"the capture failed ({{e!r}}); the other thread: {{seen.get('error', 'no error')}}")
    torch.cuda.synchronize()
    assert "error" not in seen, seen["error"]
    assert torch.equal(seen["y"], large[2]), "the other thread's result differs"
    out.fill_(float("nan"))
    g.replay()
    torch.cuda.synchronize()
    assert torch.equal(out, small[2]), "replay differs"
print("OK")
"""


@pytest.mark.parametrize("mode", ["capture", "thread"])
def test_buffer_grown_during_a_capture(mode):
    """capture: a stream's first split call inside a capture allocates the op's buffer then (torch
    allocates only the output), zeroed outside the graph; the graph replays correctly and a later
    eager call reuses the buffer (the old capture fallback made two torch allocations). thread:
    cuMemAlloc is refused to every thread while one captures in global mode (torch's default), and
    the refused call invalidates that capture (measured on the old library: CUresult 900); the op
    allocates in relaxed mode, so another thread's call that outgrows its stream's buffer runs,
    and the capture stays valid."""
    code = SCRIPT.format(tests=str(ROOT / "tests/python"), torch_ops=str(ROOT / "torch_ops"), mode=mode)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip().endswith("OK"), r.stdout + r.stderr
