"""Device-time measurement as ../shared/DESIGN.md prescribes: a CUDA graph of back-to-back calls
over rotating copies of the weights (distinct data >= 10x the 60 MB L2, so every call reads from
HBM), warm-up first, several replays, median and spread of the per-call time."""

from __future__ import annotations

import os
import statistics
import subprocess
from pathlib import Path

import torch

L2_BYTES = 60 * 2**20


def copies_for(bytes_per_copy: int, factor: int = 10, cap: int = 512) -> int:
    """How many rotating copies keep the working set at least `factor` x L2."""
    return max(2, min(cap, -(-factor * L2_BYTES // max(1, bytes_per_copy))))


def stats(ts) -> dict:
    """Median and spread of a list of microsecond samples."""
    return {"median_us": statistics.median(ts), "min_us": min(ts), "max_us": max(ts)}


def capture(calls) -> "torch.cuda.CUDAGraph":
    """A graph running each zero-arg callable of `calls` once, after one eager warm-up pass on a
    side stream (module load, allocator), captured on that same stream as serving engines do (so
    the op's own workspace of a call without one exists before capture: src/device/workspace.rs)."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for c in calls:
            c()
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, stream=s):
        for c in calls:
            c()
    return g


# Least GPU time of warm-up replays before the timed ones. With two replays of a short graph the
# first arm of a shape, timed right after its copies were built on the host, read slow: the pure
# read of Llama-70B down at M = 1 32.6 us, gate_up 64 us, against 29.15 / 55.6 in
# ../shared/anchors; with this top-up 28.7 / 55.5 (bench/NOTES.md, session 6).
WARMUP_MS = 30.0


def replay_us(g, replays: int, warmup: int, before=None, warmup_ms: float = WARMUP_MS, clock=None) -> list:
    """Microseconds of each of `replays` replays of graph `g` between CUDA events, after `warmup`
    untimed ones, topped up to `warmup_ms` of GPU time (warmup = 0: none, for callers that interleave
    arms in rounds); `before` (optional) runs ahead of every replay, outside the timed span; `clock`
    (optional, a list) receives the SM clock (MHz, NVML) after each timed replay."""
    def run():
        if before is not None:
            before()
        g.replay()

    for _ in range(warmup):
        run()
    if warmup == 0:
        return timed(g, before, replays, clock)
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    run()
    b.record()
    b.synchronize()
    one_ms = max(a.elapsed_time(b), 1e-3)
    cap = 500 if warmup_ms <= WARMUP_MS else 100_000  # (a sustained warm-up of short graphs needs many)
    for _ in range(min(cap, int((warmup_ms - (warmup + 1) * one_ms) / one_ms) + 1)):
        run()
    torch.cuda.synchronize()
    return timed(g, before, replays, clock)


def timed(g, before, replays: int, clock=None) -> list:
    """Microseconds of each of `replays` replays of `g` between CUDA events (`before` outside);
    `clock` (optional list): the SM clock after each replay, where NVML answers."""
    read_clock = sm_clock_reader() if clock is not None else None
    ts = []
    for _ in range(replays):
        if before is not None:
            before()
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        g.replay()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b) * 1e3)
        if read_clock is not None:
            clock.append(read_clock())
    return ts


_CLOCK = []


def sm_clock_reader():
    """A zero-arg callable giving the current device's SM clock in MHz (NVML), or None where
    pynvml is missing or NVML does not answer (the timings stand without it)."""
    if not _CLOCK:
        try:
            import pynvml

            pynvml.nvmlInit()
            h = pynvml.nvmlDeviceGetHandleByIndex(torch.cuda.current_device())
            pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM)
            _CLOCK.append(lambda: pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM))
        except Exception:
            _CLOCK.append(None)
    return _CLOCK[0]


def graph_time_us(calls, replays: int = 7, warmup: int = 2, warmup_ms: float = WARMUP_MS) -> dict:
    """`calls` is a list of zero-arg callables, one per rotating copy; the graph runs each once.
    Returns per-call microseconds: median, min, max over `replays` replays, after `warmup_ms` of
    warm-up replays (a long one, ~1 s, brings a prefill arm to its own power-capped clock:
    bench/NOTES.md session 23), and the median SM clock over the timed replays where NVML answers."""
    clock = []
    per_call = [t / len(calls) for t in replay_us(capture(calls), replays, warmup, warmup_ms=warmup_ms, clock=clock)]
    out = {**stats(per_call), "calls": len(calls)}
    if clock:
        out["sm_clock_mhz"] = statistics.median(clock)
    return out


def provenance(root, library) -> dict:
    """What a JSON's numbers came from: the checkout's commit (MATE_COMMIT overrides git HEAD) and
    the library that ran (path, bytes, mtime, and the `commit` note file beside it, the lab
    convention target/<name>/commit). On the GPU machine the copied checkout's git HEAD can be
    stale (it read an older commit all through session 17), so the library fields say what ran."""
    commit = os.environ.get("MATE_COMMIT") or subprocess.run(
        ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    out = dict(commit=commit)
    lib = library or os.environ.get("MATE_LIBRARY")
    if lib and Path(lib).is_file():
        st = Path(lib).stat()
        note = Path(lib).parent / "commit"
        out["library"] = dict(path=str(lib), bytes=st.st_size, mtime=int(st.st_mtime),
                              note=note.read_text().strip() if note.is_file() else None)
    return out
