set -u
# session 42, device call 5: the routing sweep (routed plan against every forced variant of its
# token tile; at M = 33-64 now also bwg's 32-token tile) on 16 serving shapes outside the benchmark
# (Llama-8B at TP = 2, Llama-70B at TP = 4, Qwen2-7B, Qwen2.5-32B), M = 16 / 48, MATE_PDL = 1 / 0,
# one order: where the planner has never been checked. The merged library (target/s42b).
mkdir -p $OUT/r
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
S=4096x3072,2048x4096,4096x14336,7168x4096,8192x2560,2048x8192,8192x14336,7168x8192,3584x4608,3584x3584,3584x37888,18944x3584,5120x7168,5120x5120,5120x55296,27648x5120
t0=$(date +%s)
for pdl in 0 1; do
  MATE_PDL=$pdl timeout 240 python3 bench/routing_sweep.py --library $PWD/target/s42b/libmate.so --shapes $S --m 16,48 \
    --json $OUT/r/sweep-pdl$pdl.json > $OUT/r/sweep-pdl$pdl.log 2>&1; echo "sweep pdl$pdl rc $? ($(( $(date +%s) - t0 )) s)"
  grep -E "<|points" $OUT/r/sweep-pdl$pdl.log | cut -c1-160
done
cd $OUT && tar czf r.tgz r && rm -rf r
