"""bench/results stays small enough to travel with every device call (its carry limit of 64 MiB
holds the working tree and the built libraries): results over 64 KB are stored gzipped, and what
is stored gzipped is still JSON. bench/results/README.md states the rule."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

RESULTS = Path(__file__).resolve().parents[2] / "bench" / "results"
PLAIN_MAX = 64 * 1024


def test_large_results_are_gzipped():
    big = sorted(f"{p.name} ({p.stat().st_size} bytes)" for p in RESULTS.glob("*.json") if p.stat().st_size > PLAIN_MAX)
    assert not big, (f"bench/results: {', '.join(big)} over {PLAIN_MAX} bytes; store each as X.json.gz "
                     f"(gzip -9 -n X.json), as bench/results/README.md says")


def test_gzipped_results_are_json():
    for p in sorted(RESULTS.glob("*.json.gz")):
        try:
            json.loads(gzip.decompress(p.read_bytes()))
        except (OSError, ValueError) as e:
            raise AssertionError(f"bench/results/{p.name}: not gzipped JSON ({e})") from e
