set -u
# session 45, device call 2: (1) the GPU suite on target/m1b (main with the M = 1 rules and the
# workspace tests moved to layers that split in both contexts; call 1 had 5 failures on the
# unfixed patch, names not kept), failures listed; (2) A/B m1b vs wide (bulk_wide_balanced:
# Llama-70B gate_up whole 112-feature tiles at M = 1-16; the deep 8 x 32 split at M = 5-8:
# 18944 x 3584). Predicted (s44 sweep, one order): 70B gate_up 0.94-0.97x at M = 1, ~0.97x at
# M = 6, 0.89-0.96x at M = 12, M = 16 unclear (1.09x / 0.96x); 18944 x 3584 M = 6 0.88-0.92x.
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/r
MATE_LIBRARY=$PWD/target/m1b/libmate.so timeout 200 python3 -m pytest -q -rf -m gpu tests/python --ignore=tests/python/test_tp_distributed.py \
  -p no:cacheprovider > $OUT/r/suite.log 2>&1; echo "suite rc $?"; grep -E "^FAILED|passed|failed" $OUT/r/suite.log | tail -8
A=m1b B=wide TAG=wide M=1,4,6,8,12,16 SHAPES=llama70b.gate_up,18944x3584 bash bench/lab/ab.sh > /dev/null
python3 bench/lab/ab_report.py m1b wide "$OUT/r/wide-pdl1-*.json" "$OUT/r/wide-pdl0-*.json" | tee $OUT/r/report.txt
cd $OUT && tar czf r.tgz r && rm -rf r
