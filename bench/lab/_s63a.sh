set -u
# Prepared in session 63 for the next GPU call (L = main's library: target/${LIB:-s61sk}, md5 248996e3;
# build main if target/ is gone). Session 63's H100 run (results/2026-12-07-s63-between-h100.json.gz)
# found issue 5's misses between the standing points on the Llama-8B qkv / o / down layers
# (0.81x 8B o M = 640, 0.86x at 8B o 192 / 576, 8B qkv 272 / 800, 8B down 640) while the standing
# points passed. Part 1 re-times those points on the card that comes (H200 wanted). Part 2 puts the
# routed plan beside the nearest other token tiles at each worst point: a forced arm >= 3 % faster is
# a planner lead (forced arms in one process carry ~4 % noise: confirm by a library A/B).
# Everything under $OUT goes back as one tarball. ROUTED=0 / FORCED=0 skip a part. AB=1 adds a
# library A/B of the draft rule (carry target/round63 too).
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/c; L=$PWD/target/${LIB:-s61sk}/libmate.so; t0=$(date +%s)
source bench/lab/tiles.sh  # forced_arms: the forced arms
if [ "${ROUTED:-1}" = 1 ]; then
  timeout 240 python3 bench/decode.py --library $L --arms mate,fp16 --shapes llama8b.qkv,llama8b.o,llama8b.down \
    --m 192,272,384,576,640,768,800,1056 --orders 2 --sustain-ms 1000 --json $OUT/c/routed.json > $OUT/c/routed.log 2>&1
  echo "routed rc $? ($(( $(date +%s) - t0 )) s)"; grep -E "fp16/mate" $OUT/c/routed.log | cut -c1-140
fi
if [ "${FORCED:-1}" = 1 ]; then
  # shape M tiles (the routed plans, from session 63's CPU dump, are in the comment below the list)
  forced_arms $L $OUT/c $t0 <<'LIST'
llama8b.qkv 272 272@2 288@2 272 160
llama8b.o 640 160w 176w 320 256
llama8b.o 768 192w 208w 272
llama8b.o 576 144w 160w 288 304
llama8b.down 640 160w 176w 224 256
llama8b.o 192 192 208 192@2 160
llama8b.qkv 384 208 256 128
llama8b.qkv 800 272 208w 224
LIST
fi
# Routed there (132 SMs, CPU dump with plan::force_variant / force_split): 8B qkv 272 2 x 144
# stream-K (grid 132), m272@2 = 48 tiles x 2 unpaired (grid 96, as M = 256's pair); 8B o 576 / 640
# / 768 3 x 192 / 224 / 256 stream-K over 96 tiles, the "w" arms 4 m-tiles x 32 = 128 whole tiles
# (no fix-up: 8B o M = 800 on 4 x 208 whole ran 47.75 us, M = 768 on 3 x 256 stream-K 48.46);
# 8B down 640 2 x 320 split in two, unpaired (grid 128); 8B o 192 2 x 128 paired (m192 split 4, grid 128;
# m192@2 grid 64); 8B qkv 384 2 x 192 stream-K; 8B qkv 800 4 x 208 stream-K.
if [ "${AB:-0}" = 1 ]; then
  # the draft rule (branch round-tile-draft: bwg_round_tile; target/round63, md5 c860e137)
  # against main's library, A B B A: it moves only 8B o / down at M = 513-768 (4 whole m-tiles)
  A=${LIB:-s61sk} B=round63 SHAPES=llama8b.o,llama8b.down M=576,640,704,768 TAG=round PDLS=1 \
    EXTRA="--arms mate --sustain-ms 1000" bash bench/lab/ab.sh
  python3 bench/lab/ab_report.py ${LIB:-s61sk} round63 "$OUT/r/round-pdl1-*.json" 2>&1 | tail -12
  mv $OUT/r $OUT/c/ab
fi
cd $OUT && tar czf c.tgz c && rm -rf c
