set -u
# Prepared in session 64 (no device that session) for the next GPU call, with branch pair-wide
# checked out (its tests/python/test_split_paired.py has the wide cases) and carry
# ["target/s61sk", "target/pairwide"]. target/pairwide (md5 19be5950) is built from branch
# pair-wide's library code: bwg's paired even split (2-CTA clusters, the partner's half through distributed
# shared memory) on the wide 272-320-token tiles, whose two-slot rings have a free slot where both
# parts end on the same one (every Llama K). Main's library: target/s61sk (md5 248996e3).
# Part 1 (TEST=0 skips): the paired test on pairwide: the pair against the ticket bit for bit,
# float64 on NaN-poisoned outputs, reruns bitwise, 272 / 320 tokens included.
# Part 2 (FORCED=0 skips), pairwide, one process a shape: each point's routed plan beside the
# wide tile's even split of two paired and unpaired ("/nopairs"), and the whole 4-m-tile plan.
# Predictions (bench/NOTES.md session 64; pairs 0.94-0.975x of the ticket in session 24): 8B qkv
# M = 272, m272@2 paired 0.85-0.91x routed (2 x 144 stream-K, 34.1 us on the H100); 8B o M = 640,
# m320@2 paired ~1.0x routed (3 x 224 stream-K 43.6 us; m320@2 unpaired ran 46.3), so no lead
# there; 8B down 640, routed (now paired) 0.94-0.975x its /nopairs.
# Part 3 (AB=0 skips): library A/B, s61sk against pairwide (A B B A, PDL on): the plans the branch
# moves to pairs (70B o / down at M = 300, 8B down at M = 640; the other three points are
# controls, the same plan in both), predicted 0.94-0.98x. Parts 1-3 take ~350 s.
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/c; L=$PWD/target/pairwide/libmate.so; t0=$(date +%s)
if [ "${TEST:-1}" = 1 ]; then
  MATE_LIBRARY=$L timeout 200 python3 -m pytest -q -rf -p no:cacheprovider tests/python/test_split_paired.py > $OUT/c/test.log 2>&1
  echo "paired test rc $? ($(( $(date +%s) - t0 )) s)"; tail -3 $OUT/c/test.log
fi
v() { local s="" t; for t in "$@"; do case $t in routed) s="$s," ;; nopairs) s="$s,/nopairs" ;;
  *w) s="$s,mate_bwg_f16_sym_m${t%w}_n128_whole_pre" ;;
  *@*/n) t=${t%/n}; s="$s,mate_bwg_f16_sym_m${t%%@*}_n128_split_pre@${t#*@}/nopairs" ;;
  *@*) s="$s,mate_bwg_f16_sym_m${t%%@*}_n128_split_pre@${t#*@}" ;; esac; done; echo "${s#,}"; }
if [ "${FORCED:-1}" = 1 ]; then
  while read -r shape m tiles; do
    [ -z "$shape" ] && continue
    timeout 120 python3 bench/decode.py --library $L --arms mate,fp16 --variants "$(v $tiles)" --shapes $shape \
      --m $m --orders 2 --sustain-ms 1000 --json $OUT/c/f-$shape-$m.json > $OUT/c/f-$shape-$m.log 2>&1
    echo "forced $shape $m rc $? ($(( $(date +%s) - t0 )) s)"; grep -E "M=" $OUT/c/f-$shape-$m.log | head -1 | cut -c1-420
  done <<'LIST'
llama8b.qkv 272 272@2 272@2/n 288@2
llama8b.o 640 320@2 320@2/n 160w
llama8b.down 640 nopairs 160w
llama70b.o 300 nopairs
LIST
fi
if [ "${AB:-1}" = 1 ]; then
  A=s61sk B=pairwide SHAPES=llama70b.o,llama70b.down,llama8b.down M=300,640 TAG=pw PDLS=1 \
    EXTRA="--arms mate --sustain-ms 1000" bash bench/lab/ab.sh
  python3 bench/lab/ab_report.py s61sk pairwide "$OUT/r/pw-pdl1-*.json" 2>&1 | tail -14
  mv $OUT/r $OUT/c/ab
fi
cd $OUT && tar czf c.tgz c && rm -rf c
