set -u
# Replaces session 64's _s64a.sh (in git history; not run: no device lent in 64 or 65): session 64's branches and
# libraries were lost with its checkout; session 65 rewrote them from its notes, as patches on
# main. Build the libraries with bench/lab/build_s65.sh, run from main with carry
# ["target/main65", "target/pairwide", "target/pairrule"] (the test part applies
# s65_pair_wide.patch to the device's copy for its wide test cases). Libraries:
#   main65   main's library code;
#   pairwide bench/lab/s65_pair_wide.patch: pair-wide: bwg's paired even split (2-CTA clusters, the partner's
#            half through distributed shared memory) also on the wide 272-320-token tiles, whose
#            two-slot rings have a free slot where both parts end on the same one (every Llama K);
#   pairrule + s65_pair_wide_rule.patch: a draft routing rule: the wide pairs'
#            fix-up priced as the 256-token tile's (5 stages) and served with shallower CTAs where
#            they fill 70 % of the SMs (Llama-8B qkv M = 257-320, Llama-8B o M = 513-640).
# Part 1 (TEST=0 skips): the paired test on pairrule: the pair against the ticket bit for bit,
# float64 on NaN-poisoned outputs, reruns bitwise, 272 / 320 tokens included.
# Part 2 (FORCED=0 skips), pairwide (main's routing, wide splits paired), one process a shape:
# each point's routed plan beside the wide tile's even split of two paired and unpaired
# ("/nopairs"), and the whole 4-m-tile plan of branch round-tile-draft ("160w").
# Predictions (bench/NOTES.md session 65: the wide tiles' L2 sum keeps 1-4 loads in flight, the
# pair reads nothing back): 8B qkv M = 272, m272@2 paired 0.85-0.95x routed (2 x 144 stream-K,
# 34.1 us on the H100); 8B o M = 640, m320@2 paired ~0.83x routed (3 x 224 stream-K 43.6 us;
# m320@2 unpaired ran 46.3) and ahead of 160w (~0.88x); 8B down 640, routed (now paired) ~0.83x
# its /nopairs.
# Part 3 (AB=0 skips): library A/B, main65 against pairrule (A B B A, PDL on) at M = 300 / 640 on
# five layers. Moved: 70B o / down 300 and 8B down 640 (pairs, predicted 0.83-0.86x), 8B qkv 300
# (rule, predicted 0.85-0.95x) and 8B o 640 (rule, ~0.83x); the other five points are controls
# (the same plan in both). Parts 1-3 take ~400 s.
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/c; L=$PWD/target/pairwide/libmate.so; t0=$(date +%s)
if [ "${TEST:-1}" = 1 ]; then
  # the wide cases of tests/python/test_split_paired.py (the library is carried, not built here)
  grep -q "pairable = " tests/python/test_split_paired.py || patch -p1 -s -i bench/lab/s65_pair_wide.patch || git apply bench/lab/s65_pair_wide.patch
  MATE_LIBRARY=$PWD/target/pairrule/libmate.so timeout 200 python3 -m pytest -q -rf -p no:cacheprovider tests/python/test_split_paired.py > $OUT/c/test.log 2>&1
  echo "paired test rc $? ($(( $(date +%s) - t0 )) s)"; tail -3 $OUT/c/test.log
fi
source bench/lab/tiles.sh  # forced_arms: the forced arms
if [ "${FORCED:-1}" = 1 ]; then
  forced_arms $L $OUT/c $t0 <<'LIST'
llama8b.qkv 272 272@2 272@2/n 288@2
llama8b.o 640 320@2 320@2/n 160w
llama8b.down 640 nopairs 160w
LIST
fi
if [ "${AB:-1}" = 1 ]; then
  A=main65 B=pairrule SHAPES=llama70b.o,llama70b.down,llama8b.down,llama8b.qkv,llama8b.o M=300,640 TAG=pw PDLS=1 \
    EXTRA="--arms mate --sustain-ms 1000" bash bench/lab/ab.sh
  python3 bench/lab/ab_report.py main65 pairrule "$OUT/r/pw-pdl1-*.json" 2>&1 | tail -16
  mv $OUT/r $OUT/c/ab
fi
cd $OUT && tar czf c.tgz c && rm -rf c
