set -u
# session 58: own (bench/lab/s58_ownout.patch: the whole 256-token tile in four one-chunk stages,
# output staged in a region of its own, each consumer warpgroup's epilogue on its own barrier
# so the other's wgmma keep the tensor pipe busy) against nx (main's library). Prediction: the
# epilogue was ~4 % of a consumer warp's time with the tensor pipe idle, so 0.96-0.98x where the
# routed plan is the whole 256-token tile and K is 4096-8192 (M = 1024-4096); ~1.0x at K =
# 14336-28672; one-chunk stages may cost back 1-2 % (twice the barrier waits a chunk).
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/o; T0=$(date +%s)
MATE_LIBRARY=$PWD/target/own/libmate.so timeout 100 python3 -m pytest -q -rf -m gpu tests/python/test_gpu_matrix.py \
  tests/python/test_split_sliced.py -p no:cacheprovider > $OUT/o/tests.log 2>&1
echo "own tests rc $? ($(( $(date +%s) - T0 )) s)"; tail -1 $OUT/o/tests.log | cut -c1-200; grep -E '^FAILED' $OUT/o/tests.log | head -8 | cut -c1-250
LL=llama8b.qkv,llama8b.o,llama8b.gate_up,llama8b.down,llama70b.qkv,llama70b.o,llama70b.gate_up,llama70b.down
i=0
for lib in nx own own nx; do
  i=$((i+1))
  timeout 110 python3 bench/decode.py --library $PWD/target/$lib/libmate.so --arms mate --shapes $LL --m 1024,2048,4096 \
    --sustain-ms 400 --json $OUT/o/own-pdl1-$lib-$i.json > /dev/null 2> $OUT/o/own-$i.err
  echo "$lib $i rc $? ($(( $(date +%s) - T0 )) s)"
done
python3 bench/lab/ab_report.py nx own "$OUT/o/own-pdl1-*.json" 2>&1 | grep -v '^$' | cut -c1-170
cd $OUT && tar czf o.tgz o && rm -rf o
