set -u
# session 46, device call 6: the final library (target/fin46: bulk_m1_zp_wide + bwg_one_an_sm) —
# GPU suite; bwg_one_an_sm in bf16 zp and group 32 (plain context only, main46 / fin46 A B B A);
# the Qwen2-1.5B model step (bench/e2e.py, every GEMM behind torch kernels) at B = 12 / 16.
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/r
t0=$(date +%s)
MATE_LIBRARY=$PWD/target/fin46/libmate.so timeout 200 python3 -m pytest -q -rf -m gpu tests/python \
  --ignore=tests/python/test_tp_distributed.py -p no:cacheprovider > $OUT/r/suite-fin46.log 2>&1
echo "suite rc $? ($(( $(date +%s) - t0 )) s): $(tail -1 $OUT/r/suite-fin46.log)"
grep -E "^FAILED|^ERROR" $OUT/r/suite-fin46.log | head -20
cd $OUT && tar czf r0.tgz r && cd - > /dev/null
SH=qwen1.5b.down,8192x1536,2048x5120,1536x8192
A=main46 B=fin46 SHAPES=$SH M=4,12,16 TAG=zp PDLS=0 EXTRA="--dtype bfloat16 --zp" bash bench/lab/ab.sh
A=main46 B=fin46 SHAPES=$SH M=4,12,16 TAG=g32 PDLS=0 EXTRA="--group 32" bash bench/lab/ab.sh
python3 bench/lab/ab_report.py main46 fin46 "$OUT/r/zp-pdl0-*.json" "$OUT/r/g32-pdl0-*.json" 2>&1 | tail -30
i=0
for lib in main46 fin46 fin46 main46; do
  i=$((i+1))
  timeout 100 python3 bench/e2e.py --model qwen1.5b --library $PWD/target/$lib/libmate.so --batches 12,16 --steps 2 --replays 8 \
    --json $OUT/r/e2eq-$lib-$i.json > $OUT/r/e2eq-$lib-$i.log 2>&1
  echo "$lib $i rc $? ($(( $(date +%s) - t0 )) s): $(python3 -c "
import json,sys; d=json.load(open(sys.argv[1]))['batches']
print(' '.join(f\"B={b} {r['w4a16']['median_us']:.0f}/{r['nongemm']['median_us']:.0f}\" for b, r in d.items()))" $OUT/r/e2eq-$lib-$i.json 2>&1 | tail -1)"
done
cd $OUT && tar czf r.tgz r && rm -rf r
echo "total $(( $(date +%s) - t0 )) s"
