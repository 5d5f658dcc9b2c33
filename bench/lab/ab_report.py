"""Reads bench/lab/ab.sh's runs back: per shape and M, library B's mean time over library A's
(both runs each), A's and B's plans, and the read. Usage:
  python3 bench/lab/ab_report.py A B 'DIR/ab-pdl1-*.json' ['DIR/ab-pdl0-*.json' ...]"""
import glob
import json
import statistics
import sys


def load(pattern):
    """{(shape, M): {library: [(mate us, plan kernel, read us)]}} from the runs matching pattern
    (file names TAG-pdlP-LIB-I.json)."""
    out = {}
    for f in sorted(glob.glob(pattern)):
        lib = f.rsplit("-", 2)[-2]
        for r in json.load(open(f))["rows"]:
            mate = r.get("mate") or {}
            if "median_us" not in mate:
                continue
            kernel = mate.get("plan", ["kernel=?"])[0].split()[0].split("=", 1)[-1]
            read = (r.get("read") or {}).get("median_us")
            out.setdefault((r["shape"], r["M"]), {}).setdefault(lib, []).append((mate["median_us"], kernel, read))
    return out


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    a, b, patterns = argv[0], argv[1], argv[2:]
    for pattern in patterns:
        print("==", pattern)
        for (shape, m), libs in load(pattern).items():
            if a not in libs or b not in libs:
                print(f"{shape:18s} M={m:4d} missing {a if a not in libs else b}")
                continue
            ta, tb = [x[0] for x in libs[a]], [x[0] for x in libs[b]]
            ka, kb = libs[a][0][1].removeprefix("mate_"), libs[b][0][1].removeprefix("mate_")
            read = libs[a][0][2]
            print(f"{shape:18s} M={m:4d} {a} {'/'.join(f'{t:.2f}' for t in ta)} {b} {'/'.join(f'{t:.2f}' for t in tb)} "
                  f"ratio {statistics.mean(tb) / statistics.mean(ta):.3f} read {read if read is None else f'{read:.2f}'} "
                  f"{ka}{'' if kb == ka else ' -> ' + kb}")


if __name__ == "__main__":
    main(sys.argv[1:])
