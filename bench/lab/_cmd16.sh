set -u
# session 45, device call 5: the GPU suite on the final library (target/fin45b = main with
# bulk_m1_eight's stream-K / whole forms), then data for the next session (no rule): the routing
# sweep on it at M = 1 / 3 / 5 in both contexts (fp16, symmetric, group 128), and bf16 with zero
# points at M = 1 with overlap (the zero-point frames keep the one-token 128-feature split).
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/r
L=$PWD/target/fin45b/libmate.so
MATE_LIBRARY=$L timeout 200 python3 -m pytest -q -rf -m gpu tests/python --ignore=tests/python/test_tp_distributed.py \
  -p no:cacheprovider > $OUT/r/suite.log 2>&1; echo "suite rc $?"; grep -E "^FAILED|passed|failed" $OUT/r/suite.log | tail -8
S=llama8b.qkv,llama8b.o,llama8b.gate_up,llama8b.down,llama70b.qkv,llama70b.o,llama70b.gate_up,llama70b.down,qwen1.5b.qkv,qwen1.5b.o,qwen1.5b.gate_up,qwen1.5b.down,4096x3072,2048x4096,4096x14336,7168x4096,8192x2560,2048x8192,8192x14336,7168x8192,3584x4608,3584x3584,3584x37888,18944x3584,5120x7168,5120x5120,5120x55296,27648x5120
t0=$(date +%s)
for pdl in 0 1; do
  MATE_PDL=$pdl timeout 170 python3 bench/routing_sweep.py --library $L --shapes $S --m 1,3,5 \
    --json $OUT/r/sweep-pdl$pdl.json > $OUT/r/sweep-pdl$pdl.log 2>&1; echo "pdl$pdl rc $? ($(( $(date +%s) - t0 )) s)"
  grep -E "<|points" $OUT/r/sweep-pdl$pdl.log | cut -c1-170
done
MATE_PDL=1 timeout 120 python3 bench/routing_sweep.py --library $L --shapes $S --m 1 --dtype bfloat16 --zp \
  --json $OUT/r/sweep-zp-pdl1.json > $OUT/r/sweep-zp-pdl1.log 2>&1; echo "zp rc $? ($(( $(date +%s) - t0 )) s)"
grep -E "<|points" $OUT/r/sweep-zp-pdl1.log | cut -c1-170
cd $OUT && tar czf r.tgz r && rm -rf r
