set -u
# session 48, call 3: target/m48 (the 48-token tile routed at M = 33-48, BWG_M48_MAX_M) — the GPU
# suite, then libraries A B B A against target/final47 (main, 13a35c9) on the eight layers that move,
# MATE_PDL 1 / 0, M = 33 / 48 (moved) and 56 (control: unchanged), and the Llama-8B / Qwen2-1.5B
# overlap steps at M = 48. Predictions: the moved points as forced in call 2 (0.87-0.97x), M = 56
# 1.00x; steps at M = 48 ~0.93-0.95x (every Llama-8B layer but o moves).
tar xzf target/pack/libs.tgz
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/r
t0=$(date +%s)
MATE_LIBRARY=$PWD/target/m48/libmate.so timeout 240 python3 -m pytest -q -rf -m gpu tests/python \
  --ignore=tests/python/test_tp_distributed.py -p no:cacheprovider > $OUT/r/suite-m48.log 2>&1
echo "suite rc $? ($(( $(date +%s) - t0 )) s): $(tail -1 $OUT/r/suite-m48.log)"
grep -E "^FAILED|^ERROR" $OUT/r/suite-m48.log | head -20
cd $OUT && tar czf r0.tgz r && cd - > /dev/null
A=final47 B=m48 SHAPES=llama8b.qkv,llama8b.gate_up,llama8b.down,llama70b.qkv,llama70b.o,llama70b.gate_up,llama70b.down,qwen1.5b.down \
  M=33,48,56 TAG=rt bash bench/lab/ab.sh
python3 bench/lab/ab_report.py final47 m48 "$OUT/r/rt-pdl1-*.json" "$OUT/r/rt-pdl0-*.json" 2>&1 | grep -v '^$' | cut -c1-150
i=0
for lib in final47 m48 m48 final47; do
  i=$((i+1))
  timeout 60 python3 bench/decode_step.py --library $PWD/target/$lib/libmate.so --models llama8b,qwen1.5b --m 48 --rounds 3 \
    --json $OUT/r/st48-$lib-$i.json > $OUT/r/st48-$lib-$i.log 2>&1
  echo "$lib $i rc $? ($(( $(date +%s) - t0 )) s)"; grep -E 'step us' $OUT/r/st48-$lib-$i.log | cut -c1-80
done
cd $OUT && tar czf r.tgz r && rm -rf r r0.tgz
echo "total $(( $(date +%s) - t0 )) s"
