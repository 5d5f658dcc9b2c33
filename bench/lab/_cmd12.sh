set -u
# Prepared in session 44, not run (no device time left): bench/lab/s44_m1_tiles.patch, M = 1 rules
# from session 44's plain / overlap routing sweep (bench/lab/_s44g.sh, one order each):
# - bulk_plain_fill at M = 1 too (plain context: whole 8 x 32 tiles where they fill a third of the
#   slots to one round over K <= 8192): Llama-8B o 0.79x, 7168 x 4096 0.84x;
# - bulk_m1_eight (both contexts, symmetric post-scale, >= 2^25 weights, 32-feature tiles within
#   one round of the slots): the 8-token 32-feature tile instead of the one-token 128-feature
#   split: Llama-8B down 0.91x / 0.94x (plain / overlap), 18944 x 3584 0.93x / 0.96x, Llama-70B
#   down 0.90x / 0.93x; unmeasured: 27648 x 5120 (whole: the sweep had split 0.97x), 14336 x 8192.
# Build here (final44 = HEAD's library before the patch):
#   cargo build --release && mkdir -p target/final44 && cp target/release/libmate.so target/final44/ &&
#   git apply bench/lab/s44_m1_tiles.patch && cargo build --release && mkdir -p target/m1 &&
#   cp target/release/libmate.so target/m1/ && git apply -R bench/lab/s44_m1_tiles.patch
# then on the GPU machine (carry target/final44, target/m1): bash bench/lab/_cmd12.sh  (~7 min)
# Predictions: per call as above, controls 0.99-1.01x; Llama-8B step at M = 1 with overlap ~0.98x
# (down -0.9 us a layer), --between ~0.95x (o -1.5, down -1.4 us a layer); e2e Llama-8B B = 1 ~0.98x.
# Session 43-44's lesson: a per-call win can lose in the step; merge only what the steps confirm.
mkdir -p $OUT/r
(git apply bench/lab/s44_m1_tiles.patch 2>/dev/null || patch -p1 < bench/lab/s44_m1_tiles.patch) > /dev/null && echo patched
MATE_LIBRARY=$PWD/target/m1/libmate.so timeout 200 python3 -m pytest -q -m gpu tests/python --ignore=tests/python/test_tp_distributed.py \
  -p no:cacheprovider 2>&1 | tail -2
A=final44 B=m1 TAG=m1 M=1 SHAPES=llama8b.o,7168x4096,llama8b.down,18944x3584,llama70b.down,27648x5120,14336x8192,llama8b.qkv,llama70b.qkv,8192x2560,4096x3072,2048x4096,llama70b.gate_up \
  bash bench/lab/ab.sh > /dev/null
python3 bench/lab/ab_report.py final44 m1 "$OUT/r/m1-pdl1-*.json" "$OUT/r/m1-pdl0-*.json" | tee $OUT/r/report.txt
i=0
for lib in final44 m1 m1 final44; do
  i=$((i+1))
  for between in "" "--between"; do
    timeout 90 python3 bench/decode_step.py --library $PWD/target/$lib/libmate.so --models llama8b --m 1 --rounds 3 $between \
      --json $OUT/r/step-$lib-$i${between:+-between}.json > $OUT/r/step-$lib-$i${between:+-between}.log 2>&1
    echo "$lib $i ${between:-overlap}: $(grep -E 'step us' $OUT/r/step-$lib-$i${between:+-between}.log | cut -c1-90)"
  done
  timeout 90 python3 bench/e2e.py --model llama8b --library $PWD/target/$lib/libmate.so --batches 1 --steps 2 --replays 8 \
    --json $OUT/r/e2e-$lib-$i.json > $OUT/r/e2e-$lib-$i.log 2>&1
  echo "$lib $i e2e: $(python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['batches']['1']; print(round(r['w4a16']['median_us'],1), round(r['nongemm']['median_us'],1))" $OUT/r/e2e-$lib-$i.json 2>&1 | tail -1)"
done
cd $OUT && tar czf r.tgz r && rm -rf r
