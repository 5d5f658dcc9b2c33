set -u
# session 45, device call 6 (last): A/B fin45b (HEAD 4c..., the M = 1 forms) vs m34 (M = 2-4:
# bulk_m2_4_narrow_whole, whole 8 x 32 tiles on 4096 x 14336-like layers; dect on dect's one-wave
# layers over K <= 2048, 2048 x 4096), both contexts, then the GPU suite on m34.
# Predicted (routing sweep, one order, M = 3): 4096 x 14336 0.87-0.88x; 2048 x 4096 0.74x overlap,
# 0.95x plain; M = 2 / 4 unmeasured; controls (Llama-8B o, 8192 x 14336, 4096 x 3072) 1.00x.
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/r
A=fin45b B=m34 TAG=m34 M=2,3,4 SHAPES=4096x14336,2048x14336,2048x4096,llama8b.o,8192x14336,4096x3072 bash bench/lab/ab.sh
python3 bench/lab/ab_report.py fin45b m34 "$OUT/r/m34-pdl1-*.json" "$OUT/r/m34-pdl0-*.json" | tee $OUT/r/report.txt
MATE_LIBRARY=$PWD/target/m34/libmate.so timeout 200 python3 -m pytest -q -rf -m gpu tests/python --ignore=tests/python/test_tp_distributed.py \
  -p no:cacheprovider > $OUT/r/suite.log 2>&1; echo "suite rc $?"; grep -E "^FAILED|passed|failed" $OUT/r/suite.log | tail -8
cd $OUT && tar czf r.tgz r && rm -rf r
