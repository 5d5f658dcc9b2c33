"""mate.hf.swap_linears on a tiny random Llama (hidden 256, 2 layers, intermediate 512, 4 heads,
2 kv heads), on CPU: logits of the swapped model (fp16 activations through the mate op) against
the same model with the RTN-dequantized weights (dequantized by reference64, not by mate) in
float32 nn.Linear layers; fusion counted; the fused GEMM runs once per block."""

from __future__ import annotations

import copy

import pytest
import torch
from torch import nn

transformers = pytest.importorskip("transformers", reason="transformers is pinned in requirements.txt")

from mate.hf import FusedProjection, FusedSlice, dequantize_linears_, swap_linears  # noqa: E402
from mate.linear import W4A16Linear  # noqa: E402
from mate.quantize import rtn_quantize  # noqa: E402
from reference64 import dequantize_gptq  # noqa: E402

LAYERS = 2


def tiny_llama(bias: bool, seed: int = 0):
    cfg = transformers.LlamaConfig(hidden_size=256, num_hidden_layers=LAYERS, intermediate_size=512,
                                   num_attention_heads=4, num_key_value_heads=2, vocab_size=512,
                                   attention_bias=bias, mlp_bias=bias)
    torch.manual_seed(seed)
    model = transformers.LlamaForCausalLM(cfg).eval()
    if bias:  # transformers initialises biases to zero; make them count
        with torch.no_grad():
            for n, m in model.named_modules():
                if isinstance(m, nn.Linear) and m.bias is not None:
                    m.bias.normal_(0, 0.02)
    return model


def dequantized_twin(model, group_size, sym):
    """float32 copy with every decoder Linear's weight replaced by its RTN-dequantized value."""
    ref = copy.deepcopy(model).float()
    for name, m in ref.named_modules():
        if isinstance(m, nn.Linear) and not name.endswith("lm_head"):
            ck = rtn_quantize(m.weight, group_size=group_size, sym=sym, dtype=torch.float16)
            w = dequantize_gptq(ck.qweight, ck.scales, ck.qzeros, None, group_size=group_size, sym=sym,
                                desc_act=False, checkpoint_format="gptq_v2")
            m.weight.data = w.t().float().contiguous()
            if m.bias is not None:  # the swapped model holds its bias in fp16
                m.bias.data = m.bias.data.half().float()
    return ref


def rel(a, b):
    return ((a.double() - b.double()).norm() / b.double().norm()).item()


@pytest.mark.parametrize("group_size,sym,bias", [(128, True, False), (64, False, True), (-1, True, True)])
def test_swapped_llama_matches_dequantized_reference(group_size, sym, bias):
    model = tiny_llama(bias)
    ref = dequantized_twin(model, group_size, sym)
    original = copy.deepcopy(model).float()
    report = swap_linears(model, group_size=group_size, sym=sym, dtype=torch.float16)
    model.half()
    assert report["skipped"] == {}
    assert len(report["fused"]) == 2 * LAYERS and len(report["swapped"]) == 2 * LAYERS

    # fusion happened: per layer one qkv and one gate_up FusedProjection, o and down plain
    mods = list(model.modules())
    assert sum(isinstance(m, FusedProjection) for m in mods) == 2 * LAYERS
    assert sum(isinstance(m, FusedSlice) for m in mods) == 5 * LAYERS
    assert sum(isinstance(m, W4A16Linear) for m in mods) == 4 * LAYERS
    linears = [n for n, m in model.named_modules() if isinstance(m, nn.Linear)]
    assert linears == ["lm_head"]
    attn = model.model.layers[0].self_attn
    assert attn.qkv_proj.linear.out_features == 256 + 128 + 128
    assert model.model.layers[0].mlp.gate_up_proj.linear.out_features == 2 * 512

    # one GEMM per W4A16Linear per forward: the slices share the fused output
    calls = []
    for m in mods:
        if isinstance(m, W4A16Linear):
            m.register_forward_hook(lambda *a: calls.append(1))

    ids = torch.randint(0, 512, (2, 24), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        got = model(ids).logits
        want = ref(ids).logits
        orig = original(ids).logits
    assert len(calls) == 4 * LAYERS
    assert got.dtype == torch.float16
    err = rel(got, want)
    assert err < 5e-3, err
    # the check can fail: the unquantized model is measurably further away
    assert rel(orig, want) > 4 * err, (rel(orig, want), err)
    # the cached fused output is dropped when the block returns
    assert all(m._y is None for m in mods if isinstance(m, FusedProjection))


def test_slice_alone_recomputes_correctly():
    model = tiny_llama(True)
    swap_linears(model, group_size=128, sym=True, dtype=torch.float16)
    attn = model.model.layers[1].self_attn.half()
    x = torch.randn(3, 256).half()
    full = attn.qkv_proj(x)
    parts = [attn.q_proj(x), attn.k_proj(x.clone()), attn.v_proj(x.clone())]  # other tensors: recomputed
    assert torch.equal(torch.cat(parts, dim=-1), full)


def test_unservable_layers_stay_float():
    model = nn.Sequential(nn.Linear(256, 96), nn.Linear(96, 128), nn.Linear(256, 128))
    report = swap_linears(model, group_size=128, dtype=torch.float16)
    assert report["swapped"] == ["2"]
    assert set(report["skipped"]) == {"0", "1"} and "multiples of 64" in report["skipped"]["0"]
    assert type(model[0]) is nn.Linear and isinstance(model[2], W4A16Linear)


def test_dequantize_linears_is_the_reference_twin():
    model = tiny_llama(False)
    want = dequantized_twin(model, 64, False)
    changed = dequantize_linears_(model, group_size=64, sym=False, dtype=torch.float16)
    assert len(changed) == 7 * LAYERS and "lm_head" not in changed
    for (n, a), (_, b) in zip(model.named_parameters(), want.named_parameters()):
        assert torch.equal(a, b), n


def test_qwen2_with_qkv_bias():
    """Qwen2 (the e2e benchmark's second model): bias on q/k/v only, so the fused bias mixes."""
    cfg = transformers.Qwen2Config(hidden_size=256, num_hidden_layers=LAYERS, intermediate_size=512,
                                   num_attention_heads=4, num_key_value_heads=2, vocab_size=512)
    torch.manual_seed(3)
    model = transformers.Qwen2ForCausalLM(cfg).eval()
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.Linear) and m.bias is not None:
                m.bias.normal_(0, 0.02)
    assert model.model.layers[0].self_attn.q_proj.bias is not None
    assert model.model.layers[0].self_attn.o_proj.bias is None
    ref = dequantized_twin(model, 128, True)
    report = swap_linears(model, group_size=128, sym=True, dtype=torch.float16)
    model.half()
    assert len(report["fused"]) == 2 * LAYERS
    assert model.model.layers[0].self_attn.qkv_proj.linear.bias is not None
    ids = torch.randint(0, 512, (1, 20), generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        err = rel(model(ids).logits, ref(ids).logits)
    assert err < 5e-3, err
