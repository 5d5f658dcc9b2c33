"""The MPLinearKernel-shaped adapter (mate.adapter) on a stand-in for vLLM's GPTQ layer: a plain
nn.Module holding qweight / qzeros / scales / g_idx parameters. Results against the float64
reference of the checkpoint; can_implement's named reasons."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from checkpoints import BOUND, errors, random_gptq, reference
from mate.adapter import MateLinearKernel, MPLinearLayerConfig

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]


class GPTQStandIn(nn.Module):
    """What vLLM's GPTQ linear method registers (int32 params frozen, as its create_weights does)."""

    def __init__(self, ck, bias):
        super().__init__()
        p = lambda t: nn.Parameter(t, requires_grad=False)  # noqa: E731
        self.qweight, self.qzeros, self.scales, self.g_idx = p(ck.qweight), p(ck.qzeros), p(ck.scales), p(ck.g_idx)
        self.bias = None if bias is None else p(bias)


class ScalarTypeStandIn:
    """vLLM's ScalarType prints as its name (str(scalar_types.uint4b8) == 'uint4b8')."""

    def __init__(self, name):
        self.name = name

    def __str__(self):
        return self.name


def config(K, N, group_size, sym, desc_act, dtype=torch.float16, fmt="gptq_v2", **kw):
    c = dict(full_weight_shape=(K, N), partition_weight_shape=(K, N),
             weight_type=ScalarTypeStandIn("uint4b8" if sym else "uint4"), act_type=dtype, group_size=group_size,
             zero_points=not sym, has_g_idx=desc_act, checkpoint_format=fmt)
    c.update(kw)
    return MPLinearLayerConfig(**c)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("group_size,sym,desc_act,fmt,dtype", [
    (128, True, False, "gptq", torch.float16),  # symmetric: garbage qzeros / g_idx must not be read
    (64, False, False, "gptq_v2", torch.bfloat16),
    (32, False, True, "gptq", torch.float16),  # v1 zeros (stored zero - 1) with act order
    (-1, True, True, "", torch.bfloat16),
])
def test_adapter_matches_reference(device, group_size, sym, desc_act, fmt, dtype):
    K, N = 256, 192
    gen = torch.Generator(device).manual_seed(group_size + 3 * sym + 5 * desc_act)
    ck = random_gptq(K, N, group_size, sym, dtype, device, desc_act=desc_act, gen=gen,
                     checkpoint_format=fmt or "gptq_v2")
    bias = torch.randn(N, generator=gen, device=device).to(dtype)
    layer = GPTQStandIn(ck, bias)
    c = config(K, N, group_size, sym, desc_act, dtype, fmt)
    assert MateLinearKernel.can_implement(c) == (True, None)
    assert MateLinearKernel.get_min_capability() == 80
    k = MateLinearKernel(c, "qweight", "scales", "qzeros", "g_idx")
    k.process_weights_after_loading(layer)
    assert layer.qweight.shape == (N // 16, K // 64, 128)  # now the frame, not the checkpoint
    x = torch.randn(2, 5, K, generator=gen, device=device).to(dtype)
    y = k.apply_weights(layer, x, layer.bias)
    assert y.shape == (2, 5, N)
    total, col = errors(y, reference(ck, x, bias))
    assert total <= BOUND[dtype] and col <= 5 * BOUND[dtype], (total, col)
    # without bias, too
    assert errors(k.apply_weights(layer, x), reference(ck, x, None))[0] <= BOUND[dtype]


def test_wrong_format_is_wrong():
    """The config's checkpoint_format decides the zero offset: naming the wrong one gives a wrong
    result (so the test above can fail), which no shape guard can see."""
    K, N = 256, 128
    ck = random_gptq(K, N, 64, False, torch.float16, "cpu", checkpoint_format="gptq")
    layer = GPTQStandIn(ck, None)
    k = MateLinearKernel(config(K, N, 64, False, False, fmt="gptq_v2"), "qweight", "scales", "qzeros")
    k.process_weights_after_loading(layer)
    x = torch.randn(3, K).half()
    assert errors(k.apply_weights(layer, x), reference(ck, x, None))[0] > 0.05


@pytest.mark.parametrize("change,reason", [
    (dict(group_size=256), "group_size 256 not in (-1, 32, 64, 128)"),
    (dict(partition_weight_shape=(100, 128), full_weight_shape=(100, 128), group_size=-1),
     "partition K 100 not a multiple of 64"),
    (dict(partition_weight_shape=(256, 96)), "partition N 96 not a multiple of 64"),
    (dict(partition_weight_shape=(192, 128), full_weight_shape=(384, 128)),
     "partition K 192 not a multiple of group_size 128"),
    (dict(act_type=torch.float32), "act_type torch.float32 not in (torch.float16, torch.bfloat16)"),
    (dict(act_type=torch.int8), "act_type torch.int8 not in"),
    (dict(weight_type=ScalarTypeStandIn("uint8b128")), "weight_type uint8b128 not in (uint4b8, uint4)"),
    (dict(weight_type="float4_e2m1f"), "weight_type float4_e2m1f not in"),
    (dict(zero_points=True), "weight_type uint4b8 with zero_points=True: uint4b8 needs zero_points=False"),
    (dict(has_g_idx=True, partition_weight_shape=(96, 128), full_weight_shape=(256, 128)),
     "row-parallel act-order partition K 96 of full K 256: needs K a multiple of 8 that divides the full K"),
    (dict(out_type=torch.float32), "out_type torch.float32 differs from act_type"),
])
def test_can_implement_reasons(change, reason):
    c = config(256, 128, 128, True, False)
    for key, v in change.items():
        setattr(c, key, v)
    ok, why = MateLinearKernel.can_implement(c)
    assert not ok and reason in why, why
    with pytest.raises(ValueError, match="cannot implement"):
        MateLinearKernel(c, "qweight", "scales")


def test_row_parallel_without_act_order_is_fine_and_names_are_required():
    c = config(256, 128, 128, True, False)
    c.full_weight_shape = (512, 128)
    assert MateLinearKernel.can_implement(c) == (True, None)
    with pytest.raises(ValueError, match=r"`w_zp_param_name` = None: the config has zero_points=True"):
        MateLinearKernel(config(256, 128, 128, False, False), "qweight", "scales")
    with pytest.raises(ValueError, match=r"`w_gidx_param_name` = None: the config has has_g_idx=True"):
        MateLinearKernel(config(256, 128, 128, True, True), "qweight", "scales")
    k = MateLinearKernel(c, "qweight", "scales")
    with pytest.raises(ValueError, match=r"`layer`: process_weights_after_loading"):
        k.apply_weights(nn.Module(), torch.randn(1, 256).half())


def test_partition_shape_must_match_the_params():
    ck = random_gptq(256, 128, 128, True, torch.float16, "cpu")
    c = config(256, 192, 128, True, False)
    k = MateLinearKernel(c, "qweight", "scales")
    with pytest.raises(ValueError, match=r"`qweight` holds a 256x128 \(K x N\) layer: .* 256x192"):
        k.process_weights_after_loading(GPTQStandIn(ck, None))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("world", [2, 4])
def test_row_parallel_act_order_shards_sum_to_the_layer(device, world):
    """K not full: each rank's stand-in holds what vLLM loads for it (its qweight rows and g_idx
    slice, every group's scales and zeros); the ranks' outputs, summed in float64 (the all-reduce),
    match the unsharded float64 reference."""
    from mate.shard import slice_gptq

    K, N, G = 512, 128, 64
    ck = random_gptq(K, N, G, False, torch.float16, device, desc_act=True)
    x = torch.randn(3, K, device=device).half()
    total = torch.zeros(3, N, dtype=torch.float64, device=device)
    for rank in range(world):
        t = slice_gptq(ck.qweight, ck.scales, ck.qzeros, ck.g_idx, group_size=G, desc_act=True, style="row",
                       rank=rank, world=world)
        part = ck.__class__(qweight=t["qweight"], scales=t["scales"], qzeros=t["qzeros"], g_idx=t["g_idx"],
                            group_size=G, sym=False, desc_act=True)
        layer = GPTQStandIn(part, None)
        c = config(K, N, G, False, True, partition_weight_shape=(K // world, N), tp_rank=rank)
        ok, why = MateLinearKernel.can_implement(c)
        assert ok, why
        kern = MateLinearKernel(c, "qweight", "scales", "qzeros", "g_idx")
        kern.process_weights_after_loading(layer)
        k = slice(rank * K // world, (rank + 1) * K // world)
        total += kern.apply_weights(layer, x[:, k]).double()
    e, col = errors(total, reference(ck, x, None))
    assert e <= BOUND[torch.float16] and col <= 5 * BOUND[torch.float16], (e, col)
