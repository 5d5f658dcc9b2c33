set -u
mkdir -p $OUT/r
A=$PWD/target/s26tail/libmate.so
B=$PWD/target/s27pad/libmate.so
(MATE_LIBRARY=$B timeout 200 python3 -m pytest -q -x -m gpu tests/python --ignore=tests/python/test_tp_distributed.py -p no:cacheprovider > $OUT/r/suite.log 2>&1; echo "suite rc=$?"); tail -1 $OUT/r/suite.log; grep FAILED $OUT/r/suite.log | head -3
timeout 330 python3 bench/decode.py --library $A --arms mate --variants mate_bwg_f16_sym_m128_n128_split_pre,mate_bwg_f16_sym_m256_n128_split_pre --shapes llama8b.qkv,llama8b.o,llama8b.gate_up,llama8b.down,llama70b.qkv,llama70b.o,qwen1.5b.down,4096x2048 --m 520,576,640 --orders 2 --sustain-ms 500 --json $OUT/r/sweep640.json > $OUT/r/sweep640.log 2>&1; echo "sweep640 rc=$?"
grep "^   " $OUT/r/sweep640.log
timeout 200 python3 bench/decode.py --library $B --arms mate,fp16 --shapes llama8b.qkv,llama8b.o,llama8b.gate_up,llama8b.down,llama70b.qkv,llama70b.o,llama70b.gate_up,llama70b.down --m 320 --orders 2 --sustain-ms 700 --json $OUT/r/routed320.json > $OUT/r/routed320.log 2>&1; echo "routed320 rc=$?"
grep "^   " $OUT/r/routed320.log
cd $OUT && tar czf r.tgz r && rm -rf r
