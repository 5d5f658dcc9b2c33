set -u
# session 58 (or the next session's first call): ch3 = main + bench/lab/s58_ch3.patch (the whole
# 256-token tile in two three-chunk stages instead of three two-chunk ones) against main (rel1m =
# main's library after the one-release change). From the own-staging outcome (one-chunk stages
# 1.2x: a stage's bookkeeping ~half a chunk), a stage of three chunks should take ~0.93x, unless
# two stages are too shallow a ring (the refill then has only three chunks' time to land).
# Prediction: 0.93-0.97x at M = 1024-4096 where the whole 256-token tile runs; >= 1.05x would say
# the ring depth binds.
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/c; T0=$(date +%s)
MATE_LIBRARY=$PWD/target/ch3/libmate.so timeout 60 python3 -m pytest -q -rf -m gpu tests/python/test_gpu_matrix.py -p no:cacheprovider > $OUT/c/tests.log 2>&1
echo "ch3 tests rc $? ($(( $(date +%s) - T0 )) s): $(tail -1 $OUT/c/tests.log | cut -c1-120)"
LL=llama8b.o,llama8b.gate_up,llama70b.o,llama70b.down
i=0
for lib in rel1m ch3 ch3 rel1m; do
  i=$((i+1))
  timeout 60 python3 bench/decode.py --library $PWD/target/$lib/libmate.so --arms mate --shapes $LL --m 1024,4096 \
    --sustain-ms 300 --json $OUT/c/ch3-pdl1-$lib-$i.json > /dev/null 2> $OUT/c/ch3-$i.err
  echo "$lib $i rc $? ($(( $(date +%s) - T0 )) s)"
done
python3 bench/lab/ab_report.py rel1m ch3 "$OUT/c/ch3-pdl1-*.json" 2>&1 | grep -v '^$' | cut -c1-160
cd $OUT && tar czf c.tgz c && rm -rf c
