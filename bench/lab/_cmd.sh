set -u
mkdir -p $OUT/r
# session 32: wide tiles in steps of 16 (272 / 304 beside 288 / 320): suite, sanitizers, then routed
# (new) against the forced 288 / 320 variant the previous routing took, in one process, with a
# control arm repeating the routed plan (/nopairs: the wide tiles have no paired split)
L=$PWD/target/w16/libmate.so
S6=llama8b.gate_up,llama8b.down,llama70b.qkv,llama70b.o,llama70b.gate_up,llama70b.down
if [ "${1:-}" = a ]; then
MATE_LIBRARY=$L timeout 200 python3 -m pytest -q -m gpu tests/python --ignore=tests/python/test_tp_distributed.py -p no:cacheprovider 2>&1 | tail -3
for a in mate_bwg_f16_sym_m272_n128_whole_pre@4096@132@0@2048@270 mate_bwg_bf16_zp_m304_n128_split_pre@4160@7@0@2048@600; do
MATE_LIBRARY=$L PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 150 compute-sanitizer --tool racecheck python3 bench/lab/racecheck_wrap.py $a 2>&1 | tail -2; done
MATE_LIBRARY=$L PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 100 compute-sanitizer --tool synccheck python3 bench/lab/racecheck_wrap.py mate_bwg_f16_sym_m272_n128_split_pre@4096@20@0@2048@530 2>&1 | tail -2
timeout 150 python3 bench/decode.py --library $L --arms mate,fp16 --shapes $S6 --m 264,272 --variants mate_bwg_f16_sym_m288_n128_split_pre,/nopairs --orders 2 --sustain-ms 300 --json $OUT/r/r1.json > $OUT/r/r1.log 2>&1; echo "r1 rc=$?"
timeout 150 python3 bench/decode.py --library $L --arms mate,fp16 --shapes $S6 --m 296,304 --variants mate_bwg_f16_sym_m320_n128_split_pre,/nopairs --orders 2 --sustain-ms 300 --json $OUT/r/r2.json > $OUT/r/r2.log 2>&1; echo "r2 rc=$?"
fi
if [ "${1:-}" = b ]; then
A3=llama8b.gate_up,llama8b.down,llama70b.qkv; B3=llama70b.o,llama70b.gate_up,llama70b.down
timeout 100 python3 bench/decode.py --library $L --arms mate,fp16 --shapes $A3 --m 528,544 --variants mate_bwg_f16_sym_m288_n128_split_pre,/nopairs --orders 2 --sustain-ms 300 --json $OUT/r/r3a.json > $OUT/r/r3a.log 2>&1; echo "r3a rc=$?"
timeout 100 python3 bench/decode.py --library $L --arms mate,fp16 --shapes $B3 --m 528,544 --variants mate_bwg_f16_sym_m288_n128_whole_pre,/nopairs --orders 2 --sustain-ms 300 --json $OUT/r/r3b.json > $OUT/r/r3b.log 2>&1; echo "r3b rc=$?"
timeout 100 python3 bench/decode.py --library $L --arms mate,fp16 --shapes $A3 --m 592,608 --variants mate_bwg_f16_sym_m320_n128_split_pre,/nopairs --orders 2 --sustain-ms 300 --json $OUT/r/r4a.json > $OUT/r/r4a.log 2>&1; echo "r4a rc=$?"
timeout 100 python3 bench/decode.py --library $L --arms mate,fp16 --shapes $B3 --m 592,608 --variants mate_bwg_f16_sym_m320_n128_whole_pre,/nopairs --orders 2 --sustain-ms 300 --json $OUT/r/r4b.json > $OUT/r/r4b.log 2>&1; echo "r4b rc=$?"
W5=llama8b.gate_up,llama8b.down,llama70b.o,llama70b.gate_up,llama70b.down
timeout 100 python3 bench/decode.py --library $L --arms mate --shapes $W5 --m 800 --variants mate_bwg_f16_sym_m272_n128_whole_pre,/nopairs --orders 2 --sustain-ms 300 --json $OUT/r/r5a.json > $OUT/r/r5a.log 2>&1; echo "r5a rc=$?"
timeout 100 python3 bench/decode.py --library $L --arms mate --shapes $W5 --m 900 --variants mate_bwg_f16_sym_m304_n128_whole_pre,/nopairs --orders 2 --sustain-ms 300 --json $OUT/r/r5b.json > $OUT/r/r5b.log 2>&1; echo "r5b rc=$?"
fi
cd $OUT && tar czf r.tgz r && rm -rf r
