set -u
# Session 60: issue 4's standing on the H200 (the issue's GPU; last taken there in session 36).
# Per call: decode.py --arms mate,read,fp16, every default shape (Llama-8B / 70B, Qwen2-1.5B),
# M = 1 / 4 / 8 / 16 / 32 / 48 / 64, both arm orders. Steps: decode_step.py, Llama-8B and
# Qwen2-1.5B at M = 1 / 16, 3 rounds. L = main's library (target/s59m, 36f611d) or LIB=<folder>.
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/d; L=$PWD/target/${LIB:-s59m}/libmate.so; t0=$(date +%s)
timeout 300 python3 bench/decode.py --library $L --arms mate,read,fp16 --m 1,4,8,16,32,48,64 --orders 2 \
  --json $OUT/d/standing.json > $OUT/d/standing.log 2>&1; echo "standing rc $? ($(( $(date +%s) - t0 )) s)"
timeout 200 python3 bench/decode_step.py --library $L --models llama8b,qwen1.5b --m 1,16 --rounds 3 \
  --json $OUT/d/steps.json > $OUT/d/steps.log 2>&1; echo "steps rc $? ($(( $(date +%s) - t0 )) s)"
tail -14 $OUT/d/steps.log | cut -c1-150
cd $OUT && tar czf d.tgz d && rm -rf d
