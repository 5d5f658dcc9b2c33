set -u
mkdir -p $OUT/r
N=$PWD/target/s26rule2/libmate.so
python3 bench/decode.py --library $N --arms mate --variants mate_bwg_f16_sym_m128_n128_split_pre --shapes llama8b.qkv,llama8b.o,llama8b.gate_up,llama8b.down,llama70b.qkv,llama70b.o,llama70b.gate_up,llama70b.down --m 320,384 --orders 2 --sustain-ms 1000 --json $OUT/r/m320.json > $OUT/r/m320.log 2>&1; echo "m320 rc=$?"; grep "  mate=\|=.*mate=" $OUT/r/m320.log | tail -16
cd $OUT && tar czf r.tgz r && rm -rf r
