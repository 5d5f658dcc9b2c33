set -u
mkdir -p $OUT/r
A=$PWD/target/s24mend/libmate.so
C=$PWD/target/s25ch3/libmate.so
for lib in $A $C; do
  tag=$(basename $(dirname $lib))
  python3 bench/decode.py --library $lib --arms mate --variants mate_bwg_f16_sym_m128_n128_split_pre@2 --shapes llama8b.qkv,llama8b.o,llama8b.gate_up,llama8b.down,llama70b.o,llama70b.down --m 128,256 --orders 2 --sustain-ms 1000 --json $OUT/r/ch3_$tag.json > $OUT/r/ch3_$tag.log 2>&1; echo "$tag rc=$?"
  grep "M=" $OUT/r/ch3_$tag.log | grep "mate=" | sed 's/mate_bwg_f16_sym_m128_n128_split_pre@2/f@2/'
done
cd $OUT && tar czf r.tgz r && rm -rf r
