set -u
# Session 60, last call: the GPU suite on main's library (target/s60m, clean-clone CI of ce3cac3), then the
# 128-token tile's fix-up A/B (sk2 = main + bench/lab/s60_sk_fixup_m128.patch, against s60m).
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"; mkdir -p $OUT/r
MATE_LIBRARY=$PWD/target/s60m/libmate.so timeout 150 python3 -m pytest -q -rf -m gpu tests/python \
  --ignore=tests/python/test_tp_distributed.py -p no:cacheprovider > $OUT/r/suite.log 2>&1; echo "suite rc $?"; tail -4 $OUT/r/suite.log
A=s60m B=sk2 PDLS=1 TAG=m128 SHAPES=llama8b.qkv,1536x6144,2048x6144,2048x7168,3072x6144,3072x7168,3584x6144,3584x7168,5120x7168,7168x7168 \
  M=128 EXTRA="--arms mate --sustain-ms 300" bash bench/lab/ab.sh
python3 bench/lab/ab_report.py s60m sk2 "$OUT/r/m128-pdl1-*.json" 2>&1 | tail -12
cd $OUT && tar czf r.tgz r && rm -rf r
