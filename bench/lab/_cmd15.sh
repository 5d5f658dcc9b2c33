set -u
# session 45, device call 4: A/B main45 (HEAD) vs m1x (bulk_m1_eight's StreamK / Whole forms)
# at M = 1, both contexts. Predicted (session 44's sweep, one order, plain / overlap): Llama-70B
# qkv 0.97 / 0.97x, 27648 x 5120 0.97 / 0.97x, 3584 x 37888 0.93 / 0.97x, 5120 x 55296 0.945 /
# 0.99x; unmeasured reach: 14336 x 6144 (deep, stream-K), 4096 x 10240 (stream-K), 1536 x 37888
# (shallow, whole); controls (Llama-8B down, Llama-70B down: same plans) 0.99-1.01x.
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/r
A=main45 B=m1x TAG=m1x M=1 SHAPES=llama70b.qkv,27648x5120,3584x37888,5120x55296,14336x6144,4096x10240,1536x37888,llama8b.down,llama70b.down \
  bash bench/lab/ab.sh
python3 bench/lab/ab_report.py main45 m1x "$OUT/r/m1x-pdl1-*.json" "$OUT/r/m1x-pdl0-*.json" | tee $OUT/r/report.txt
cd $OUT && tar czf r.tgz r && rm -rf r
