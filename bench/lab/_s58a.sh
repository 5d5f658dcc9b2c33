set -u
# Prepared in session 57 for session 58's first call. target/xin2 = main + 
# bench/lab/s57_xin2.patch (x warps fed by per-slot descriptors, two stages in flight a lane,
# their branch warp-uniform so the producer loop no longer spills); target/xin: session 57's first (1.6-2.4x slower);
# target/nx = main's library. Prediction (both suspects addressed): 0.93-1.02x of nx where ownword
# measured 0.91-0.98x; >= 1.2x would mean the 4-byte copies themselves are the limit.
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/r; T0=$(date +%s)
left() { [ $(( $(date +%s) - T0 )) -lt "$1" ]; }
A=nx B=xin2 SHAPES=llama70b.gate_up,llama70b.o,llama8b.qkv,7168x7168 M=32,48,64 PDLS=1 TAG=xin2 bash bench/lab/ab.sh
python3 bench/lab/ab_report.py nx xin2 "$OUT/r/xin2-pdl1-*.json" 2>&1 | grep -v '^$' | cut -c1-170
left 200 && MATE_LIBRARY=$PWD/target/xin2/libmate.so timeout 150 python3 -m pytest -q -rf -m gpu tests/python/test_gpu_matrix.py \
  tests/python/test_split_sliced.py -p no:cacheprovider > $OUT/r/xin2-tests.log 2>&1
echo "xin2 tests rc $?"; tail -1 $OUT/r/xin2-tests.log | cut -c1-200; grep -E '^FAILED' $OUT/r/xin2-tests.log | head -8 | cut -c1-250
cd $OUT && tar czf r-a.tgz r && rm -rf r
