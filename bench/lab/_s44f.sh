set -u
# session 44, device call 6: end to end (bench/e2e.py, Llama-8B, random weights, every GEMM behind
# a torch kernel: the plain launch context where this session's rules apply), session start
# (target/main = 7267a61) against final (target/final44 = f1eae18), A B B A while time lasts.
# Prediction (decode_step --between: M = 4 -46 us, M = 8 -73 us): Llama-8B B = 4 / 8 ~0.99x, B = 1 /
# 2 / 16 1.00x (B = 2 0.99x if Llama-8B o's whole tiles at M = 2 show); Qwen2-1.5B (no layer moves) 1.00x.
mkdir -p $OUT/r
t0=$(date +%s); i=0
for lib in main final44 final44 main; do
  i=$((i+1))
  left=$(( 500 - ($(date +%s) - t0) )); [ $left -lt 100 ] && { echo "stop: $left s left"; break; }
  for model in llama8b qwen1.5b; do
    bs=1,2,4,8,16; [ $model = qwen1.5b ] && bs=1,4,8
    timeout $left python3 bench/e2e.py --model $model --library $PWD/target/$lib/libmate.so --batches $bs --steps 2 --replays 8 \
      --json $OUT/r/e2e-$model-$lib-$i.json > $OUT/r/e2e-$model-$lib-$i.log 2>&1
    echo "$model $lib $i rc $? ($(( $(date +%s) - t0 )) s): $(python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
print(' '.join(f\"B={b} {r['w4a16']['median_us']:.1f}/{r['nongemm']['median_us']:.1f}\" for b, r in d['batches'].items() if 'w4a16' in r))" $OUT/r/e2e-$model-$lib-$i.json 2>&1 | tail -1)"
  done
done
cd $OUT && tar czf r.tgz r && rm -rf r
