set -u
# session 44, device call 1: on an H200, issue 4/5 standing with main's library (the commands of
# _s43a.sh); on an H100, session 43's prepared launch-context A/B (_cmd10.sh).
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
if echo "$gpu" | grep -q H200; then
  mkdir -p $OUT/r
  L=$PWD/target/main/libmate.so
  t0=$(date +%s)
  timeout 140 python3 bench/decode.py --library $L --arms mate,read,fp16 --m 1,16,33,48,64 --orders 2 \
    --json $OUT/r/standing.json > $OUT/r/standing.log 2>&1; echo "standing rc $? ($(( $(date +%s) - t0 )) s)"
  timeout 150 python3 bench/decode_step.py --library $L --models llama8b,qwen1.5b --m 1,16 --rounds 3 \
    --json $OUT/r/steps.json > $OUT/r/steps.log 2>&1; echo "steps rc $? ($(( $(date +%s) - t0 )) s)"
  tail -14 $OUT/r/steps.log | cut -c1-150
  LL=llama8b.qkv,llama8b.o,llama8b.gate_up,llama8b.down,llama70b.qkv,llama70b.o,llama70b.gate_up,llama70b.down
  timeout 200 python3 bench/decode.py --library $L --arms mate,fp16 --shapes $LL --m 128,256,1024,4096 --orders 2 \
    --sustain-ms 1000 --json $OUT/r/prefill.json > $OUT/r/prefill.log 2>&1; echo "prefill rc $? ($(( $(date +%s) - t0 )) s)"
  cd $OUT && tar czf r.tgz r && rm -rf r
else
  bash bench/lab/_cmd10.sh
fi
