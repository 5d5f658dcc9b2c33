set -u
# session 51: _s51a.sh (GPU suite on m24 + A/B fin50 vs m24 at M = 17/20/24/32), then the
# Llama-8B decode step at M = 24, fin50 then m24 then fin50 (--rounds 2). Prediction: the step
# 2-4 % faster with m24 (qkv / gate_up / down at 0.93-0.98x; o stays on ... its own plan).
bash bench/lab/_s51a.sh
mkdir -p $OUT/s
t0=$(date +%s)
i=0
for lib in fin50 m24 fin50; do
  i=$((i+1))
  timeout 90 python3 bench/decode_step.py --library $PWD/target/$lib/libmate.so --models llama8b,qwen1.5b --m 24 \
    --rounds 2 --json $OUT/s/step-$lib-$i.json > $OUT/s/step-$lib-$i.log 2>&1
  echo "step $lib rc $? ($(( $(date +%s) - t0 )) s)"; tail -6 $OUT/s/step-$lib-$i.log | cut -c1-160
done
cd $OUT && tar czf s.tgz s && rm -rf s
