"""The raw path (src/raw.rs via torch_ops/mate/raw.py): the same validation and kernels as the op,
without the dispatcher. Same bits as the .out overload; errors carry the op's named message."""

import pytest
import torch

from checkpoints import frame_from_gptq_v2, random_gptq, reference, errors, BOUND, run_out
from mate.raw import RawCall


def _case(device, M=5, K=256, N=192, g=64, sym=False, dtype=torch.float16, act=True):
    ck = random_gptq(K, N, g, sym, dtype, device, desc_act=act)
    fr = frame_from_gptq_v2(ck)
    x = torch.randn(M, K, device=device).to(dtype)
    bias = torch.randn(N, device=device).to(dtype)
    return ck, fr, x, bias


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def test_raw_equals_the_op(device):
    ck, fr, x, bias = _case(device)
    out = torch.full((x.shape[0], fr.scales.shape[1]), float("nan"), dtype=x.dtype, device=device)
    need = RawCall(x, fr, out, bias=bias)()  # act order on Hopper: the gathered x needs a workspace
    ws = torch.zeros(need, dtype=torch.uint8, device=device) if need else None
    assert need == 0 or out.isnan().all(), "a call that asks for a workspace must launch nothing"
    assert RawCall(x, fr, out, bias=bias, workspace=ws)() == 0
    assert torch.equal(out, run_out(x, fr, bias))
    total, col = errors(out, reference(ck, x, bias))
    assert total <= BOUND[x.dtype] and col <= 5 * BOUND[x.dtype]


def test_raw_errors_name_the_argument():
    ck, fr, x, bias = _case("cpu")
    out = torch.empty(x.shape[0], fr.scales.shape[1], dtype=x.dtype)
    with pytest.raises(ValueError, match=r"`x`.*K = 256"):
        RawCall(x[:, :128], fr, out)()
    with pytest.raises(ValueError, match=r"`out`.*float32.*activation"):
        RawCall(x, fr, out.float())()


@pytest.mark.gpu
def test_raw_workspace_request_and_graph_capture():
    ck, fr, x, _ = _case("cuda", M=1, K=8960, N=1536, g=128, sym=True, act=False)  # a split decode plan
    out = torch.full((1, 1536), float("nan"), dtype=x.dtype, device="cuda")
    need = RawCall(x, fr, out)()
    assert need == torch.ops.mate.w4a16_workspace_size(x, fr.meta) > 0
    assert out.isnan().all(), "a call that asks for a workspace must launch nothing"
    ws = torch.zeros(need, dtype=torch.uint8, device="cuda")
    call = RawCall(x, fr, out, workspace=ws)
    assert call() == 0
    eager = out.clone()
    out.fill_(float("nan"))
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        call()
    g.replay()
    torch.cuda.synchronize()
    assert torch.equal(out, eager) and torch.equal(eager, run_out(x, fr, workspace=ws))
