set -u
# Prepared in session 62 for the next H200 call (L = main's library: target/${LIB:-s61sk}, c8a26bd,
# md5 248996e3, the library code of main at 6a86a75; build main if target/ is gone).
# 1. Issue 5 between its standing points, at the README's --sustain-ms 1000 (never timed so: the
#    misses there, 0.85-0.99x at M = 513-900, 0.87x for Llama-8B o at 640 and 0.91x for 8B qkv at
#    272, are sessions 28-32's, at shorter sustains and before sessions 58-61's changes).
# 2. Issue 4 at M = 33-64 on the H200: the routed plan beside every built variant of the token
#    tile that holds M (and the 32-token tile in two m-tiles). Session 62's H200 standing: the
#    256-feature tiles 2.09-2.37x max(read, FLOP), the 128-feature split plans on the 4096-wide
#    layers 2.7-3.1x (8B qkv / o / down at 64); the routing was tuned on H100s (sessions 41-58),
#    whose read is ~1.4x slower. A forced arm >= 3 % faster than the routed one is a lead.
# Everything under $OUT goes back as one tarball. BETWEEN=0 / SWEEP=0 skip a part; FORCED=1 adds one;
# PARTS=a times only the first four between points.
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/b; L=$PWD/target/${LIB:-s61sk}/libmate.so; t0=$(date +%s)
LL=llama8b.qkv,llama8b.o,llama8b.gate_up,llama8b.down,llama70b.qkv,llama70b.o,llama70b.gate_up,llama70b.down
if [ "${BETWEEN:-1}" = 1 ]; then  # two processes: a timeout loses one half, not both
  for part in ${PARTS:-a b}; do
    case $part in a) set -- a 192,272,640,800 ;; b) set -- b 400,1056,1536,2560 ;; esac
    timeout 270 python3 bench/decode.py --library $L --arms mate,fp16 --shapes $LL --m $2 --orders 2 \
      --sustain-ms 1000 --json $OUT/b/between-$1.json > $OUT/b/between-$1.log 2>&1
    echo "between $1 rc $? ($(( $(date +%s) - t0 )) s)"; grep -E "fp16/mate" $OUT/b/between-$1.log | cut -c1-140
  done
fi
# The routed plans there (132 SMs, f16 g128, session 62's CPU dump): M = 272 / 288 8B qkv and o on
# the 144-token tile (two m-tiles), the rest on 272 / 288; M = 640 8B qkv / o on the 224-token tile
# (3 m-tiles, stream-K), the rest on 320; M = 800 everything on the 208-token tile (4 m-tiles, whole
# on all but 8B / 70B qkv). FORCED=1 adds the nearest other tiles on the 8B qkv / o at 640 / 800
# (forced arms in one process carry ~4 % noise: a lead needs a library A/B).
if [ "${FORCED:-0}" = 1 ]; then
  V=mate_bwg_f16_sym_m256_n128_split_pre,mate_bwg_f16_sym_m272_n128_split_pre,mate_bwg_f16_sym_m320_n128_split_pre
  timeout 200 python3 bench/decode.py --library $L --arms mate,fp16 --variants $V --shapes llama8b.qkv,llama8b.o \
    --m 640,800 --orders 2 --sustain-ms 1000 --json $OUT/b/forced.json > $OUT/b/forced.log 2>&1
  echo "forced rc $? ($(( $(date +%s) - t0 )) s)"; grep -E "M=" $OUT/b/forced.log | cut -c1-220 | head -20
fi
if [ "${SWEEP:-1}" = 1 ]; then
  for g in llama8b llama70b; do  # one JSON per model: a timeout loses one half, not both
    timeout 200 python3 bench/routing_sweep.py --library $L --shapes $g.qkv,$g.o,$g.gate_up,$g.down --m 33,48,64 \
      --json $OUT/b/sweep-$g.json > $OUT/b/sweep-$g.log 2>&1
    echo "sweep $g rc $? ($(( $(date +%s) - t0 )) s)"; tail -16 $OUT/b/sweep-$g.log | cut -c1-170
  done
fi
cd $OUT && tar czf b.tgz b && rm -rf b
