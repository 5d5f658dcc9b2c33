set -u
# Session 54 call: the 256-feature tiles routed at M = 41-64 (target/n256 = main + the s53 patch +
# bwg_wide_features_tile) against main's planner (target/d40), libraries A B B A with overlap;
# the GPU suite on n256; the zero-point split at 48 tokens (the one zp 256-feature form).
# Prediction (NOTES session 54): 0.86-0.95x on the wide Llama-70B / 8B gate_up layers and the
# 7168-18944-feature ones, 3584 x 18944 ~0.75x at M = 41-48.
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/r
A=d40 B=n256 SHAPES=llama70b.qkv,llama70b.o,llama70b.gate_up,llama70b.down,llama8b.gate_up M=41,48,56,64 PDLS=1 TAG=ab1 bash bench/lab/ab.sh
python3 bench/lab/ab_report.py d40 n256 "$OUT/r/ab1-pdl1-*.json" 2>&1 | grep -v '^$' | cut -c1-170
A=d40 B=n256 SHAPES=7168x7168,8192x6144,5120x13824,3584x18944,3072x13824 M=41,48,56,64 PDLS=1 TAG=ab2 bash bench/lab/ab.sh
python3 bench/lab/ab_report.py d40 n256 "$OUT/r/ab2-pdl1-*.json" 2>&1 | grep -v '^$' | cut -c1-170
t1=$(date +%s)
MATE_LIBRARY=$PWD/target/n256/libmate.so timeout 200 python3 -m pytest -q -rf -m gpu tests/python --ignore=tests/python/test_tp_distributed.py \
  -p no:cacheprovider > $OUT/r/suite.log 2>&1
echo "n256 suite rc $? ($(( $(date +%s) - t1 )) s)"; tail -1 $OUT/r/suite.log | cut -c1-200; grep -E '^FAILED' $OUT/r/suite.log | head -20 | cut -c1-250
A=d40 B=n256 SHAPES=llama70b.o,8192x6144,llama70b.down M=44,48 PDLS=1 TAG=zp EXTRA="--zp" bash bench/lab/ab.sh
python3 bench/lab/ab_report.py d40 n256 "$OUT/r/zp-pdl1-*.json" 2>&1 | grep -v '^$' | cut -c1-170
cd $OUT && tar czf r.tgz r && rm -rf r
