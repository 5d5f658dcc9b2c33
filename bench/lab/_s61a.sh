set -u
# Session 61. On an H200: issue 5's prefill standing at --sustain-ms 1000, then issue 4's per-call
# standing and decode steps (main's library: target/s61sk, c8a26bd). On an H100: the plans the
# 128-token fix-up rule moved at M = 256 (N = 3072 / 3584; s60m against s61sk), then the prefill
# standing at M = 128 / 256 only. Everything under $OUT goes back as one tarball.
# Trims for a short budget: PREFILL_M=<token counts>, STANDING=0, STEPS=0.
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/h; L=$PWD/target/s61sk/libmate.so; t0=$(date +%s)
LL=llama8b.qkv,llama8b.o,llama8b.gate_up,llama8b.down,llama70b.qkv,llama70b.o,llama70b.gate_up,llama70b.down
prefill() {
  timeout 270 python3 bench/decode.py --library $L --arms mate,fp16 --shapes $LL --m "$1" --orders 2 \
    --sustain-ms 1000 --json $OUT/h/prefill.json > $OUT/h/prefill.log 2>&1; echo "prefill rc $? ($(( $(date +%s) - t0 )) s)"
  grep -E "^\S+ +M *=|fp16" $OUT/h/prefill.log | tail -40 | cut -c1-170
}
if echo "$gpu" | grep -q H200; then
  prefill "${PREFILL_M:-128,256,1024,4096}"
  if [ "${STANDING:-1}" = 1 ]; then
    timeout 150 python3 bench/decode.py --library $L --arms mate,read,fp16 --m 1,16,33,48,64 --orders 2 \
      --json $OUT/h/standing.json > $OUT/h/standing.log 2>&1; echo "standing rc $? ($(( $(date +%s) - t0 )) s)"
  fi
  if [ "${STEPS:-1}" = 1 ]; then
    timeout 150 python3 bench/decode_step.py --library $L --models llama8b,qwen1.5b --m 1,16 --rounds 3 \
      --json $OUT/h/steps.json > $OUT/h/steps.log 2>&1; echo "steps rc $? ($(( $(date +%s) - t0 )) s)"
    tail -14 $OUT/h/steps.log | cut -c1-150
  fi
else
  OUT=$OUT/h A=s60m B=s61sk PDLS=1 TAG=m256 SHAPES=1536x3072,2048x3072,2048x3584,3072x3072,3072x3584,3584x3584,4096x3072 \
    M=256 EXTRA="--arms mate --sustain-ms 300" bash bench/lab/ab.sh
  python3 bench/lab/ab_report.py s60m s61sk "$OUT/h/r/m256-pdl1-*.json" 2>&1 | tail -8
  prefill "${PREFILL_M:-128,256}"
fi
cd $OUT && tar czf h.tgz h && rm -rf h
