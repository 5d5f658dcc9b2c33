set -u
# session 47, call 2: target/alone (bwg_one_an_sm in both launch contexts, 16-64-token tiles,
# parts <= 16 chunks, those plans alone on their SMs: Plan::alone) against target/fin46b (main's
# plans), libraries A B B A in each context (MATE_PDL 1, 0); the overlapping steps; the GPU suite.
# Predictions: overlap, 16/32-token moved shapes 0.90-0.97x per call (the hog lab: Qwen2-1.5B down
# alone in its graph 0.96x of main46), 2048 x 8192 the risk (s1 without the SM alone: 1.25-1.31x);
# plain, 16/32-token 1.00x (alone is the only change there); 64-token (both contexts) Qwen2-1.5B down
# 0.96-0.975x, 8192 x 1536 0.92-0.935x, 7168 x 2048 0.99x, shallow-K 3584 x 2560 / 4096 x 2048 /
# 5120 x 3072 unknown (6 parts of 10 chunks against 13 of 4-5); steps: Qwen2-1.5B M = 16 0.985x,
# Llama-8B M = 32 (o moves) 0.98-1.0x, M = 16 ~1.0x.
tar xzf target/pack/libs.tgz
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/r
t0=$(date +%s)
A=fin46b B=alone SHAPES=qwen1.5b.down,8192x1536,7168x2048,2048x8192,5120x2560,2048x5120 M=12,16 TAG=m16 bash bench/lab/ab.sh
A=fin46b B=alone SHAPES=llama8b.o,qwen1.5b.down,7168x2048,3072x4096 M=24,32 TAG=m32 bash bench/lab/ab.sh
A=fin46b B=alone SHAPES=qwen1.5b.down,8192x1536,7168x2048,8192x2048,3584x2560,4096x2048,5120x3072,llama8b.qkv M=48,64 TAG=m64 bash bench/lab/ab.sh
python3 bench/lab/ab_report.py fin46b alone "$OUT/r/m16-pdl1-*.json" "$OUT/r/m32-pdl1-*.json" "$OUT/r/m64-pdl1-*.json" 2>&1 | grep -v '^$' | cut -c1-150
echo "--- plain"
python3 bench/lab/ab_report.py fin46b alone "$OUT/r/m16-pdl0-*.json" "$OUT/r/m32-pdl0-*.json" "$OUT/r/m64-pdl0-*.json" 2>&1 | grep -v '^$' | cut -c1-150
cd $OUT && tar czf r0.tgz r && cd - > /dev/null
i=0
for lib in fin46b alone alone fin46b; do
  i=$((i+1))
  timeout 100 python3 bench/decode_step.py --library $PWD/target/$lib/libmate.so --models qwen1.5b,llama8b --m 16,32 --rounds 3 \
    --json $OUT/r/step-$lib-$i.json > $OUT/r/step-$lib-$i.log 2>&1
  echo "$lib $i rc $? ($(( $(date +%s) - t0 )) s)"; grep -E 'step us' $OUT/r/step-$lib-$i.log | cut -c1-80
done
cd $OUT && tar czf r1.tgz r && cd - > /dev/null
MATE_LIBRARY=$PWD/target/alone/libmate.so timeout $(( 590 - ($(date +%s) - t0) )) python3 -m pytest -q -rf -m gpu tests/python \
  --ignore=tests/python/test_tp_distributed.py -p no:cacheprovider > $OUT/r/suite-alone.log 2>&1
echo "suite rc $? ($(( $(date +%s) - t0 )) s): $(tail -1 $OUT/r/suite-alone.log)"
grep -E "^FAILED|^ERROR" $OUT/r/suite-alone.log | head -20
cd $OUT && tar czf r.tgz r && rm -rf r
echo "total $(( $(date +%s) - t0 )) s"
