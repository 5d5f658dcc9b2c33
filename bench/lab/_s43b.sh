set -u
# session 43, device call 2 (main's library, target/main = 4631fdb): call 1's sweep flags at M = 1 / 8
# (serving shapes outside the benchmark) forced in both arm orders, MATE_PDL 1 and 0, with the
# benchmark's layers that a rule there would move (Llama-70B qkv, 8B qkv / down, 70B o); then
# _cmd9.sh's bf16-zp / group-32 checks of a31f5ab's rules.
mkdir -p $OUT/r
L=$PWD/target/main/libmate.so
t0=$(date +%s)
V1=mate_dect_f16_sym_m8_n16,mate_bulk_f16_sym_m1_n128_split,mate_bulk_f16_sym_m8_n32_whole,mate_bulk_f16_sym_m1_n32_split,mate_bulk_f16_sym_m8_n32_split
S1=3584x4608,4096x3072,3584x3584,2048x4096,4096x14336,5120x7168,8192x14336,llama70b.qkv,llama8b.qkv,3584x37888
V8=mate_bulk_f16_sym_m8_n32_whole,mate_bulk_f16_sym_m8_n32_split,mate_bulk_f16_sym_m8_n128_split,mate_bwg_f16_sym_m16_n128_split,mate_dect_f16_sym_m8_n16
S8=8192x2560,2048x8192,3584x4608,7168x4096,5120x7168,llama8b.qkv,llama8b.down,llama70b.o
for pdl in 1 0; do
  MATE_PDL=$pdl timeout 120 python3 bench/decode.py --library $L --arms mate,read --orders 2 --shapes $S1 --m 1 \
    --variants $V1 --json $OUT/r/m1-pdl$pdl.json > $OUT/r/m1-pdl$pdl.log 2>&1; echo "m1 pdl$pdl rc $? ($(( $(date +%s) - t0 )) s)"
  MATE_PDL=$pdl timeout 120 python3 bench/decode.py --library $L --arms mate,read --orders 2 --shapes $S8 --m 4,8 \
    --variants $V8 --json $OUT/r/m8-pdl$pdl.json > $OUT/r/m8-pdl$pdl.log 2>&1; echo "m8 pdl$pdl rc $? ($(( $(date +%s) - t0 )) s)"
done
for pdl in 0 1; do
  for cfg in "bf16zp:--dtype bfloat16 --zp:bf16_zp" "g32:--group 32:f16_sym"; do
    tag=${cfg%%:*}; rest=${cfg#*:}; args=${rest%%:*}; v=${rest#*:}
    pre=$([ $tag = g32 ] && echo _pre || true)
    left=$(( 570 - ($(date +%s) - t0) )); [ $left -lt 40 ] && break 2
    MATE_PDL=$pdl timeout $(( left < 80 ? left : 80 )) python3 bench/decode.py --library $L --arms mate,read --orders 2 $args \
      --shapes 2048x4096,4096x3072,3584x3584,llama8b.o --m 9,16 --variants mate_bwg_${v}_m16_n128_split$pre \
      --json $OUT/r/cfg-$tag-m16-pdl$pdl.json > $OUT/r/cfg-$tag-m16-pdl$pdl.log 2>&1; echo "cfg $tag m16 pdl$pdl rc $?"
    left=$(( 570 - ($(date +%s) - t0) )); [ $left -lt 40 ] && break 2
    MATE_PDL=$pdl timeout $(( left < 80 ? left : 80 )) python3 bench/decode.py --library $L --arms mate,read --orders 2 $args \
      --shapes 4096x3072,4096x2048,8192x1536 --m 33,48 --variants mate_bwg_${v}_m64_n128_split_pre \
      --json $OUT/r/cfg-$tag-m48-pdl$pdl.json > $OUT/r/cfg-$tag-m48-pdl$pdl.log 2>&1; echo "cfg $tag m48 pdl$pdl rc $?"
  done
done
echo "total $(( $(date +%s) - t0 )) s"
cd $OUT && tar czf r.tgz r && rm -rf r
