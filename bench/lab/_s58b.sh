set -u
# (LIB=<folder under target/> picks another library; session 59)
# session 58: the issue-5 prefill standing on main's library (target/nx, md5 1b5e7432 = HEAD's
# library code) on whatever GPU comes; on an H200 (none since session 41) also issue 4's
# standing and steps (the commands of _s50b.sh).
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/h; L=$PWD/target/${LIB:-nx}/libmate.so; t0=$(date +%s)
LL=llama8b.qkv,llama8b.o,llama8b.gate_up,llama8b.down,llama70b.qkv,llama70b.o,llama70b.gate_up,llama70b.down
timeout 260 python3 bench/decode.py --library $L --arms mate,fp16 --shapes $LL --m 128,256,1024,4096 --orders 2 \
  --sustain-ms 1000 --json $OUT/h/prefill.json > $OUT/h/prefill.log 2>&1; echo "prefill rc $? ($(( $(date +%s) - t0 )) s)"
grep -E "^\S+ +M *=|fp16" $OUT/h/prefill.log | tail -40 | cut -c1-170
if echo "$gpu" | grep -q H200; then
  timeout 140 python3 bench/decode.py --library $L --arms mate,read,fp16 --m 1,16,33,48,64 --orders 2 \
    --json $OUT/h/standing.json > $OUT/h/standing.log 2>&1; echo "standing rc $? ($(( $(date +%s) - t0 )) s)"
  timeout 150 python3 bench/decode_step.py --library $L --models llama8b,qwen1.5b --m 1,16 --rounds 3 \
    --json $OUT/h/steps.json > $OUT/h/steps.log 2>&1; echo "steps rc $? ($(( $(date +%s) - t0 )) s)"
  tail -14 $OUT/h/steps.log | cut -c1-150
fi
cd $OUT && tar czf h.tgz h && rm -rf h
