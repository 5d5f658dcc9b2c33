set -u
# session 46, device call 9: bwg_one_an_sm extended to the 32-token tile (target/fin46b) against
# fin46 (the 16-token rule): GPU suite, per call plain (A B B A), the Llama-8B model step at B =
# 24 / 32 (bench/e2e.py: Llama-8B o moves).
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/r
t0=$(date +%s)
MATE_LIBRARY=$PWD/target/fin46b/libmate.so timeout 150 python3 -m pytest -q -rf -m gpu tests/python \
  --ignore=tests/python/test_tp_distributed.py -p no:cacheprovider -x > $OUT/r/suite-fin46b.log 2>&1
echo "suite rc $? ($(( $(date +%s) - t0 )) s): $(tail -1 $OUT/r/suite-fin46b.log)"
grep -E "^FAILED|^ERROR" $OUT/r/suite-fin46b.log | head -10
cd $OUT && tar czf r0.tgz r && cd - > /dev/null
A=fin46 B=fin46b SHAPES=llama8b.o,qwen1.5b.down,7168x2048,3072x4096,8192x1536,llama8b.qkv M=17,24,32 TAG=w PDLS=0 bash bench/lab/ab.sh
python3 bench/lab/ab_report.py fin46 fin46b "$OUT/r/w-pdl0-*.json" 2>&1 | tail -20
i=0
for lib in fin46 fin46b fin46b fin46; do
  i=$((i+1))
  timeout 60 python3 bench/e2e.py --model llama8b --library $PWD/target/$lib/libmate.so --batches 24,32 --steps 2 --replays 8 \
    --json $OUT/r/e2el-$lib-$i.json > $OUT/r/e2el-$lib-$i.log 2>&1
  echo "$lib $i rc $? ($(( $(date +%s) - t0 )) s): $(python3 -c "
import json,sys; d=json.load(open(sys.argv[1]))['batches']
print(' '.join(f\"B={b} {r['w4a16']['median_us']:.0f}/{r['nongemm']['median_us']:.0f}\" for b, r in d.items()))" $OUT/r/e2el-$lib-$i.json 2>&1 | tail -1)"
  cd $OUT && tar czf r.tgz r && cd - > /dev/null
done
echo "total $(( $(date +%s) - t0 )) s"
