"""Concurrency on the GPU: no races, no cross-talk, capture beside eager work, first-call race.

* Many threads, each with its own stream, issue the op over a rotating set of problems (shapes,
  group sizes, sym/zp, dtypes, act order, bias, num_sms: different plans and kernels) for many
  iterations; every output is compared bit for bit with the single-threaded eager result computed
  beforehand (the kernels are deterministic), which itself is checked against the float64 reference.
* One thread captures a CUDA graph on its stream (capture_error_mode="thread_local") while another
  thread keeps running the op eagerly on its own stream; the capture waits, mid-capture, until the
  eager thread has made further calls, so the two overlap. Replays (also beside the eager thread)
  equal the eager results bit for bit, including after the input is changed in place.
* First-call race: in a fresh interpreter (the op never called, kernels not loaded), several threads
  make their first call to the op at once; each result equals a later single-threaded call bit for
  bit and the float64 reference. Repeated in several fresh processes.

Counts (threads x streams x iterations, wrong outputs) are printed and, when
$MATE_CONCURRENCY_REPORT is set, written there as JSON. Sizes: MATE_CONC_THREADS (8),
MATE_CONC_ITERS (calls per thread, 96), MATE_CONC_RACE_ROUNDS (fresh processes, 3).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch

import mate
from checkpoints import BOUND, errors, frame_from_gptq_v2, random_gptq, reference, run_out

pytestmark = pytest.mark.gpu

THREADS = int(os.environ.get("MATE_CONC_THREADS", "8"))
ITERS = int(os.environ.get("MATE_CONC_ITERS", "96"))
BATCH = 8  # calls queued on a stream between checks
RACE_ROUNDS = int(os.environ.get("MATE_CONC_RACE_ROUNDS", "3"))
JOIN_TIMEOUT = 300.0

F16, BF16 = torch.float16, torch.bfloat16
# (lead dims of x, K, N, group, sym, dtype, act order, bias, num_sms)
PROBLEMS = [
    ((1,), 4096, 4096, 128, True, F16, False, False, None),
    ((7,), 1536, 2048, 64, False, BF16, False, True, None),
    ((33,), 384, 320, 32, False, F16, True, True, None),
    ((100,), 2048, 1024, -1, True, BF16, False, False, None),
    ((256,), 1024, 512, 128, False, F16, False, True, 16),
    ((3,), 8960, 1536, 128, True, BF16, True, False, None),
    ((17,), 512, 768, 64, True, F16, False, True, 66),
    ((1000,), 1536, 1536, 128, False, BF16, False, False, None),
    ((4, 16), 256, 192, 32, True, BF16, False, True, None),
    ((2, 0), 256, 128, 64, False, F16, False, True, None),  # M = 0 among the others
]

REPORT: dict = {}


@dataclass
class Prepared:
    name: str
    fr: object
    x: torch.Tensor
    x_alt: torch.Tensor  # a second input, for in-place input changes under graph replay
    bias: torch.Tensor | None
    num_sms: int | None
    expected: torch.Tensor
    expected_alt: torch.Tensor

    def call_out(self, out, x=None):
        return run_out(self.x if x is None else x, self.fr, self.bias, out=out, num_sms=self.num_sms)

    def call_functional(self, x=None):
        return torch.ops.mate.w4a16_gemm(
            self.x if x is None else x, *self.fr.args(), self.bias, self.fr.group_size, num_sms=self.num_sms
        )


def _prepare(i, problem) -> Prepared:
    lead, K, N, g, sym, dtype, act, with_bias, num_sms = problem
    name = f"p{i}:{list(lead)}x{K}x{N}-g{g}-{'sym' if sym else 'zp'}-{str(dtype)[6:]}" + (
        "-act" if act else ""
    ) + ("-bias" if with_bias else "") + (f"-sms{num_sms}" if num_sms else "")
    gen = torch.Generator("cuda").manual_seed(1000 + i)
    ck = random_gptq(K, N, g, sym, dtype, "cuda", desc_act=act, gen=gen)
    fr = frame_from_gptq_v2(ck)
    x = torch.randn(*lead, K, generator=gen, device="cuda").to(dtype)
    x_alt = torch.randn(*lead, K, generator=gen, device="cuda").to(dtype)
    bias = torch.randn(N, generator=gen, device="cuda").to(dtype) if with_bias else None
    p = Prepared(name, fr, x, x_alt, bias, num_sms, None, None)
    p.expected = p.call_out(None)
    p.expected_alt = p.call_out(None, x=x_alt)
    torch.cuda.synchronize()
    for xx, e in ((x, p.expected), (x_alt, p.expected_alt)):
        assert e.shape == (*lead, N), f"{name}: output shape {list(e.shape)}"
        if e.numel():
            assert not e.isnan().any(), f"{name}: single-threaded eager result has unwritten (NaN) outputs"
            total, col = errors(e, reference(ck, xx, bias))
            assert total <= BOUND[dtype] and col <= 5 * BOUND[dtype], (
                f"{name}: single-threaded eager result is off the float64 reference: {total:.3e}, {col:.3e}"
            )
    return p


@pytest.fixture(scope="module")
def prepared():
    return [_prepare(i, p) for i, p in enumerate(PROBLEMS)]


@pytest.fixture(scope="module", autouse=True)
def concurrency_report():
    yield REPORT
    path = os.environ.get("MATE_CONCURRENCY_REPORT")
    if path and REPORT:
        REPORT["device"] = torch.cuda.get_device_name()
        with open(path, "w") as f:
            json.dump(REPORT, f, indent=1)


def _say(capsys, line):
    with capsys.disabled():
        print(f"\n[concurrency] {line}")


def _mismatch(name, got, want):
    if got.shape != want.shape:
        return f"{name}: shape {list(got.shape)}, expected {list(want.shape)}"
    if torch.equal(got, want):
        return None
    bad = (got != want) & ~(got.isnan() & want.isnan())
    return f"{name}: {int(bad.sum())} of {got.numel()} elements differ from the single-threaded result"


def _run_threads(target, n):
    errs = []

    def wrap(i):
        try:
            target(i)
        except BaseException as e:  # noqa: BLE001 - reported below
            errs.append(f"thread {i}: {type(e).__name__}: {e}")

    ts = [threading.Thread(target=wrap, args=(i,), name=f"mate-conc-{i}") for i in range(n)]
    for t in ts:
        t.start()
    deadline = time.time() + JOIN_TIMEOUT
    for t in ts:
        t.join(max(0.0, deadline - time.time()))
    alive = [t.name for t in ts if t.is_alive()]
    assert not alive, f"threads still running after {JOIN_TIMEOUT} s (deadlock?): {alive}"
    return errs


def test_threads_on_own_streams_no_cross_talk(prepared, capsys):
    n = len(prepared)
    barrier = threading.Barrier(THREADS, timeout=120)
    wrong, calls = [], [0] * THREADS
    streams = set()

    def worker(t):
        s = torch.cuda.Stream()
        streams.add(s.cuda_stream)
        bufs = {}
        barrier.wait()
        with torch.cuda.stream(s):
            for it0 in range(0, ITERS, BATCH):
                pending = []
                for it in range(it0, min(it0 + BATCH, ITERS)):
                    p = prepared[(3 * t + it) % n]  # neighbours run different problems at once
                    if it % 4 == 3:
                        y = p.call_functional()  # allocates on this thread's stream
                    else:
                        y = bufs.get((p.name, it - it0))
                        if y is None:
                            y = bufs[(p.name, it - it0)] = torch.empty_like(p.expected)
                        y.fill_(float("nan"))
                        p.call_out(y)
                    pending.append((p, y))
                s.synchronize()
                for p, y in pending:
                    calls[t] += 1
                    m = _mismatch(f"thread {t} {p.name}", y, p.expected)
                    if m:
                        wrong.append(m)

    errs = _run_threads(worker, THREADS)
    total = sum(calls)
    REPORT["threads_streams"] = {
        "threads": THREADS,
        "streams": len(streams),
        "iterations_per_thread": ITERS,
        "problems": len(prepared),
        "calls_checked": total,
        "wrong_outputs": len(wrong),
        "thread_errors": len(errs),
    }
    _say(capsys, f"{THREADS} threads x {len(streams)} streams x {ITERS} iterations = {total} outputs "
         f"checked bitwise, {len(wrong)} wrong, {len(errs)} thread errors")
    assert not errs, errs[:5]
    assert len(streams) == THREADS, f"threads shared streams: {len(streams)} distinct of {THREADS}"
    assert total == THREADS * ITERS, f"{total} outputs checked, expected {THREADS * ITERS}"
    assert not wrong, f"{len(wrong)} wrong outputs; first: {wrong[:5]}"


def test_graph_capture_beside_eager_thread(prepared, capsys):
    a, c = prepared[2], prepared[4]  # captured (act order; num_sms=16)
    b = prepared[1]  # eager in the other thread
    eager_calls, eager_wrong = [0], []
    b_started, stop = threading.Event(), threading.Event()
    during = {}

    eager_errs: list = []

    def eager():
        try:
            s = torch.cuda.Stream()
            with torch.cuda.stream(s):
                while not stop.is_set():
                    y = b.call_out(None) if eager_calls[0] % 2 else b.call_functional()
                    m = _mismatch(f"eager thread call {eager_calls[0]}", y, b.expected)  # syncs s
                    if m:
                        eager_wrong.append(m)
                    eager_calls[0] += 1
                    if eager_calls[0] == 3:
                        b_started.set()
        except BaseException as e:  # noqa: BLE001 - reported below
            eager_errs.append(f"{type(e).__name__}: {e}")

    def wait_for_eager(more, what):
        target = eager_calls[0] + more
        t_end = time.time() + 30
        while eager_calls[0] < target:
            assert worker.is_alive(), f"eager thread died {what}: {eager_errs}"
            assert time.time() < t_end, f"eager thread made no progress {what}"
            time.sleep(0.001)

    worker = threading.Thread(target=eager, name="mate-conc-eager")
    worker.start()
    try:
        assert b_started.wait(60), f"eager thread did not start: {eager_errs}"
        sa = torch.cuda.Stream()
        out_a = torch.full_like(a.expected, float("nan"))
        out_c = torch.full_like(c.expected, float("nan"))
        x_a = a.x.clone()
        sa.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(sa):  # warm-up on the capture stream
            a.call_out(out_a, x=x_a)
            c.call_out(out_c)
        sa.synchronize()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g, stream=sa, capture_error_mode="thread_local"):
            during["start"] = eager_calls[0]
            a.call_out(out_a, x=x_a)
            wait_for_eager(2, "during the capture")  # eager calls land mid-capture
            y_a = a.call_functional(x=x_a)
            c.call_out(out_c)
            during["end"] = eager_calls[0]
        replays, replay_wrong = 0, []
        for r in range(24):
            alt = r >= 12
            with torch.cuda.stream(sa):
                if r == 12:
                    x_a.copy_(a.x_alt)  # replay reads the new input in place
                out_a.fill_(float("nan"))
                out_c.fill_(float("nan"))
                y_a.fill_(float("nan"))  # the graph's own output, rewritten by each replay
                g.replay()
            sa.synchronize()
            replays += 1
            want_a = a.expected_alt if alt else a.expected
            for m in (
                _mismatch(f"replay {r} out_a", out_a, want_a),
                _mismatch(f"replay {r} functional", y_a, want_a),
                _mismatch(f"replay {r} out_c", out_c, c.expected),
            ):
                if m:
                    replay_wrong.append(m)
            if r % 6 == 5:
                wait_for_eager(1, "during replays")
    finally:
        stop.set()
        worker.join(JOIN_TIMEOUT)
    assert not worker.is_alive(), "eager thread did not stop"
    REPORT["capture_beside_eager"] = {
        "capturing_threads": 1,
        "eager_threads": 1,
        "streams": 2,
        "eager_calls": eager_calls[0],
        "eager_calls_during_capture": during["end"] - during["start"],
        "eager_wrong_outputs": len(eager_wrong),
        "graph_replays": replays,
        "replay_outputs_checked": 3 * replays,
        "replay_wrong_outputs": len(replay_wrong),
    }
    _say(capsys, f"capture beside eager: {eager_calls[0]} eager calls ({during['end'] - during['start']} during "
         f"capture), {replays} replays x 3 outputs, {len(eager_wrong) + len(replay_wrong)} wrong")
    assert not eager_errs, eager_errs
    assert during["end"] - during["start"] >= 2, "the eager thread did not overlap the capture"
    assert not eager_wrong, eager_wrong[:5]
    assert not replay_wrong, replay_wrong[:5]


RACE_SCRIPT = r"""
import json, sys, threading
sys.path[:0] = [sys.argv[1], sys.argv[2]]
import torch
import mate  # loads the library: ops registered, no CUDA call to them yet
from checkpoints import BOUND, errors, frame_from_gptq_v2, random_gptq, reference, run_out

n = int(sys.argv[3])
F16, BF16 = torch.float16, torch.bfloat16
configs = [(M, K, N, g, sym, dt, act) for (M, K, N, g, sym, dt, act) in [
    (1, 1024, 512, 128, True, F16, False), (17, 512, 256, 64, False, BF16, False),
    (33, 384, 320, 32, False, F16, True), (100, 256, 192, -1, True, BF16, False),
    (3, 2048, 1024, 128, False, BF16, True), (255, 512, 128, 64, True, F16, False),
    (8, 768, 640, 32, True, BF16, False), (64, 1024, 1024, 128, False, F16, False)]]
inputs = []
for i in range(n):
    M, K, N, g, sym, dt, act = configs[i % len(configs)]
    gen = torch.Generator("cuda").manual_seed(i)
    ck = random_gptq(K, N, g, sym, dt, "cuda", desc_act=act, gen=gen)
    inputs.append((ck, frame_from_gptq_v2(ck), torch.randn(M, K, generator=gen, device="cuda").to(dt)))
torch.cuda.synchronize()
streams = [torch.cuda.Stream() for _ in range(n)]
barrier = threading.Barrier(n, timeout=120)
results, errs = [None] * n, []

def first_call(i):
    try:
        barrier.wait()
        with torch.cuda.stream(streams[i]):
            results[i] = run_out(inputs[i][2], inputs[i][1])
        streams[i].synchronize()
    except BaseException as e:
        errs.append(f"thread {i}: {type(e).__name__}: {e}")

ts = [threading.Thread(target=first_call, args=(i,)) for i in range(n)]
for t in ts: t.start()
for t in ts: t.join(300)
wrong = []
for i, (ck, fr, x) in enumerate(inputs):
    if results[i] is None:
        continue
    again = run_out(x, fr)  # single-threaded, kernels loaded by now
    if not torch.equal(results[i], again):
        wrong.append(f"thread {i}: first-call result differs from a later call")
    total, col = errors(results[i], reference(ck, x, None))
    b = BOUND[x.dtype]
    if not (total <= b and col <= 5 * b):
        wrong.append(f"thread {i}: off the float64 reference ({total:.3e}, {col:.3e})")
print(json.dumps({"threads": n, "alive": sum(t.is_alive() for t in ts), "errors": errs, "wrong": wrong,
                  "results": sum(r is not None for r in results)}))
sys.exit(0)
"""


def test_first_call_race_in_fresh_process(capsys):
    here = Path(__file__).resolve().parent
    env = dict(os.environ, MATE_LIBRARY=str(mate.load()))
    rounds = []
    for r in range(RACE_ROUNDS):
        proc = subprocess.run(
            [sys.executable, "-c", RACE_SCRIPT, str(here.parents[1] / "torch_ops"), str(here), str(THREADS)],
            env=env, capture_output=True, text=True, timeout=300,
        )
        assert proc.returncode == 0, f"round {r}: exit {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        last = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
        assert last, f"round {r}: no result line\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
        rounds.append(json.loads(last[-1]))
    REPORT["first_call_race"] = {
        "fresh_processes": RACE_ROUNDS,
        "threads": THREADS,
        "streams": THREADS,
        "first_calls_checked": sum(x["results"] for x in rounds),
        "wrong_outputs": sum(len(x["wrong"]) for x in rounds),
        "thread_errors": sum(len(x["errors"]) for x in rounds),
    }
    _say(capsys, f"first-call race: {RACE_ROUNDS} fresh processes x {THREADS} threads, "
         f"{REPORT['first_call_race']['first_calls_checked']} first calls checked, "
         f"{REPORT['first_call_race']['wrong_outputs']} wrong")
    for r, x in enumerate(rounds):
        assert x["alive"] == 0, f"round {r}: {x['alive']} threads hung on the first call"
        assert not x["errors"], f"round {r}: {x['errors']}"
        assert not x["wrong"], f"round {r}: {x['wrong']}"
        assert x["results"] == THREADS, f"round {r}: {x['results']} of {THREADS} threads returned"
