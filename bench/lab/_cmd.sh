set -u
mkdir -p $OUT/r
A=$PWD/target/s26tail/libmate.so
timeout 560 python3 bench/decode.py --library $A --arms mate --variants mate_bwg_f16_sym_m128_n128_split_pre,mate_bwg_f16_sym_m256_n128_split_pre --shapes llama8b.qkv,llama8b.o,llama8b.gate_up,llama8b.down,llama70b.qkv,llama70b.o,qwen1.5b.o,qwen1.5b.down,4096x2048 --m 272,320,352,384,448 --orders 2 --sustain-ms 500 --json $OUT/r/sweep.json > $OUT/r/sweep.log 2>&1; echo "rc=$?"
grep -v "^#" $OUT/r/sweep.log | tail -60
cd $OUT && tar czf r.tgz r && rm -rf r
