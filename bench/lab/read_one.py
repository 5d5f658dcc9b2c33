"""The read arm's kernel on one call's bytes (after warm-up), for profilers beside
bench/profile_one.py: `ncu ... python3 bench/lab/read_one.py K N M`."""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "torch_ops"), str(ROOT / "tests" / "python"), str(ROOT / "bench")]
import torch  # noqa: E402

from random_frame import random_call  # noqa: E402
from read_arm import read, sink_for, words_of  # noqa: E402

K, N, M = map(int, sys.argv[1:4])
f = random_call(K, N, M)
words = torch.cat([words_of(f.qw), words_of(f.s)])
sink = sink_for(words.numel(), "cuda")
for _ in range(3):
    read(words, sink)
torch.cuda.synchronize()
