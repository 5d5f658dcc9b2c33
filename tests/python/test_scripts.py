"""CPU checks of the reliability scripts, so CI catches breakage before a GPU run does:
scripts/sanitize.sh parses (bash -n) and its plumbing works end to end with a stand-in
compute-sanitizer; scripts/sanitize_driver.py compiles, runs its sweep through the CPU op, and
fails on a wrong result."""

from __future__ import annotations

import importlib.util
import json
import os
import py_compile
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import mate

ROOT = Path(__file__).resolve().parents[2]
SANITIZE = ROOT / "scripts" / "sanitize.sh"
DRIVER = ROOT / "scripts" / "sanitize_driver.py"
TOOLS = ["memcheck", "racecheck", "initcheck", "synccheck"]

# Stands in for compute-sanitizer: records its arguments and environment, runs the program, and
# writes a log like the real one (FAKE_ERRORS reports; FAKE_UNSUPPORTED: no summary at all).
FAKE_SANITIZER = r"""#!/usr/bin/env bash
if [[ "$1" == --help || "$1" == --version ]]; then echo "fake compute-sanitizer"; exit 0; fi
log=/dev/null; ecode=0
while [[ "$1" == --* ]]; do
  case "$1" in --log-file) log=$2 ;; --error-exitcode) ecode=$2 ;; esac
  echo "$1 $2" >> "$FAKE_RECORD"; shift 2
done
echo "env PYTORCH_NO_CUDA_MEMORY_CACHING=${PYTORCH_NO_CUDA_MEMORY_CACHING:-unset}" >> "$FAKE_RECORD"
if [[ -n "${FAKE_UNSUPPORTED:-}" ]]; then echo "========= Error: Device not supported" > "$log"; exit 1; fi
"$@"; rc=$?
n=${FAKE_ERRORS:-0}
{ for ((i = 0; i < n; i++)); do echo "========= Invalid __global__ read of size 4 bytes"; done
  echo "========= ERROR SUMMARY: $n errors"; } > "$log"
if (( n > 0 )); then exit "$ecode"; fi
exit $rc
"""


def test_sanitize_sh_parses():
    r = subprocess.run(["bash", "-n", str(SANITIZE)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert os.access(SANITIZE, os.X_OK), "scripts/sanitize.sh is not executable"


@pytest.mark.skipif(shutil.which("shellcheck") is None, reason="shellcheck not installed")
def test_sanitize_sh_shellcheck():
    r = subprocess.run(["shellcheck", "-S", "warning", str(SANITIZE)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_driver_compiles(tmp_path):
    py_compile.compile(str(DRIVER), cfile=str(tmp_path / "driver.pyc"), doraise=True)


def _env(**kw):
    env = dict(os.environ, MATE_LIBRARY=str(mate.load()), PYTHON=sys.executable)
    env.update({k: str(v) for k, v in kw.items()})
    return env


def test_driver_smoke_on_cpu(tmp_path):
    out = tmp_path / "d.json"
    r = subprocess.run(
        [sys.executable, str(DRIVER), "--device", "cpu", "--limit", "8", "--json", str(out)],
        env=_env(), capture_output=True, text=True, timeout=300,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    d = json.loads(out.read_text())
    assert d["ok"] and d["cases"] == 8 and d["op_calls"] == 16 and d["wrong_results"] == 0, d
    assert d["variants"] == [None]


def _load_driver():
    spec = importlib.util.spec_from_file_location("sanitize_driver_under_test", DRIVER)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_driver_sweep_covers_the_brief():
    d = _load_driver()
    cases = d.build_cases()
    Ms = {int(__import__("math").prod(c[0])) for c in cases}
    assert {1, 3, 17, 33, 100, 255, 0} <= Ms, Ms
    assert {c[3] for c in cases} == {-1, 32, 64, 128}
    assert {c[4] for c in cases} == {True, False} and {c[6] for c in cases} == {True, False}
    assert {c[7] for c in cases} == {True, False} and len({c[5] for c in cases}) == 2
    assert any(c[8] for c in cases) and any(len(c[0]) == 2 for c in cases)
    assert len({(c[1], c[2]) for c in cases}) >= 4


def test_driver_fails_on_a_wrong_result(monkeypatch, capsys):
    d = _load_driver()
    real = d.reference
    monkeypatch.setattr(d, "reference", lambda ck, x, b: real(ck, x, b) * 1.02)
    assert d.main(["--device", "cpu", "--limit", "3"]) == 1
    assert "off the float64 reference" in capsys.readouterr().err


def _sanitize(tmp_path, **env):
    fake = tmp_path / "compute-sanitizer"
    fake.write_text(FAKE_SANITIZER)
    fake.chmod(0o755)
    record = tmp_path / "record.txt"
    report = tmp_path / "out" / "sanitize.json"
    r = subprocess.run(
        ["bash", str(SANITIZE), str(report)],
        env=_env(COMPUTE_SANITIZER=fake, FAKE_RECORD=record, MATE_SANITIZE_DRIVER_ARGS="--device cpu --limit 2", **env),
        capture_output=True, text=True, timeout=600,
    )
    rep = json.loads(report.read_text()) if report.exists() else None
    return r, rep, record.read_text() if record.exists() else ""


def test_sanitize_sh_clean_run(tmp_path):
    r, rep, record = _sanitize(tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert rep["ok"] and rep["runs"] == 4 and rep["errors_reported"] == 0
    assert list(rep["tools"]) == TOOLS
    for t in TOOLS:
        assert f"--tool {t}" in record
        e = rep["tools"][t]
        assert e["ok"] and e["errors_reported"] == 0 and e["driver"]["op_calls"] == 4, (t, e)
        assert any(line.startswith(t) and "errors reported 0" in line for line in r.stdout.splitlines()), r.stdout
    assert "--error-exitcode 86" in record and "--print-limit 100" in record
    assert "env PYTORCH_NO_CUDA_MEMORY_CACHING=1" in record


def test_sanitize_sh_counts_reported_errors(tmp_path):
    r, rep, _ = _sanitize(tmp_path, FAKE_ERRORS=3, MATE_SANITIZE_TOOLS="memcheck racecheck")
    assert r.returncode == 1, r.stdout + r.stderr
    assert not rep["ok"] and rep["runs"] == 2 and rep["errors_reported"] == 6
    m = rep["tools"]["memcheck"]
    assert m["errors_reported"] == 3 and m["exit_status"] == 86 and not m["ok"]
    assert m["first_reports"][0].startswith("Invalid __global__ read"), m["first_reports"]


def test_sanitize_sh_fails_when_the_sanitizer_cannot_run(tmp_path):
    r, rep, _ = _sanitize(tmp_path, FAKE_UNSUPPORTED=1, MATE_SANITIZE_TOOLS="initcheck")
    assert r.returncode == 1, r.stdout + r.stderr
    e = rep["tools"]["initcheck"]
    assert not rep["ok"] and e["errors_reported"] is None
    assert any("did not finish" in p for p in e["problems"]) and any("no summary" in p for p in e["problems"])


# bench/decode.py and bench/decode_step.py time CUDA graphs; their --dry-run builds a tiny version of
# every arm on the CPU (Triton interpreted) and runs its float64 check, so a broken arm shows here.
BENCH = ROOT / "bench"


def _dry(script, *args):
    return subprocess.run([sys.executable, str(BENCH / script), "--dry-run", *args], env=_env(),
                          capture_output=True, text=True, timeout=300)


def _verdicts(stdout):
    """(M, arm) -> "ok" / "BAD" from the dry-run lines."""
    import re

    return {(int(m), a): v for m, a, v in re.findall(r"^dry-run .*M=(\d+) arm=(\w+) (ok|BAD)", stdout, re.M)}


def test_decode_dry_run_checks_every_arm():
    r = _dry("decode.py")
    assert r.returncode == 0, r.stdout + r.stderr
    arms = ("read", "mate", "triton", "tinygemm", "fp16", "bf16")
    assert _verdicts(r.stdout) == {(m, a): "ok" for m in (1, 16) for a in arms}, r.stdout


def test_decode_dry_run_act_order():
    """--act: the mate arm serves an act-order frame (x gathered by a random permutation, the
    float64 reference gathers too); arms that serve no act order say so instead of timing a
    different problem."""
    r = _dry("decode.py", "--act", "--arms", "read,mate,triton")
    assert r.returncode == 0, r.stdout + r.stderr
    assert _verdicts(r.stdout) == {(m, a): "ok" for m in (1, 16) for a in ("read", "mate")}, r.stdout
    assert "arm=triton skipped: serves no act-order frame" in r.stdout, r.stdout


def test_decode_refuses_an_unknown_arm():
    r = _dry("decode.py", "--arms", "mate,cublas")
    assert r.returncode == 2 and "unknown arm 'cublas'" in r.stderr, r.stderr


def test_decode_refuses_a_sustain_below_the_warm_up():
    r = _dry("decode.py", "--sustain-ms", "5")
    assert r.returncode == 2 and "--sustain-ms 5: below WARMUP_MS = 30" in r.stderr, r.stderr


def _decode_module():
    spec = importlib.util.spec_from_file_location("bench_decode", BENCH / "decode.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("mi", [0, 1])
def test_decode_both_orders_put_every_arm_before_and_after_every_other(mi):
    """--orders 2 (the arm right after cuBLAS reads slow at prefill sizes): each M's two passes
    time every arm once, and every arm runs once right after each neighbour it has in one pass
    and once right before it; --orders 1 keeps one pass, reversed at every other M."""
    d = _decode_module()
    arms = ["read", "mate", "fp16"]
    (one,) = d.arm_orders(arms, mi, 1)
    assert one == (arms if mi % 2 == 0 else arms[::-1])
    first, second = d.arm_orders(arms, mi, 2)
    assert first == one and second == one[::-1]
    assert sorted(first) == sorted(second) == sorted(arms)
    follows = lambda order: {(order[i], order[i + 1]) for i in range(len(order) - 1)}  # (before, after)
    assert follows(second) == {(b, a) for a, b in follows(first)}


def test_decode_combines_passes_by_the_median_of_medians():
    d = _decode_module()
    p1 = {"median_us": 10.0, "min_us": 9.5, "max_us": 12.0, "calls": 4}
    p2 = {"median_us": 12.0, "min_us": 11.0, "max_us": 13.0, "calls": 4}
    one = d.combine_passes([p1])
    assert one == p1 and "passes" not in one  # a single pass is reported as it was
    both = d.combine_passes([p1, p2])
    assert both["median_us"] == 11.0 and both["min_us"] == 9.5 and both["max_us"] == 13.0 and both["calls"] == 4
    assert both["passes"] == [p1, p2] and d.combine_passes([p2, p1])["median_us"] == 11.0
    assert "sm_clock_mhz" not in both  # no clock where NVML did not answer
    c1, c2 = dict(p1, sm_clock_mhz=1980.0), dict(p2, sm_clock_mhz=1400.0)
    assert d.combine_passes([c1, c2])["sm_clock_mhz"] == 1690.0
    assert "sm_clock_mhz" not in d.combine_passes([c1, p2])  # a clock for every pass or none


class _ForceRecorder:
    """A stand-in for torch with the two test / lab hooks decode.py's forced arms use."""

    def __init__(self):
        self.calls = []
        outer = self

        class Mate:
            def _force_variant(self, v):
                outer.calls.append(("variant", v))

            def _force_split(self, s):
                outer.calls.append(("split", s))

            def _pairs(self, allow):
                outer.calls.append(("pairs", allow))

            def _variants(self):
                return ["mate_dec_a", "mate_bulk_b", "mate_dec_c"]

        self.ops = type("Ops", (), {"mate": Mate()})()


def test_decode_forced_arms_set_and_restore_the_hooks():
    """--variants: SYMBOL@S forces both, @S only the split, SYMBOL only the variant; planning is
    restored after each timing, also when it fails; 'dec' lists every dec variant."""
    d = _decode_module()
    t = _ForceRecorder()
    with d.forcing(t, "mate_bwg_x@3"):
        assert t.calls == [("variant", "mate_bwg_x"), ("split", 3)]
    assert t.calls[2:] == [("variant", None), ("split", None)]
    t.calls.clear()
    with pytest.raises(RuntimeError):
        with d.forcing(t, "@4"):
            raise RuntimeError("a failed timing")
    assert t.calls == [("variant", None), ("split", 4), ("variant", None), ("split", None)]
    t.calls.clear()
    with d.forcing(t, "mate_bulk_b"):
        pass
    assert t.calls == [("variant", "mate_bulk_b"), ("split", None), ("variant", None), ("split", None)]
    t.calls.clear()
    with d.forcing(t, "@2/nopairs"):  # the paired split planned unpaired, pairs restored after
        assert t.calls == [("variant", None), ("split", 2), ("pairs", False)]
    assert t.calls[3:] == [("variant", None), ("split", None), ("pairs", True)]
    with pytest.raises(ValueError, match="nopairs"):
        with d.forcing(t, "@2/pairs"):
            pass
    assert d.forced_specs(t, "dec") == ["mate_dec_a", "mate_dec_c"]
    assert d.forced_specs(t, "@2,,mate_x@1") == ["@2", "mate_x@1"]
    # the forced arms take their turns: in both orders with the main arms
    first, second = d.arm_orders(["mate", "fp16"] + ["@2", "@4"], 0, 2)
    assert first == ["mate", "fp16", "@2", "@4"] and second == first[::-1]


def test_decode_step_dry_run_checks_every_arm():
    r = _dry("decode_step.py")
    assert r.returncode == 0, r.stdout + r.stderr
    assert _verdicts(r.stdout) == {(m, a): "ok" for m in (1, 16) for a in ("read", "mate", "mate_op", "fp16", "bf16")}, r.stdout


def test_decode_step_dry_run_between_and_a_subset():
    r = _dry("decode_step.py", "--between", "--projs", "o,down", "--m", "3")
    assert r.returncode == 0, r.stdout + r.stderr
    assert _verdicts(r.stdout) == {(3, a): "ok" for a in ("read", "mate", "mate_op", "fp16", "bf16")}, r.stdout
    bad = _dry("decode_step.py", "--projs", "o,up")
    assert bad.returncode != 0 and "--projs" in bad.stderr and "gate_up" in bad.stderr


def test_decode_step_dry_run_bf16_zero_points():
    """--dtype bfloat16 --zp: the mate arms run bf16 frames with zero points, checked against the
    float64 reference that subtracts those zeros (ignoring them would miss the bound)."""
    r = _dry("decode_step.py", "--dtype", "bfloat16", "--zp", "--m", "1,5")
    assert r.returncode == 0, r.stdout + r.stderr
    assert _verdicts(r.stdout) == {(m, a): "ok" for m in (1, 5) for a in ("read", "mate", "mate_op", "fp16", "bf16")}, r.stdout
    mate_lines = [ln for ln in r.stdout.splitlines() if " arm=mate " in ln]
    assert mate_lines and all("'bound': 0.01," in ln and "'bound': 0.002" not in ln for ln in mate_lines), r.stdout  # bf16's bound


def test_bench_provenance_names_the_library_that_ran(tmp_path, monkeypatch):
    """bench JSONs record the library that ran beside the checkout's commit (the GPU machine's
    copied git HEAD was stale in session 17): path, size, and the lab `commit` note beside it."""
    monkeypatch.syspath_prepend(str(ROOT))
    from bench.timing import provenance

    lib = tmp_path / "lab" / "libmate.so"
    lib.parent.mkdir()
    lib.write_bytes(b"\x7fELF" + bytes(60))
    monkeypatch.setenv("MATE_COMMIT", "abc123")
    p = provenance(ROOT, str(lib))
    assert p["commit"] == "abc123" and p["library"]["path"] == str(lib) and p["library"]["bytes"] == 64
    assert p["library"]["note"] is None
    (lib.parent / "commit").write_text("abc123 + a lab change\n")
    assert provenance(ROOT, str(lib))["library"]["note"] == "abc123 + a lab change"
    monkeypatch.delenv("MATE_COMMIT")
    monkeypatch.delenv("MATE_LIBRARY", raising=False)
    p = provenance(ROOT, None)
    assert "library" not in p and len(p["commit"]) in (0, 40)  # git HEAD, or nothing without git


def test_routing_sweep_forces_every_family_tile_that_holds_m():
    from bench import routing_sweep as rs

    defs = rs.variants()
    symbols = {r["symbol"]: r for r in defs}
    for m in [1, 2, 8, 9, 16, 17, 24, 25, 32, 33, 40, 41, 48, 49, 56, 57, 64]:
        got = rs.candidates(defs, m, "f16", False)
        # every tile holds M, but bwg's 32-token tile at M = 33-64 (two m-tiles: bwg_m33_64_tile)
        two_tiles = lambda s: symbols[s]["family"] == "bwg" and symbols[s]["tm"] == 32 and 33 <= m <= 64
        assert got and all((symbols[s]["tm"] >= m or two_tiles(s)) and symbols[s]["dtype"] == "f16" and not symbols[s]["zeros"] for s in got), (m, got)
        bwg_tms = {symbols[s]["tm"] for s in got if symbols[s]["family"] == "bwg"}
        assert bwg_tms == ({32, min(t for t in (40, 48, 56, 64) if t >= m)} if 33 <= m <= 64 else {min(t for t in (16, 24, 32) if t >= m)}), (m, bwg_tms)
        families = {symbols[s]["family"] for s in got}
        assert {"dect", "dec"} <= families, (m, families)
        assert ("bulk" in families) == (m <= 16) and ("wg" in families) == (17 <= m <= 64), (m, families)
    m1 = {symbols[s]["tm"] for s in rs.candidates(defs, 1, "f16", False) if symbols[s]["family"] == "bulk"}
    assert m1 == {1, 8}, m1  # bulk's whole plans take the 8-token tile at M = 1
    assert all(symbols[s]["zeros"] and symbols[s]["dtype"] == "bf16" for s in rs.candidates(defs, 16, "bf16", True))


def test_routing_sweep_flags_only_a_different_faster_variant():
    from bench import routing_sweep as rs

    def row(shape, routed_us, **forced):
        r = {"shape": shape, "M": 16, "mate": {"median_us": routed_us, "plan": ["kernel=mate_a grid=1,1,1"]}}
        r.update({k: {"median_us": v} for k, v in forced.items()})
        return r

    rows = [row("x", 10.0, mate_a=9.0, mate_b=9.6),  # the best is the routed kernel: noise, not flagged
            row("y", 10.0, mate_a=10.1, mate_b=9.6),  # a different variant 0.96x: flagged
            row("z", 10.0, mate_b=9.8),  # 0.98x: within the flag
            {"shape": "w", "M": 1, "mate": {"median_us": 1.0}}]  # no forced arm: no entry
    got = {e["shape"]: (e["best"], round(e["ratio"], 3), e["flag"]) for e in rs.report(rows, 0.97)}
    assert got == {"x": ("mate_a", 0.9, False), "y": ("mate_b", 0.96, True), "z": ("mate_b", 0.98, False)}


def test_routing_sweep_reports_a_gzipped_results_file(tmp_path, capsys):
    import gzip

    from bench import routing_sweep as rs

    rows = [{"shape": "y", "M": 16, "mate": {"median_us": 10.0, "plan": ["kernel=mate_a grid=1,1,1"]},
             "mate_a": {"median_us": 10.1}, "mate_b": {"median_us": 9.6}}]
    f = tmp_path / "r.json.gz"
    f.write_bytes(gzip.compress(json.dumps({"runs": {"m16": {"rows": rows}}}).encode()))
    assert rs.main(["--report", str(f)]) == 0
    assert "mate_b" in capsys.readouterr().out
