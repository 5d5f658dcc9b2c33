"""W4A16Linear's workspace as a serving engine uses it: forward passes none, so every layer of a
model shares the op's own buffer of the stream (src/device/workspace.rs), and CUDA graphs are
captured per batch size in one memory pool and replayed in any order.

- A model's layers of different shapes and token counts, run one after another, give bit for
  bit what each gives on a fresh zeroed workspace, within the float64 bound.
- A buffer that a larger plan outgrows is never freed: a graph captured with it keeps its
  address. Here a later capture in the graphs' pool fills fresh tensors with 0xFF; graphs
  captured with the outgrown and the grown buffer must give their own results and leave those
  tensors alone. (W4A16Linear's earlier buffer from torch's allocator, freed when outgrown, left
  the first graph's whole output unwritten this way: 4096 NaN of 4096 on the H200.)
- Graphs captured before any eager call on their stream (the buffer born, then outgrown, during
  capture) are correct on every replay, in any order."""

import pytest
import torch

from checkpoints import BOUND, errors
from mate.linear import W4A16Linear
from mate.quantize import rtn_quantize
from reference64 import dequantize_gptq, gemm64

pytestmark = pytest.mark.gpu

# K x N: a Qwen2-1.5B block (qkv, o, gate_up, down) and Llama-3-8B o / down. At 1-16 tokens most
# of them split K (bulk even split / stream-K, bwg's 16-token split); qkv at one token does not.
MODEL = [(1536, 2048), (1536, 1536), (1536, 17920), (8960, 1536), (4096, 4096), (14336, 4096)]


def _layer(K, N, gen):
    lin = torch.nn.Linear(K, N, bias=False, device="cuda")
    with torch.no_grad():
        lin.weight.copy_(torch.randn(N, K, generator=gen, device="cuda") * 0.05)
    layer = W4A16Linear.from_linear(lin, group_size=128, sym=True, dtype=torch.float16)
    ck = rtn_quantize(lin.weight, group_size=128, sym=True, dtype=torch.float16)
    w64 = dequantize_gptq(ck.qweight, ck.scales, ck.qzeros, None, group_size=128, sym=True, desc_act=False,
                          checkpoint_format="gptq_v2")
    return layer, w64


def _alone(layer, x):
    """The layer's result on a fresh zeroed workspace of its own, into a NaN-poisoned output."""
    out = torch.full((x.shape[0], layer.out_features), float("nan"), dtype=x.dtype, device="cuda")
    need = layer.workspace_size(x)
    return layer.forward_out(x, out, torch.zeros(need, dtype=torch.uint8, device="cuda") if need > 0 else None)


def test_model_layers_share_one_workspace():
    gen = torch.Generator("cuda").manual_seed(20261204)
    layers = [_layer(K, N, gen) for K, N in MODEL]
    calls = []
    for M in (1, 8, 16, 3):
        for li, (layer, w64) in enumerate(layers):
            x = torch.randn(M, layer.in_features, generator=gen, device="cuda").half()
            calls.append((li, x, _alone(layer, x), layer.workspace_size(x)))
    assert sum(need > 0 for *_, need in calls) >= 10, "too few split plans to test sharing"
    for li, x, alone, _ in calls:
        total, col = errors(alone, gemm64(x, layers[li][1], None))
        assert total <= BOUND[torch.float16] and col <= 5 * BOUND[torch.float16], (MODEL[li], x.shape, total, col)
    # as a model runs: every layer at one token count, then the next count; then in reverse
    for order in (calls, calls[::-1]):
        for li, x, alone, need in order:
            y = layers[li][0](x)
            assert torch.equal(y, alone), f"K x N = {MODEL[li]}, M = {x.shape[0]}: differs through the shared workspace"


def _two_layers(seed):
    # Both layers split at one token in both launch contexts (README, "launch context"): the eager
    # results here overlap, a capture's first call does not, and the graphs must match them bit for
    # bit. (Llama-8B o, the smaller layer before, plans whole tiles without overlap.)
    gen = torch.Generator("cuda").manual_seed(seed)
    (small, w_small), (large, w_large) = _layer(8960, 1536, gen), _layer(14336, 4096, gen)
    xs = torch.randn(1, 8960, generator=gen, device="cuda").half()
    xl = torch.randn(1, 14336, generator=gen, device="cuda").half()
    need_s, need_l = small.workspace_size(xs), large.workspace_size(xl)
    assert 0 < need_s < need_l, (need_s, need_l)  # the larger plan grows the workspace
    want_s, want_l = _alone(small, xs), _alone(large, xl)
    assert errors(want_s, gemm64(xs, w_small, None))[0] <= BOUND[torch.float16]
    assert errors(want_l, gemm64(xl, w_large, None))[0] <= BOUND[torch.float16]
    return (small, xs, want_s), (large, xl, want_l), need_s


def test_outgrown_workspace_outlives_the_graphs_that_use_it():
    (small, xs, want_s), (large, xl, want_l), need_s = _two_layers(20261205)
    s = torch.cuda.Stream()  # the capture stream, warmed up on the smaller layer only
    with torch.cuda.stream(s):
        small(xs)
    s.synchronize()
    g_small, g_large, g_other = (torch.cuda.CUDAGraph() for _ in range(3))
    with torch.cuda.graph(g_small, stream=s):
        out_small = small(xs)
    with torch.cuda.stream(s):
        large(xl)  # outgrows the buffer g_small captured
    s.synchronize()
    with torch.cuda.graph(g_large, pool=g_small.pool(), stream=s):
        out_large = large(xl)
    with torch.cuda.graph(g_other, pool=g_small.pool(), stream=s):  # a later capture's tensors in the pool
        junk = [torch.full((need_s,), 255, dtype=torch.uint8, device="cuda") for _ in range(4)]
    torch.cuda.synchronize()
    for _ in range(3):
        g_other.replay()
        out_small.fill_(float("nan"))
        out_large.fill_(float("nan"))
        g_large.replay()
        g_small.replay()
        torch.cuda.synchronize()
        assert torch.equal(out_small, want_s), f"the graph of the outgrown buffer differs (NaN: {int(out_small.isnan().sum())})"
        assert torch.equal(out_large, want_l), f"the graph of the grown buffer differs (NaN: {int(out_large.isnan().sum())})"
        for t in junk:
            assert bool((t == 255).all()), "a replay wrote into another capture's tensor"


def test_graph_captured_before_any_call_on_its_stream():
    (small, xs, want_s), (large, xl, want_l), _ = _two_layers(20261206)
    g_small, g_large = torch.cuda.CUDAGraph(), torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()  # never used eagerly: the buffer is allocated during the first capture
    with torch.cuda.graph(g_small, stream=s):
        out_small = small(xs)
    with torch.cuda.graph(g_large, pool=g_small.pool(), stream=s):
        out_large = large(xl)
    for _ in range(3):
        out_small.fill_(float("nan"))
        out_large.fill_(float("nan"))
        g_large.replay()
        g_small.replay()  # after the larger graph: its outgrown buffer still holds zero tickets
        g_large.replay()
        torch.cuda.synchronize()
        assert torch.equal(out_small, want_s) and torch.equal(out_large, want_l)
