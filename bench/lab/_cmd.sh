set -u
mkdir -p $OUT/r
B=$PWD/target/s27t32/libmate.so
(MATE_LIBRARY=$B timeout 200 python3 -m pytest -q -x -m gpu tests/python --ignore=tests/python/test_tp_distributed.py -p no:cacheprovider > $OUT/r/suite.log 2>&1; echo "suite rc=$?"); tail -1 $OUT/r/suite.log; grep FAILED $OUT/r/suite.log | head -3
T="mate_bwg_f16_sym_m160_n128_split_pre@1024@4@3@256@300 mate_bwg_f16_sym_m160_n128_split_pre@4160@8@2@256@300 mate_bwg_bf16_zp_m224_n128_split_pre@1024@12@3@256@420 mate_bwg_f16_sym_m224_n128_whole_pre@1024@4@0@256@420 mate_bwg_f16_zp_m224_n128_split_pre@1024@3@0@256@200"
for tool in racecheck synccheck; do
  PYTORCH_NO_CUDA_MEMORY_CACHING=1 MATE_LIBRARY=$B timeout 150 compute-sanitizer --tool $tool python3 bench/lab/racecheck_wrap.py $T > $OUT/r/san_$tool.log 2>&1; echo "$tool rc=$?"; grep -E " err |ERROR SUMMARY|RACECHECK SUMMARY" $OUT/r/san_$tool.log | tail -7
done
timeout 300 python3 bench/decode.py --library $B --arms mate,fp16 --variants mate_bwg_f16_sym_m192_n128_split_pre,mate_bwg_f16_sym_m256_n128_split_pre --shapes llama8b.qkv,llama8b.o,llama8b.gate_up,llama8b.down,llama70b.qkv,llama70b.o,llama70b.down --m 144,200,288,416 --orders 2 --sustain-ms 400 --json $OUT/r/t32.json > $OUT/r/t32.log 2>&1; echo "t32 rc=$?"
grep "^   " $OUT/r/t32.log
cd $OUT && tar czf r.tgz r && rm -rf r
