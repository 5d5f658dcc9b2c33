set -u
mkdir -p $OUT/r
B=$PWD/target/base/libmate.so
X=$PWD/target/ss/libmate.so
S=llama8b.qkv,llama8b.gate_up,llama70b.o,llama70b.gate_up
# lab (session 30): MATE_BWG_LAB_SS, f16 256-token tile with cuBLAS-like consumers (A from shared
# memory, no weight reads or dequantization; wrong results, timed unchecked)
n=0
for L in $B $X $X $B; do n=$((n+1)); t=$(basename $(dirname $L))
  timeout 100 python3 bench/lab/unchecked.py --library $L --arms mate,fp16 --shapes $S --m 256,1024,4096 --orders 2 --sustain-ms 300 --json $OUT/r/ss${n}_$t.json > $OUT/r/ss${n}_$t.log 2>&1; echo "ss$n $t rc=$?"; grep -E "M=" $OUT/r/ss${n}_$t.log | head -12
done
cd $OUT && tar czf r.tgz r && rm -rf r
