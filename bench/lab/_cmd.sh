set -u
mkdir -p $OUT/r
B=$PWD/target/base/libmate.so
A=$PWD/target/alt/libmate.so
S=llama8b.qkv,llama8b.gate_up,llama70b.o,llama70b.gate_up
# lab (session 30): MATE_BWG_LAB_ALT, chunk 1's A registers dequantized under chunk 0's wgmma
MATE_LIBRARY=$A timeout 200 python3 -m pytest -q -m gpu tests/python --ignore=tests/python/test_tp_distributed.py -p no:cacheprovider > $OUT/r/suite_alt.log 2>&1; echo "suite alt rc=$? $(tail -1 $OUT/r/suite_alt.log)"
n=0
for L in $B $A $A $B; do n=$((n+1)); t=$(basename $(dirname $L))
  timeout 120 python3 bench/decode.py --library $L --arms mate,fp16 --shapes $S --m 144,208,256,288,320,800,4096 --orders 2 --sustain-ms 300 --json $OUT/r/ab${n}_$t.json > $OUT/r/ab${n}_$t.log 2>&1; echo "ab$n $t rc=$?"; grep -c FAILED $OUT/r/ab${n}_$t.log
done
cd $OUT && tar czf r.tgz r && rm -rf r
