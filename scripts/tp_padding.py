"""Padding overhead of row-parallel act-order ("K not full") shard frames (src/frame/shard.rs):
rows the regrouping adds over the rank's rows, and the bytes a GEMM streams per output column
(q + scales (+ zeros)) over those of the same rows without padding at the layer's group size.
Random desc_act g_idx (a shuffled k // G, as GPTQ's Hessian order scatters groups over K); the
frames come from the real builder (mate.shard.from_gptq_tp), every rank of each split.

    python scripts/tp_padding.py [--group 128] [--seeds 3] [--json FILE]
"""

import argparse
import json
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "torch_ops"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "python"))

import mate  # noqa: E402
from checkpoints import random_gptq  # noqa: E402


def stream_bytes(rows, group, n, zeros):
    return rows * n / 2 + rows / group * n * (2 + (0.5 if zeros else 0))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--group", type=int, default=128)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--json")
    a = ap.parse_args()
    N = 64
    results = []
    for K in (4096, 14336, 28672):
        for tp in (2, 4, 8):
            added = rows = 0
            b_frame = b_plain = 0.0
            subs = set()
            for seed in range(a.seeds):
                ck = random_gptq(K, N, a.group, False, torch.float16, "cpu", desc_act=True,
                                 gen=torch.Generator().manual_seed(seed))
                for r in range(tp):
                    fr = mate.shard.from_gptq_tp(ck.qweight, ck.scales, ck.qzeros, ck.g_idx, group_size=a.group, sym=False,
                                                 desc_act=True, checkpoint_format="gptq_v2", style="row", rank=r, world=tp)
                    k_frame, k_s = fr.meta[1], fr.in_features
                    added += k_frame - k_s
                    rows += k_s
                    subs.add(fr.group_size)
                    b_frame += stream_bytes(k_frame, fr.group_size, N, True)
                    b_plain += stream_bytes(k_s, a.group, N, True)
            row = dict(K=K, tp=tp, group=a.group, rows_added_over_rows=added / rows,
                       bytes_over_unpadded=b_frame / b_plain - 1, frame_group=sorted(subs))
            results.append(row)
            print(f"K={K:6d} tp={tp}: rows added / rows = {added / rows:6.1%}   "
                  f"streamed bytes +{b_frame / b_plain - 1:6.1%}   frame group {sorted(subs)}")
    if a.json:
        Path(a.json).write_text(json.dumps(dict(method="mate.shard.from_gptq_tp, random desc_act g_idx, all ranks",
                                                seeds=a.seeds, results=results), indent=1))


if __name__ == "__main__":
    main()
