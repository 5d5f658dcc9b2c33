"""Which plan wins in which launch context: two decode.py or routing_sweep.py JSONs of the same
shapes and arms, one run with MATE_PDL=1 (all of mate's calls back to back: a programmatic launch
overlaps its predecessor) and one with MATE_PDL=0 (no overlap, as behind a torch kernel in a model).
Per shape and M: the fastest arm in each context, each as a ratio of the routed `mate` arm, and
whether they differ (the candidates for a plan keyed by the context, bench/lab/s43_launch_context.patch).
Usage: python3 bench/lab/context_diff.py PDL1.json PDL0.json [--min-gain 0.97]"""
import argparse
import json


def rows(path):
    """{(shape, M): {arm: median us}} from a decode.py JSON or a routing_sweep.py JSON (its runs)."""
    d = json.load(open(path))
    runs = d["runs"].values() if "runs" in d else [d]
    out = {}
    for run in runs:
        for r in run["rows"]:
            arms = {k: v["median_us"] for k, v in r.items() if k.startswith("mate") and isinstance(v, dict) and "median_us" in v}
            if "mate" in arms:
                out[(r["shape"], r["M"])] = arms
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("overlap", help="the MATE_PDL=1 JSON")
    ap.add_argument("plain", help="the MATE_PDL=0 JSON")
    ap.add_argument("--min-gain", type=float, default=0.97, help="report a best arm at most this ratio of the routed one")
    ap.add_argument("--differ", type=float, default=1.03,
                    help="flag where each context's winner costs at least this ratio in the other context")
    a = ap.parse_args(argv)
    ov, pl = rows(a.overlap), rows(a.plain)
    short = lambda arm: arm.replace("mate_", "").replace("_f16_sym", "").replace("_bf16_zp", "") or "routed"
    for key in sorted(set(ov) & set(pl), key=lambda k: (k[0], k[1])):
        o, q = ov[key], pl[key]
        bo, bp = min(o, key=o.get), min(q, key=q.get)
        # what each context's winner costs in the other context, against that context's winner
        cross_o, cross_p = o.get(bp, float("nan")) / o[bo], q.get(bo, float("nan")) / q[bp]
        differ = bo != bp and cross_o >= a.differ and cross_p >= a.differ
        if differ or min(o[bo] / o["mate"], q[bp] / q["mate"]) <= a.min_gain:
            print(f"{key[0]:>14s} M={key[1]:<4d} overlap {short(bo):24s} {o[bo] / o['mate']:5.3f}  plain {short(bp):24s} "
                  f"{q[bp] / q['mate']:5.3f}  (each in the other context {cross_o:5.3f} / {cross_p:5.3f}){'  <== differs' if differ else ''}")


if __name__ == "__main__":
    main()
