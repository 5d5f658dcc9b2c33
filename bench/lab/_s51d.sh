set -u
# session 51 call 2: the 24-token tile (m24) against fin50 in the other configurations, with overlap
# (bf16 with zero points; group 32, the pre-scaled tile; act order), M = 20 / 24, A B B A; then the
# issue-4 standing with m24 (mate / read / fp16, Llama + Qwen shapes, M = 1 / 16 / 24 / 32 / 40 / 56 / 64)
# and the Llama-8B / Qwen2-1.5B steps at M = 1 / 16 / 24 (m24). Prediction: 0.94-0.98x as fp16 sym.
tar xzf target/pack/libs.tgz
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
S=llama8b.qkv,llama8b.down,llama70b.o,qwen1.5b.down
A=fin50 B=m24 SHAPES=$S M=20,24 PDLS=1 TAG=zp EXTRA="--dtype bfloat16 --zp" bash bench/lab/ab.sh
A=fin50 B=m24 SHAPES=$S M=20,24 PDLS=1 TAG=g32 EXTRA="--group 32" bash bench/lab/ab.sh
A=fin50 B=m24 SHAPES=$S M=24 PDLS=1 TAG=act EXTRA="--act" bash bench/lab/ab.sh
for t in zp g32 act; do python3 bench/lab/ab_report.py fin50 m24 "$OUT/r/$t-pdl1-*.json" 2>&1 | grep -v '^$' | cut -c1-150; done
mkdir -p $OUT/h; t0=$(date +%s)
L=$PWD/target/m24/libmate.so
timeout 150 python3 bench/decode.py --library $L --arms mate,read,fp16 --m 1,16,24,32,40,56,64 --orders 2 \
  --json $OUT/h/standing.json > $OUT/h/standing.log 2>&1; echo "standing rc $? ($(( $(date +%s) - t0 )) s)"
timeout 100 python3 bench/decode_step.py --library $L --models llama8b,qwen1.5b --m 1,16,24 --rounds 3 \
  --json $OUT/h/steps.json > $OUT/h/steps.log 2>&1; echo "steps rc $? ($(( $(date +%s) - t0 )) s)"
tail -8 $OUT/h/steps.log | cut -c1-200
cd $OUT && tar czf r.tgz r h && rm -rf r h
