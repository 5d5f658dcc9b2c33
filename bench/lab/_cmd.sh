set -u
mkdir -p $OUT/r
A=$PWD/target/fin/libmate.so
N=$PWD/target/nodeq/libmate.so
S=llama8b.qkv,llama8b.gate_up,llama70b.o,llama70b.gate_up
# lab: what the consumers' dequantization costs (N: wgmma operand = the raw word, wrong results, unchecked)
n=0
for lib in $A $N $N $A; do n=$((n+1))
  timeout 130 python3 bench/lab/unchecked.py --library $lib --arms mate --shapes $S --m 16,32,128,256,320,800,4096 --sustain-ms 300 --json $OUT/r/nd$n.json > $OUT/r/nd$n.log 2>&1; echo "nd$n rc=$?"
done
cd $OUT && tar czf r.tgz r && rm -rf r
