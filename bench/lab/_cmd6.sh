set -u
# session 42, device call 6: call 5's sweep leads as forced arms, both orders, both launch contexts
# (target/s42b): dect n32 / bulk n112 against bwg's 16-token split at M = 9-16; bwg's 32-token split
# against the 64-token tile at M = 33-64 on the near-square layers.
mkdir -p $OUT/r
t0=$(date +%s)
for pdl in 0 1; do
  MATE_PDL=$pdl timeout 100 python3 bench/decode.py --library $PWD/target/s42b/libmate.so --arms mate,read --orders 2 \
    --shapes 2048x4096,3584x3584,4096x3072,4096x14336,llama8b.o --m 9,12,16 \
    --variants mate_dect_f16_sym_m16_n32,mate_bulk_f16_sym_m16_n112_whole --json $OUT/r/m16-pdl$pdl.json > $OUT/r/m16-pdl$pdl.log 2>&1
  echo "m16 pdl$pdl rc $? ($(( $(date +%s) - t0 )) s)"; grep -E "^\s+\S+ M=" $OUT/r/m16-pdl$pdl.log | cut -c1-150
  MATE_PDL=$pdl timeout 100 python3 bench/decode.py --library $PWD/target/s42b/libmate.so --arms mate,read --orders 2 \
    --shapes 4096x3072,3584x4608,2048x8192,llama8b.o --m 33,40,48,64 \
    --variants mate_bwg_f16_sym_m32_n128_split,mate_bwg_f16_sym_m64_n128_split_pre_sl --json $OUT/r/m48-pdl$pdl.json > $OUT/r/m48-pdl$pdl.log 2>&1
  echo "m48 pdl$pdl rc $? ($(( $(date +%s) - t0 )) s)"; grep -E "^\s+\S+ M=" $OUT/r/m48-pdl$pdl.log | cut -c1-150
done
cd $OUT && tar czf r.tgz r && rm -rf r
