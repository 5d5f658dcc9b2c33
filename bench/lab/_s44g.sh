set -u
# session 44, device call 7 (data for session 45, no rule): the routing sweep in the plain context
# (MATE_PDL 0, as every GEMM of a model runs: behind torch kernels) at M = 1 / 6 / 12 / 16 on the
# benchmark layers and the serving shapes, on the final library (target/final44 = f1eae18), one
# arm order; then the overlap context (MATE_PDL 1) one order while time lasts.
mkdir -p $OUT/r
L=$PWD/target/final44/libmate.so
S=llama8b.qkv,llama8b.o,llama8b.gate_up,llama8b.down,llama70b.qkv,llama70b.o,llama70b.gate_up,llama70b.down,qwen1.5b.qkv,qwen1.5b.o,qwen1.5b.gate_up,qwen1.5b.down,4096x3072,2048x4096,4096x14336,7168x4096,8192x2560,2048x8192,8192x14336,7168x8192,3584x4608,3584x3584,3584x37888,18944x3584,5120x7168,5120x5120,5120x55296,27648x5120
t0=$(date +%s)
MATE_PDL=0 timeout 170 python3 bench/routing_sweep.py --library $L --shapes $S --m 1,6,12,16 \
  --json $OUT/r/plain-sweep.json > $OUT/r/plain-sweep.log 2>&1; echo "plain rc $? ($(( $(date +%s) - t0 )) s)"
grep -E "<|points" $OUT/r/plain-sweep.log | cut -c1-170
left=$(( 250 - ($(date +%s) - t0) ))
[ $left -gt 40 ] && MATE_PDL=1 timeout $left python3 bench/routing_sweep.py --library $L --shapes $S --m 1,6,12,16 \
  --json $OUT/r/overlap-sweep.json > $OUT/r/overlap-sweep.log 2>&1; echo "overlap rc $? ($(( $(date +%s) - t0 )) s)"
grep -E "<|points" $OUT/r/overlap-sweep.log | cut -c1-170
cd $OUT && tar czf r.tgz r && rm -rf r
