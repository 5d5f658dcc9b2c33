set -u
# session 42, device call 4: the GPU suite on the final rule (target/s42b: bwg_m32_streamk), the
# routed plan against its Qwen2-1.5B gate_up alternatives once more, and the routing sweep's leads at
# M = 33-64 as forced arms, both orders, both launch contexts: Llama-8B o's 64-token sliced split
# at M = 33-48 (two 32-token m-tiles routed), Llama-70B qkv / o's sliced sum (split_pre_sl).
mkdir -p $OUT/r
L=$PWD/target/s42b/libmate.so
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
t0=$(date +%s)
for pdl in 1 0; do
  MATE_PDL=$pdl timeout 60 python3 bench/decode.py --library $L --arms mate,read --shapes llama8b.o --m 33,36,40,44,48,56 --orders 2 \
    --variants mate_bwg_f16_sym_m64_n128_split_pre_sl,mate_bwg_f16_sym_m64_n128_split_pre --json $OUT/r/o-pdl$pdl.json > $OUT/r/o-pdl$pdl.log 2>&1
  echo "o pdl$pdl rc $? ($(( $(date +%s) - t0 )) s)"; grep -E "^\s*llama8b.o M" $OUT/r/o-pdl$pdl.log | cut -c1-200
  MATE_PDL=$pdl timeout 90 python3 bench/decode.py --library $L --arms mate,read --shapes llama70b.qkv,llama70b.o --m 33,48,64 --orders 2 \
    --variants mate_bwg_f16_sym_m64_n128_split_pre_sl --json $OUT/r/sl-pdl$pdl.json > $OUT/r/sl-pdl$pdl.log 2>&1
  echo "sl pdl$pdl rc $? ($(( $(date +%s) - t0 )) s)"; grep -E "^\s*llama70b\S* M" $OUT/r/sl-pdl$pdl.log | cut -c1-200
done
MATE_LIBRARY=$L timeout 200 python3 -m pytest -q -m gpu tests/python --ignore=tests/python/test_tp_distributed.py -p no:cacheprovider > $OUT/r/suite.log 2>&1
echo "suite rc $? ($(( $(date +%s) - t0 )) s)"; tail -2 $OUT/r/suite.log
cd $OUT && tar czf r.tgz r && rm -rf r
