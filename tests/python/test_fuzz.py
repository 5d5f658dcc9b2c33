"""Property-based fuzzing (hypothesis) of the op against the float64 GPTQ reference.

A case draws M (0..300, biased to small and odd), group size (-1/32/64/128), K (a multiple of 64
and of the group, up to 2048), N (a multiple of 64, up to 1024), symmetric or zero-point, act
order, dtype, bias, the leading dims of x ([M, K] or [a, b, K]) and a padded row stride (K plus
a multiple of 8), and a data seed. Each case: a random GPTQ checkpoint, its frame
(frame_from_gptq_v2), the .out overload into a NaN-poisoned output, the float64 reference
(total error <= BOUND, worst column <= 5x BOUND), a bit-identical rerun, and the functional
overload equal to .out.

* CPU (CI): a fixed number of derandomized examples, so every CI run tries the same cases.
* GPU (`-m gpu`, the H200): MATE_FUZZ_EXAMPLES examples (default 200), seed MATE_FUZZ_SEED
  (default 0). Every case runs (a mismatch is recorded, not raised, so the count is the whole
  sweep's); the test fails at the end if any case mismatched, listing them. A JSON summary goes to
  $MATE_FUZZ_REPORT when set.

Hypothesis' example database is off (database=None) and its constants cache goes to a temporary
directory: nothing is written into the repository.
A failing case prints as a `Case(...)`; `check_case(Case(...), "cuda")` replays it exactly.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from dataclasses import asdict, dataclass

import pytest
import torch
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st
from hypothesis.configuration import set_hypothesis_home_dir

from checkpoints import BOUND, errors, frame_from_gptq_v2, random_gptq, reference, run_out

# Hypothesis also caches literal constants under ./.hypothesis; keep the repository clean.
if not os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
    set_hypothesis_home_dir(os.path.join(tempfile.gettempdir(), f"mate-hypothesis-{os.getuid()}"))

DTYPES = {"float16": torch.float16, "bfloat16": torch.bfloat16}


@dataclass(frozen=True)
class Case:
    M: int
    K: int
    N: int
    group_size: int
    sym: bool
    act_order: bool
    dtype: str
    bias: bool
    lead: tuple  # leading dims of x; their product is M
    pad: int  # row stride = K + pad elements
    data_seed: int


SMALL_M = [0, 1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 31, 33, 63, 65, 127, 129, 255, 257, 299]


@st.composite
def cases(draw, max_k=2048, max_n=1024, max_m=300):
    M = draw(
        st.one_of(
            st.sampled_from([m for m in SMALL_M if m <= max_m]),
            st.integers(0, 16),
            st.integers(0, max_m // 2).map(lambda h: min(2 * h + 1, max_m)),  # odd
            st.integers(0, max_m),
        )
    )
    group_size = draw(st.sampled_from([-1, 32, 64, 128]))
    step = max(64, group_size)
    K = step * draw(st.one_of(st.integers(1, 4), st.integers(1, max_k // step)))
    N = 64 * draw(st.one_of(st.integers(1, 4), st.integers(1, max_n // 64)))
    if draw(st.booleans()):
        lead = (M,)
    else:
        divisors = [d for d in range(1, M + 1) if M % d == 0] if M else [1, 2, 3]
        a = draw(st.sampled_from(divisors))
        lead = (a, M // a if M else 0)
    pad = 8 * draw(st.one_of(st.just(0), st.integers(1, 16)))
    return Case(
        M=M,
        K=K,
        N=N,
        group_size=group_size,
        sym=draw(st.booleans()),
        act_order=draw(st.booleans()),
        dtype=draw(st.sampled_from(sorted(DTYPES))),
        bias=draw(st.booleans()),
        lead=lead,
        pad=pad,
        data_seed=draw(st.integers(0, 2**31 - 1)),
    )


def make_x(c: Case, gen, device):
    """x of shape [*lead, K] with row stride K + pad (a view into a wider buffer)."""
    dtype = DTYPES[c.dtype]
    wide = torch.randn(*c.lead, c.K + c.pad, generator=gen, device=device).to(dtype)
    x = wide[..., : c.K]
    assert x.shape == (*c.lead, c.K) and (c.M == 0 or x.stride(-2) == c.K + c.pad)
    return x


def check_case(c: Case, device: str) -> str | None:
    """Runs one case; returns None when it passes, else what went wrong."""
    dtype = DTYPES[c.dtype]
    gen = torch.Generator(device).manual_seed(c.data_seed)
    ck = random_gptq(c.K, c.N, c.group_size, c.sym, dtype, device, desc_act=c.act_order, gen=gen)
    fr = frame_from_gptq_v2(ck)
    x = make_x(c, gen, device)
    bias = torch.randn(c.N, generator=gen, device=device).to(dtype) if c.bias else None
    out = run_out(x, fr, bias)
    if out.shape != (*c.lead, c.N) or out.dtype != dtype:
        return f"output is {out.dtype} {list(out.shape)}, expected {dtype} {[*c.lead, c.N]}"
    functional = torch.ops.mate.w4a16_gemm(x, *fr.args(), bias, fr.group_size)
    if functional.shape != out.shape:
        return f"functional overload returned shape {list(functional.shape)}, .out has {list(out.shape)}"
    if c.M == 0:
        return None
    nan = out.isnan()
    if nan.any():
        rows = nan.reshape(-1, c.N).any(dim=1).nonzero().flatten().tolist()
        return f"{int(nan.sum())} NaN outputs left (unwritten? poisoned with NaN), rows {rows[:10]}"
    total, col = errors(out, reference(ck, x, bias))
    bound = BOUND[dtype]
    if not (total <= bound and col <= 5 * bound):
        return f"error vs float64 reference: total {total:.3e} (bound {bound}), worst column {col:.3e} (bound {5 * bound})"
    again = run_out(x, fr, bias)
    if not torch.equal(out, again):
        return f"rerun differs in {int((out != again).sum())} of {out.numel()} elements (not bit-identical)"
    if not torch.equal(functional, out):
        return f"functional overload differs from .out in {int((functional != out).sum())} elements"
    return None


# --- CPU (CI) ---------------------------------------------------------------------------------

CPU_EXAMPLES = 100


@settings(
    max_examples=CPU_EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(c=cases())
def test_fuzz_cpu(c):
    failure = check_case(c, "cpu")
    assert failure is None, f"{c}: {failure}"


def test_fuzz_strategy_reaches_the_whole_envelope():
    """The strategy is not degenerate: over the CI examples' worth of draws it reaches every group
    size, dtype, both sym/zp, act order on and off, bias on and off, 3-D x, padded strides, M = 0,
    odd M, and K/N beyond the small ones. (Guards the fuzzer itself against silently shrinking.)"""
    seen = []

    @settings(max_examples=300, deadline=None, derandomize=True, database=None)
    @given(c=cases())
    def collect(c):
        assert c.K % 64 == 0 and (c.group_size == -1 or c.K % c.group_size == 0) and c.K <= 2048
        assert c.N % 64 == 0 and c.N <= 1024 and 0 <= c.M <= 300
        assert len(c.lead) in (1, 2) and (c.lead[0] if len(c.lead) == 1 else c.lead[0] * c.lead[1]) == c.M
        assert c.pad % 8 == 0
        seen.append(c)

    collect()
    want = {
        "groups": {-1, 32, 64, 128} <= {c.group_size for c in seen},
        "dtypes": set(DTYPES) <= {c.dtype for c in seen},
        "sym/zp": {True, False} <= {c.sym for c in seen},
        "act order": {True, False} <= {c.act_order for c in seen},
        "bias": {True, False} <= {c.bias for c in seen},
        "3-D x": any(len(c.lead) == 2 for c in seen),
        "padded stride": any(c.pad > 0 for c in seen),
        "M = 0": any(c.M == 0 for c in seen),
        "odd M > 100": any(c.M % 2 == 1 and c.M > 100 for c in seen),
        "K > 1024": any(c.K > 1024 for c in seen),
        "N > 512": any(c.N > 512 for c in seen),
    }
    missing = [k for k, ok in want.items() if not ok]
    assert not missing, f"the fuzz strategy never produced: {missing}"


# --- GPU (the H200) ---------------------------------------------------------------------------


@pytest.mark.gpu
def test_fuzz_gpu(capsys):
    examples = int(os.environ.get("MATE_FUZZ_EXAMPLES", "200"))
    fuzz_seed = int(os.environ.get("MATE_FUZZ_SEED", "0"))
    report_path = os.environ.get("MATE_FUZZ_REPORT")
    ran, failures, crashes = [], [], []
    t0 = time.time()

    @seed(fuzz_seed)
    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        phases=[Phase.generate],  # no shrinking: every case counts once
        suppress_health_check=list(HealthCheck),
    )
    @given(c=cases())
    def sweep(c):
        ran.append(c)
        try:
            failure = check_case(c, "cuda")
        except Exception as e:  # an exception inside the envelope is a mismatch too
            crashes.append((c, f"{type(e).__name__}: {e}"))
            return
        if failure is not None:
            failures.append((c, failure))

    try:
        sweep()
        torch.cuda.synchronize()
    finally:
        bad = failures + crashes
        summary = {
            "test": "test_fuzz_gpu",
            "device": torch.cuda.get_device_name(),
            "profile": "gpu",
            "hypothesis_seed": fuzz_seed,
            "max_examples": examples,
            "cases_run": len(ran),
            "distinct_cases": len(set(ran)),
            "mismatches": len(failures),
            "exceptions": len(crashes),
            "cases_with_act_order": sum(c.act_order for c in ran),
            "cases_m0": sum(c.M == 0 for c in ran),
            "seconds": round(time.time() - t0, 1),
            "failing_cases": [{"case": asdict(c), "failure": f} for c, f in bad[:50]],
        }
        if report_path:
            with open(report_path, "w") as f:
                json.dump(summary, f, indent=1)
        with capsys.disabled():
            print(
                f"\n[fuzz gpu] seed {fuzz_seed}: {len(ran)} cases, {len(failures)} mismatches, "
                f"{len(crashes)} exceptions, {summary['seconds']} s"
            )
    assert len(ran) >= min(examples, 50), f"only {len(ran)} of {examples} examples ran"
    assert not bad, f"{len(bad)} of {len(ran)} cases failed; first: " + "; ".join(
        f"{c}: {f}" for c, f in bad[:5]
    )
