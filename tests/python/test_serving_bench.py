"""CPU checks of the serving benchmarks (the measurements themselves run on the GPU machine):
bench/e2e.py --tiny --device cpu end to end (structure, no host syncs in a decode step, numerics
of the W4A16 model against its dequantized fp16 twin), bench/host_cost.py --device cpu (arms,
the check's arithmetic, the raw path's arm), bench/host/build.sh parses."""

from __future__ import annotations

import importlib.util
import json
import os
import py_compile
import subprocess
import sys
from pathlib import Path

import pytest

import mate

ROOT = Path(__file__).resolve().parents[2]


def _run(args, tmp_path, timeout=120):
    out = tmp_path / "r.json"
    env = dict(os.environ, MATE_LIBRARY=str(mate.load()))
    r = subprocess.run([sys.executable, *args, "--json", str(out)], env=env, capture_output=True, text=True,
                       timeout=timeout, cwd=ROOT)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return json.loads(out.read_text())


def test_e2e_tiny_cpu(tmp_path):
    pytest.importorskip("transformers")
    d = _run(["bench/e2e.py", "--tiny", "--device", "cpu", "--replays", "2", "--warmup", "1"], tmp_path)
    assert d["model"] == "tiny" and d["gpu"] is None
    assert d["quant"]["fused"] == 4 and d["quant"]["swapped"] == 4  # 2 layers x (qkv, gate_up) + (o, down)
    assert set(d["batches"]) == {"1", "2"}
    for b, r in d["batches"].items():
        for arm in ("fp16", "w4a16", "inreads", "nongemm"):
            assert r[arm]["median_us"] > 0 and r[arm]["replays"] == 2
        floor = r["inreads"]["median_us"] - r["nongemm"]["median_us"]
        if floor > 0:  # (eager CPU times: the reads may not stand out of the noise)
            want = (r["w4a16"]["median_us"] - r["nongemm"]["median_us"]) / floor
            assert abs(r["gemm_over_inreads"] - want) < 1e-9 * abs(want)
        assert abs(r["tok_s"]["w4a16"] - int(b) / (r["w4a16"]["median_us"] * 1e-6)) < 1e-6 * r["tok_s"]["w4a16"]
    # the reads cover every frame byte: 2 layers of qkv 256x512, o 256x256, gate_up 256x1024, down 512x256,
    # int4 weights + fp16 scales per 128-group, symmetric (no zeros)
    kn = [(256, 512), (256, 256), (256, 1024), (512, 256)]
    assert d["reads"]["bytes"] == 2 * sum(k * n // 2 + (k // 128) * n * 2 for k, n in kn)
    assert d["reads"]["launches"] == 8
    c = d["check"]
    assert c["ok"] == (c["w4a16_us"] <= c["bound_us"])
    assert abs(c["bound_us"] - (d["batches"]["1"]["nongemm"]["median_us"] + 1.15 * d["reads"]["median_us"])) < 1e-6
    # a decode step never reads a device value on the host (it would break graph capture)
    assert d["host_syncs_in_step"] == {"fp16": [], "w4a16": []} and d["errors"] == {}
    n = d["numerics"]
    assert len(n["rel_err"]) == 8 + 1
    assert n["rel_err_max"] < 1e-2 and n["top5_overlap_min"] >= 0.6, n


def test_host_cost_cpu(tmp_path):
    d = _run(["bench/host_cost.py", "--device", "cpu", "--bursts", "6", "--calls", "3", "--warmup", "1"], tmp_path)
    arms = d["arms"]
    for a in ("mate_out", "mate", "linear", "custom_op", "module", "split_ws", "split_own", "raw"):
        assert 0 < arms[a]["p10_us"] <= arms[a]["median_us"] <= arms[a]["p90_us"], (a, arms[a])
    assert "mate_gemm_raw" in d["raw_note"]
    c = d["check"]
    assert c["rule"] == "mate_out - empty <= 1.5 us"
    if arms.get("empty"):
        assert abs(c["value_us"] - (arms["mate_out"]["median_us"] - arms["empty"]["median_us"])) < 1e-9
        assert c["ok"] == (c["value_us"] <= 1.5)
    else:
        assert c["ok"] is None and "build.sh" in d["missing"]["empty"]
    assert d["arms"]["own_workspace_us"] == arms["split_own"]["median_us"] - arms["split_ws"]["median_us"]
    for key in ("torch", "commit", "method", "shape", "split_shape"):
        assert d[key]


def test_build_script_parses_and_sources_compile(tmp_path):
    build = ROOT / "bench" / "host" / "build.sh"
    r = subprocess.run(["bash", "-n", str(build)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert os.access(build, os.X_OK)
    for f in ("bench/e2e.py", "bench/host_cost.py", "bench/decode.py", "bench/read_arm.py"):
        py_compile.compile(str(ROOT / f), cfile=str(tmp_path / "x.pyc"), doraise=True)


@pytest.mark.skipif(importlib.util.find_spec("triton") is None, reason="triton not installed")
def test_read_arm_is_importable():
    sys.path.insert(0, str(ROOT))
    from bench import read_arm

    assert read_arm.sink_for(4096 * 3 + 1, "cpu").numel() == 4


@pytest.mark.parametrize("name,shapes", [
    ("llama8b", {"qkv": (4096, 6144), "o": (4096, 4096), "gate_up": (4096, 28672), "down": (14336, 4096)}),
    ("qwen1.5b", {"qkv": (1536, 2048), "o": (1536, 1536), "gate_up": (1536, 17920), "down": (8960, 1536)}),
    ("qwen7b", {"qkv": (3584, 4608), "o": (3584, 3584), "gate_up": (3584, 37888), "down": (18944, 3584)}),
])
def test_e2e_model_configs_give_the_named_shapes(name, shapes):
    """bench/e2e.py's model configs (built with random weights on the GPU) have the projection
    shapes (K x N, fused qkv and gate_up) that DESIGN.md and the routing notes name."""
    pytest.importorskip("transformers")
    sys.path.insert(0, str(ROOT))
    from bench.e2e import MODELS

    c = MODELS[name]
    head = c["hidden_size"] // c["num_attention_heads"]
    got = {"qkv": (c["hidden_size"], (c["num_attention_heads"] + 2 * c["num_key_value_heads"]) * head),
           "o": (c["num_attention_heads"] * head, c["hidden_size"]),
           "gate_up": (c["hidden_size"], 2 * c["intermediate_size"]),
           "down": (c["intermediate_size"], c["hidden_size"])}
    assert got == shapes
