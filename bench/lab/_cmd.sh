set -u
mkdir -p $OUT/r
N=$PWD/target/s24end/libmate.so
(MATE_LIBRARY=$N timeout 300 python3 -m pytest -q -m gpu tests/python --ignore=tests/python/test_tp_distributed.py -p no:cacheprovider > $OUT/r/suite.log 2>&1; echo "suite rc=$?"); tail -2 $OUT/r/suite.log
for tool in racecheck synccheck; do
(MATE_LIBRARY=$N PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 120 compute-sanitizer --tool $tool python3 bench/lab/racecheck_wrap.py mate_bwg_f16_sym_m256_n128_split_pre@4096@4@2@256@256 mate_bwg_bf16_zp_m128_n128_split_pre@4096@4@2@128@200 mate_bwg_f16_zp_m256_n128_split_pre@2112@2@2@128@100 > $OUT/r/$tool.log 2>&1; echo "$tool rc=$?"); grep -h "ERROR SUMMARY\|RACECHECK SUMMARY\| err " $OUT/r/$tool.log | tail -4
done
python3 bench/decode.py --library $N --arms mate,fp16 --shapes llama8b.qkv,llama8b.o,llama8b.gate_up,llama8b.down,llama70b.qkv,llama70b.o,llama70b.gate_up,llama70b.down --m 128,256,1024,4096 --orders 2 --sustain-ms 1000 --json $OUT/r/prefill.json > $OUT/r/prefill.log 2>&1; echo "prefill rc=$?"; grep "fp16/mate" $OUT/r/prefill.log
cd $OUT && tar czf r.tgz r && rm -rf r
