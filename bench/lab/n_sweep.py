"""Lab: time mate and the pure read over a sweep of N at fixed (K, M), to see the staircase of
whole tiles over the SMs (wave quantization) and what a second resident CTA on an SM costs.

    python3 bench/lab/n_sweep.py --library target/X/libmate.so --k 1536 --m 16 \
        --tiles 100,132,140,160 [--tn 128] [--variants SYM,...] --json OUT.json

Each point is bench/decode.py's method (graph over rotating copies, float64 check first, the
plan of the timed call in the row) on a synthetic shape K x (tn * tiles).
"""

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--library", required=True)
    ap.add_argument("--k", type=int, required=True)
    ap.add_argument("--m", required=True)
    ap.add_argument("--tiles", required=True, help="comma list: N = tn x tiles")
    ap.add_argument("--tn", type=int, default=128)
    ap.add_argument("--arms", default="read,mate")
    ap.add_argument("--variants", default="", help="passed to bench/decode.py: forced variants as extra arms")
    ap.add_argument("--json", required=True)
    ap.add_argument("--group", default="128")
    ap.add_argument("--dtype", default="float16")
    ap.add_argument("--zp", action="store_true")
    a = ap.parse_args()
    from bench import decode

    names = []
    for t in map(int, a.tiles.split(",")):
        name = f"k{a.k}.n{a.tn * t}"
        decode.SHAPES[name] = (a.k, a.tn * t)
        names.append(name)
    return decode.main(["--library", a.library, "--arms", a.arms, "--shapes", ",".join(names), "--m", a.m,
                        "--variants", a.variants, "--group", a.group, "--dtype", a.dtype, *(["--zp"] if a.zp else []),
                        "--json", a.json])


if __name__ == "__main__":
    sys.exit(main())
