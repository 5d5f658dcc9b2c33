set -u
# session 50 call 3: whole decode steps at M = 40 / 56 (the new tiles) and 48, main49 (before) and
# fin50 (main a458846) in the order A B B A, with overlap (the default launch context), --rounds 2.
# Prediction: the Llama-8B step 2-4 % faster at M = 40 / 56 (its qkv / gate_up / down moved
# 0.93-0.98x, o stays on 32-token m-tiles), ~1 % at 48 (none of its layers takes the new stream-K).
tar xzf target/pack/libs.tgz
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/s
t0=$(date +%s)
i=0
for lib in main49 fin50 fin50 main49; do
  i=$((i+1))
  timeout 100 python3 bench/decode_step.py --library $PWD/target/$lib/libmate.so --models llama8b,qwen1.5b --m 40,48,56 \
    --rounds 2 --json $OUT/s/step-$lib-$i.json > $OUT/s/step-$lib-$i.log 2>&1
  echo "step $lib $i rc $? ($(( $(date +%s) - t0 )) s)"; tail -12 $OUT/s/step-$lib-$i.log | cut -c1-160
done
cd $OUT && tar czf s.tgz s && rm -rf s
