set -u
# Prepared in session 42, not run: the routing sweep on _cmd5.sh's 16 serving shapes at the token
# counts session 42 did not cover (M = 1, 8, 24: one order, MATE_PDL = 0 and 1) and in bf16 with
# zero points at M = 16 / 48 (MATE_PDL = 0). ~4-5 min. Library: main's (target/main). Then force
# what flags in both orders (decode.py --variants ... --orders 2) before any A/B (bench/lab/ab.sh).
mkdir -p $OUT/r
L=$PWD/target/main/libmate.so
S=4096x3072,2048x4096,4096x14336,7168x4096,8192x2560,2048x8192,8192x14336,7168x8192,3584x4608,3584x3584,3584x37888,18944x3584,5120x7168,5120x5120,5120x55296,27648x5120
t0=$(date +%s)
for pdl in 0 1; do
  MATE_PDL=$pdl timeout 260 python3 bench/routing_sweep.py --library $L --shapes $S --m 1,8,24 \
    --json $OUT/r/sweep-pdl$pdl.json > $OUT/r/sweep-pdl$pdl.log 2>&1; echo "sweep pdl$pdl rc $? ($(( $(date +%s) - t0 )) s)"
  grep -E "<|points" $OUT/r/sweep-pdl$pdl.log | cut -c1-160
done
MATE_PDL=0 timeout 200 python3 bench/routing_sweep.py --library $L --shapes $S --m 16,48 --dtype bfloat16 --zp \
  --json $OUT/r/sweep-bf16zp.json > $OUT/r/sweep-bf16zp.log 2>&1; echo "sweep bf16 zp rc $? ($(( $(date +%s) - t0 )) s)"
grep -E "<|points" $OUT/r/sweep-bf16zp.log | cut -c1-160
# a31f5ab's two rules were A/B'd in f16 group 128 only: the routed plans (dect at M = 9-16, the
# 64-token sliced split at 33-64) against the old ones forced, in bf16 with zero points and group 32
for pdl in 0 1; do
  for cfg in "bf16zp:--dtype bfloat16 --zp:bf16_zp" "g32:--group 32:f16_sym"; do
    tag=${cfg%%:*}; rest=${cfg#*:}; args=${rest%%:*}; v=${rest#*:}
    pre=$([ $tag = g32 ] && echo _pre || true)
    MATE_PDL=$pdl timeout 80 python3 bench/decode.py --library $L --arms mate,read --orders 2 $args \
      --shapes 2048x4096,4096x3072,3584x3584,llama8b.o --m 9,16 --variants mate_bwg_${v}_m16_n128_split$pre \
      --json $OUT/r/cfg-$tag-m16-pdl$pdl.json 2>&1 | grep -E "^\s+\S+ M=" | cut -c1-150
    MATE_PDL=$pdl timeout 80 python3 bench/decode.py --library $L --arms mate,read --orders 2 $args \
      --shapes 4096x3072,4096x2048,8192x1536 --m 33,48 --variants mate_bwg_${v}_m64_n128_split_pre \
      --json $OUT/r/cfg-$tag-m48-pdl$pdl.json 2>&1 | grep -E "^\s+\S+ M=" | cut -c1-150
  done
done
cd $OUT && tar czf r.tgz r && rm -rf r
