set -u
# session 45, device call 7: A/B m34 (= main's plans) vs zp (bulk_m1_zp_wide: zero-point layers
# of 2^24-2^25 weights at M = 1 take the one-token 128-feature split, or bulk_whole_tile's width
# where that plan is whole; bulk_wide_balanced with zero points too), bf16 zp g128, both contexts.
# Predicted (sweep, overlap, one order): Llama-8B qkv 0.92x, 7168 x 4096 0.94x, 5120 x 5120 0.83x,
# Qwen2-1.5B gate_up 0.95x (160-feature whole), Llama-70B gate_up 0.95x (M = 1; M = 16 unknown);
# plain unmeasured; controls 2048 x 8192? (moves: 2^24), Llama-8B down (2^25.8: control).
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/r
A=m34 B=zp TAG=zp M=1,16 EXTRA="--dtype bfloat16 --zp" SHAPES=llama8b.qkv,7168x4096,5120x5120,qwen1.5b.gate_up,2048x8192,llama70b.gate_up,llama8b.down bash bench/lab/ab.sh
python3 bench/lab/ab_report.py m34 zp "$OUT/r/zp-pdl1-*.json" "$OUT/r/zp-pdl0-*.json" | tee $OUT/r/report.txt
cd $OUT && tar czf r.tgz r && rm -rf r
