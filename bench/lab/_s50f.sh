set -u
# session 50 call 3 (trimmed _s50e.sh for ~300 s of device time): the Llama-8B decode step at M =
# 40 / 56, main49 then fin50 (one order), --rounds 2. Prediction: 2-4 % faster with fin50.
tar xzf target/pack/libs.tgz
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/s
t0=$(date +%s)
for lib in main49 fin50; do
  timeout 100 python3 bench/decode_step.py --library $PWD/target/$lib/libmate.so --models llama8b --m 40,56 \
    --rounds 2 --json $OUT/s/step-$lib.json > $OUT/s/step-$lib.log 2>&1
  echo "step $lib rc $? ($(( $(date +%s) - t0 )) s)"; tail -8 $OUT/s/step-$lib.log | cut -c1-160
done
cd $OUT && tar czf s.tgz s && rm -rf s
