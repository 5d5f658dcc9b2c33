"""Is the planner's choice the fastest built variant? Times the routed plan beside every compiled
variant of the token tile that holds M (per family, from kernels/variants.def) through
bench/decode.py's forced arms, and reports per shape and M the routed time, the best forced one
and their ratio (bench/NOTES.md session 36 found dect's feature tile and Llama-70B qkv's family
this way).

    python3 bench/routing_sweep.py --library L [--shapes ...] [--m 1,8,16,32,64] [--orders 2] --json F
    python3 bench/routing_sweep.py --report F [F ...]     # the report of earlier runs only

A ratio below --flag (0.97) is worth an A/B in both orders; where the best forced arm is the
routed kernel itself the difference is arm-order noise (+-4 % in one order)."""

from __future__ import annotations

import argparse
import gzip
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VARIANTS_DEF = ROOT / "kernels" / "variants.def"
DEFAULT_SHAPES = ",".join(f"{m}.{p}" for m in ("llama8b", "llama70b", "qwen1.5b") for p in ("qkv", "o", "gate_up", "down"))
FAMILIES = ("dect", "dec", "bulk", "bwg", "wg")


def variants(path: Path = VARIANTS_DEF) -> list[dict]:
    """kernels/variants.def's MATE_VARIANT rows: symbol, family, dtype, zeros, tm, tn."""
    rows = []
    for m in re.finditer(r"^MATE_VARIANT\(([^)]*)\)", path.read_text(), re.M):
        f = [x.strip() for x in m.group(1).split(",")]
        rows.append({"symbol": f[0], "family": f[1], "dtype": f[2], "zeros": f[3] == "1", "tm": int(f[4]), "tn": int(f[5])})
    if not rows:
        raise SystemExit(f"routing_sweep: no MATE_VARIANT rows in {path}")
    return rows


def candidates(rows: list[dict], m: int, dtype: str, zeros: bool) -> list[str]:
    """The variants to force at M = m: per family the smallest token tile that holds m (the bulk
    family also its 8-token tile at M = 1, which its whole plans take there; wg's 64-token tile
    at M = 17-64; bwg's 32-token tile at M = 33-64 too, in two m-tiles: src/plan/bwg.rs
    bwg_m33_64_tile)."""
    mine = [r for r in rows if r["dtype"] == dtype and r["zeros"] == zeros and r["family"] in FAMILIES]
    out = []
    for fam in FAMILIES:
        tiles = sorted({r["tm"] for r in mine if r["family"] == fam and r["tm"] >= m})
        if fam == "wg" and not 17 <= m <= 64:
            continue
        take = tiles[:2] if fam == "bulk" and tiles[:1] == [1] else tiles[:1]
        if fam == "bwg" and 33 <= m <= 64:
            take = [32] + take
        out += [r["symbol"] for r in mine if r["family"] == fam and r["tm"] in take]
    return out


def report(rows: list[dict], flag: float) -> list[dict]:
    """Per decode.py row: the routed arm against its best forced arm."""
    out = []
    for r in rows:
        mate = r.get("mate")
        forced = {k: v["median_us"] for k, v in r.items() if k.startswith("mate_") and isinstance(v, dict) and "median_us" in v}
        if not isinstance(mate, dict) or "median_us" not in mate or not forced:
            continue
        best = min(forced, key=forced.get)
        routed = mate.get("plan", ["kernel=?"])[0].split()[0].split("=", 1)[1]
        ratio = forced[best] / mate["median_us"]
        out.append({"shape": r["shape"], "M": r["M"], "routed": routed, "routed_us": mate["median_us"], "best": best,
                    "best_us": forced[best], "ratio": ratio, "same_kernel": best == routed, "flag": ratio < flag and best != routed})
    return out


def print_report(entries: list[dict]) -> None:
    for e in entries:
        mark = " <== A/B it" if e["flag"] else (" (the routed kernel: noise)" if e["same_kernel"] and e["ratio"] < 0.97 else "")
        print(f"{e['shape']:18s} M={e['M']:4d}  routed {e['routed_us']:8.2f} {e['routed']:42s} best {e['best_us']:8.2f} {e['best']:42s} {e['ratio']:.3f}{mark}")
    flagged = sum(e["flag"] for e in entries)
    print(f"{len(entries)} points, {flagged} where a different variant was faster than the --flag ratio")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--library")
    ap.add_argument("--shapes", default=DEFAULT_SHAPES)
    ap.add_argument("--m", default="1,8,16,32,64")
    ap.add_argument("--dtype", default="float16", choices=["float16", "bfloat16"])
    ap.add_argument("--zp", action="store_true")
    ap.add_argument("--group", type=int, default=128)
    ap.add_argument("--orders", default="1", choices=["1", "2"])
    ap.add_argument("--flag", type=float, default=0.97, help="report a different variant at most this ratio of the routed time")
    ap.add_argument("--json", help="the combined decode.py rows and the report")
    ap.add_argument("--report", nargs="+", metavar="F", help="only report these earlier JSONs (this script's or decode.py's; .json.gz read too)")
    args = ap.parse_args(argv)
    if args.report:
        rows = []
        for f in args.report:
            d = json.loads(gzip.decompress(Path(f).read_bytes()) if f.endswith(".gz") else Path(f).read_text())
            # decode.py's rows, or the decode.py runs a results file gathers (other runs skipped)
            rows += d["rows"] if "rows" in d else [r for run in d.get("runs", {}).values() if "rows" in run for r in run["rows"]]
        entries = report(rows, args.flag)
        if not entries:
            ap.error(f"--report: no decode.py rows with a routed and a forced arm in {', '.join(args.report)}")
        print_report(entries)
        return 0
    try:
        ms = [int(x) for x in args.m.split(",")]
    except ValueError:
        ap.error(f"--m: {args.m!r} must be a comma list of integers")
    dtype = {"float16": "f16", "bfloat16": "bf16"}[args.dtype]
    defs = variants()
    groups: dict[tuple, list[int]] = {}
    for m in ms:
        groups.setdefault(tuple(candidates(defs, m, dtype, args.zp)), []).append(m)
    runs, rows = {}, []
    with tempfile.TemporaryDirectory() as tmp:
        for i, (vs, group_ms) in enumerate(groups.items()):
            out = Path(tmp) / f"m{i}.json"
            cmd = [sys.executable, str(ROOT / "bench" / "decode.py"), "--arms", "mate", "--shapes", args.shapes,
                   "--m", ",".join(map(str, group_ms)), "--dtype", args.dtype, "--group", str(args.group),
                   "--orders", args.orders, "--variants", ",".join(vs), "--json", str(out)]
            cmd += ["--zp"] if args.zp else []
            cmd += ["--library", args.library] if args.library else []
            print(f"== M = {group_ms}: {len(vs)} forced variants", flush=True)
            subprocess.run(cmd, check=True)
            d = json.loads(out.read_text())
            runs[f"m{','.join(map(str, group_ms))}"] = d
            rows += d["rows"]
    entries = report(rows, args.flag)
    print_report(entries)
    if args.json:
        Path(args.json).write_text(json.dumps({"what": "routed plan against every forced variant of its token tile (bench/routing_sweep.py)",
                                               "argv": sys.argv[1:], "report": entries, "runs": runs}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
