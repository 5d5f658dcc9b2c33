set -u
# Session 65's first GPU call (L = main's library, target/${LIB:-main65}; session 64's branch
# libraries were lost with that checkout). Part 1: issue 5 between its standing points on the card
# that comes (session 63's table is the H100's): bench/lab/_s62a.sh's between points (8 Llama
# layers at M = 192 / 272 / 640 / 800, then 400 / 1056 / 1536 / 2560). Part 2: _s63a.sh's forced
# arms at the worst of those points (H100): the routed plan beside the nearest other token tiles,
# including the 4-m-tile whole plans ("w", the round-tile rule's) and the 272-token tile's even
# split of two (unpaired on main). A forced arm >= 3 % faster than routed is a planner lead.
# BETWEEN=0 / FORCED=0 skip a part. ~470 s. Not run in session 65 (no device lent); build the
# libraries with bench/lab/build_s65.sh.
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/d; L=$PWD/target/${LIB:-main65}/libmate.so; t0=$(date +%s)
if [ "${BETWEEN:-1}" = 1 ]; then
  (LIB=${LIB:-main65} SWEEP=0 bash bench/lab/_s62a.sh) && mv $OUT/b.tgz $OUT/d/
fi
source bench/lab/tiles.sh  # forced_arms: the forced arms
if [ "${FORCED:-1}" = 1 ]; then
  forced_arms $L $OUT/d $t0 <<'LIST'
llama8b.qkv 272 272@2 288@2 160
llama8b.o 640 160w 176w 320
llama8b.o 768 192w 208w
llama8b.o 576 144w 160w
llama8b.down 640 160w 176w
LIST
fi
cd $OUT && tar czf d.tgz d && rm -rf d
