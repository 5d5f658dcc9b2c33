set -u
# session 47, call 3: target/final47 (bwg_one_an_sm: 16/32-token tiles in both contexts, with
# overlap from 3 parts; the 64-token tile plain only, <= 14 chunks; Plan::alone) — the GPU suite,
# then A B B A against target/fin46b (main) on points the rule's bounds decide. Predictions:
# overlap 2048 x 8192 M = 16 1.00x (bounded out), Qwen2-1.5B down M = 16 0.97x, M = 48 1.00x;
# plain Qwen2-1.5B down M = 48 0.97-0.99x, 4096 x 2048 M = 48 0.89x, 5120 x 3072 M = 48 1.00x.
tar xzf target/pack/libs.tgz
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/r
t0=$(date +%s)
MATE_LIBRARY=$PWD/target/final47/libmate.so timeout 300 python3 -m pytest -q -rf -m gpu tests/python \
  --ignore=tests/python/test_tp_distributed.py -p no:cacheprovider > $OUT/r/suite-final47.log 2>&1
echo "suite rc $? ($(( $(date +%s) - t0 )) s): $(tail -1 $OUT/r/suite-final47.log)"
grep -E "^FAILED|^ERROR" $OUT/r/suite-final47.log | head -20
cd $OUT && tar czf r0.tgz r && cd - > /dev/null
A=fin46b B=final47 SHAPES=2048x8192,qwen1.5b.down,5120x3072,4096x2048 M=16,48 TAG=fin bash bench/lab/ab.sh
python3 bench/lab/ab_report.py fin46b final47 "$OUT/r/fin-pdl1-*.json" "$OUT/r/fin-pdl0-*.json" 2>&1 | grep -v '^$' | cut -c1-150
cd $OUT && tar czf r1.tgz r && cd - > /dev/null
# the 64-token rule in a model step (bench/e2e.py: every GEMM behind torch kernels, plain):
# Qwen2-1.5B at B = 48 / 64 (down moves: 0.97-0.99x per call, ~1/4 of the GEMM time) ~0.998x;
# only with E2E=1 (device time ran short in session 47)
i=0
[ -n "${E2E:-}" ] && for lib in fin46b final47 final47 fin46b; do
  i=$((i+1))
  timeout 100 python3 bench/e2e.py --model qwen1.5b --library $PWD/target/$lib/libmate.so --batches 48,64 --steps 2 --replays 8 \
    --json $OUT/r/e2eq-$lib-$i.json > $OUT/r/e2eq-$lib-$i.log 2>&1
  echo "$lib $i rc $? ($(( $(date +%s) - t0 )) s): $(python3 -c "
import json,sys; d=json.load(open(sys.argv[1]))['batches']
print(' '.join(f\"B={b} {r['w4a16']['median_us']:.0f}/{r['nongemm']['median_us']:.0f}\" for b, r in d.items()))" $OUT/r/e2eq-$lib-$i.json 2>&1 | tail -1)"
done
cd $OUT && tar czf r.tgz r && rm -rf r
echo "total $(( $(date +%s) - t0 )) s"
