"""Lab: the outputs of a fixed set of split plans (routed and forced bwg split tiles at 16-64
tokens and 128-256, fresh random data from fixed seeds), saved so two libraries' results can be compared bit
for bit (bench/NOTES.md session 21: the sliced sum against the last arriver's).

    python3 bench/lab/split_bits.py --library A.so --out a.pt
    python3 bench/lab/split_bits.py --library B.so --out b.pt --against a.pt
"""

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "torch_ops"), str(ROOT / "tests" / "python")]

CASES = [  # (name, K, N, M, group, sym, dtype, forced variant or None, num_sms)
    ("qwen_down", 8960, 1536, 16, 128, True, "float16", None, 132),
    ("qwen_down", 8960, 1536, 32, 128, True, "float16", None, 132),
    ("qwen_down", 8960, 1536, 64, 128, True, "float16", None, 132),
    ("qwen_down", 8960, 1536, 13, 64, False, "bfloat16", None, 132),
    ("llama8b_o", 4096, 4096, 16, 128, True, "float16", None, 132),
    ("llama8b_o", 4096, 4096, 30, 128, False, "bfloat16", None, 132),
    ("llama8b_down", 14336, 4096, 64, 128, True, "float16", None, 132),
    ("llama8b_qkv", 4096, 6144, 32, 32, True, "float16", None, 132),
    ("llama70b_o", 8192, 8192, 16, 128, True, "float16", None, 100),
    ("odd", 4224, 2048, 40, 128, True, "float16", "mate_bwg_f16_sym_m64_n128_split_pre", 132),
    ("odd", 4224, 2048, 32, 128, False, "float16", "mate_bwg_f16_zp_m32_n128_ring", 132),
    ("odd", 4224, 2048, 9, 128, True, "bfloat16", "mate_bwg_bf16_sym_m16_n128_split", 33),
    # the 128/256-token tiles' sliced split (S = 4 / 3) and a ticket (S = 2)
    ("llama8b_o", 4096, 4096, 256, 128, True, "float16", None, 132),
    ("llama8b_o", 4096, 4096, 128, 128, True, "float16", None, 132),
    ("llama8b_down", 14336, 4096, 256, 128, True, "float16", None, 132),
    ("llama8b_o", 4096, 4096, 200, 128, False, "bfloat16", None, 100),
    ("llama70b_o", 8192, 8192, 256, 128, True, "float16", None, 132),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--library", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--against")
    a = ap.parse_args()
    os.environ["MATE_LIBRARY"] = a.library
    import torch

    import mate  # noqa: F401
    from checkpoints import frame_from_gptq_v2, random_gptq, run_out

    outs = {}
    for i, (name, K, N, M, g, sym, dt, variant, sms) in enumerate(CASES):
        dtype = getattr(torch, dt)
        torch.manual_seed(1000 + i)
        ck = random_gptq(K, N, g, sym, dtype, "cuda")
        fr = frame_from_gptq_v2(ck)
        x = torch.randn(M, K, device="cuda").to(dtype)
        torch.ops.mate._force_variant(variant)
        torch.ops.mate._launch_log(True)
        y = run_out(x, fr, num_sms=sms)
        torch.cuda.synchronize()
        log = torch.ops.mate._launch_log(False)
        torch.ops.mate._force_variant(None)
        outs[f"{i}:{name}:M{M}"] = (y.cpu(), log[0])
    torch.save(outs, a.out)
    if a.against:
        ref = torch.load(a.against)
        bad = 0
        for k, (y, log) in outs.items():
            same = torch.equal(y, ref[k][0])
            bad += not same
            print(f"{k:28s} {'bit-identical' if same else 'DIFFERENT'}  {log.split()[0]} {log.split()[1]} {log.split()[4]}")
        print(f"{len(outs) - bad} of {len(outs)} bit-identical")


if __name__ == "__main__":
    main()
