set -u
# Prepared in session 45, not run: the first Qwen2-7B model step (bench/e2e.py --model qwen7b), the
# arbiter the serving-shape rules of sessions 43-45 never had (3584 x 4608 / 3584 x 3584 /
# 3584 x 37888 / 18944 x 3584; every GEMM of it runs behind torch kernels: the plain context).
# Libraries: target/final44 = d6f9ea9 (session 44's end), target/main46 = main. Build here, if
# target/final44 is gone: git worktree add /tmp/w44 d6f9ea9 && (cd /tmp/w44 && source scripts/env.sh
# && cargo build --release) && mkdir -p target/final44 && cp /tmp/w44/target/release/libmate.so target/final44/
# then on the GPU machine (carry target/final44, target/main46): bash bench/lab/_cmd20.sh (~4 min?
# the first qwen7b process also measures its own build time; Llama-8B took ~25 s a process).
# Predicted from the per-call A/Bs (plain context): M = 1 3584 x 37888 0.93x, 18944 x 3584 0.96x,
# M = 2-4 18944 x 3584 0.88-0.94x (session 44's deep rule), 3584 x 4608 / 3584 x 3584 unchanged at
# B = 1; the GEMMs' share of the step ~0.96x at B = 1-4, the step ~0.98-0.99x.
mkdir -p $OUT/r
i=0
for lib in final44 main46 main46 final44; do
  i=$((i+1))
  t0=$(date +%s)
  timeout 150 python3 bench/e2e.py --model qwen7b --library $PWD/target/$lib/libmate.so --batches 1,2,4,8 --steps 2 --replays 8 \
    --json $OUT/r/e2e7b-$lib-$i.json > $OUT/r/e2e7b-$lib-$i.log 2>&1
  echo "$lib $i rc $? ($(( $(date +%s) - t0 )) s): $(python3 -c "
import json,sys; d=json.load(open(sys.argv[1]))['batches']
print(' '.join(f\"B={b} {r['w4a16']['median_us']:.0f}/{r['nongemm']['median_us']:.0f}\" for b, r in d.items()))" $OUT/r/e2e7b-$lib-$i.json 2>&1 | tail -1)"
done
cd $OUT && tar czf r.tgz r && rm -rf r
