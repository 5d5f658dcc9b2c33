set -u
# Session 57, in-kernel k-slot x. target/xin = main + bench/lab/s57_xin.patch: in the 32-64-token bwg
# tiles (the ones with a producer warpgroup, kXIn) the producer warpgroup's three idle warps copy x
# into the stage in k-slot order by 4-byte cp.async (a warp a token row: 128 coalesced bytes, 32
# distinct banks), and the consumer lane takes its own 16 bytes (no pick). No extra launch.
# Predictions: where ownword (the kernel alone) measured 0.91-0.98x, xin 0.93-1.0x (the x warps'
# LSU issue and ptxas's 28-216 bytes of spills in their 24/32-register region cost some of it).
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/r; T0=$(date +%s)
left() { [ $(( $(date +%s) - T0 )) -lt "$1" ]; }
# (a budget of ~330 s: the correctness files that force every variant and the bwg parities, not the whole suite)
MATE_LIBRARY=$PWD/target/xin/libmate.so timeout 110 python3 -m pytest -q -rf -m gpu tests/python/test_gpu_matrix.py \
  tests/python/test_split_sliced.py -p no:cacheprovider > $OUT/r/xin-tests.log 2>&1
echo "xin GPU suite rc $?"; tail -1 $OUT/r/xin-tests.log | cut -c1-200; grep -E '^FAILED' $OUT/r/xin-tests.log | head -8 | cut -c1-250
A=nx B=xin SHAPES=llama70b.qkv,llama70b.gate_up,llama70b.o,llama8b.gate_up,llama8b.qkv,7168x7168 M=32,48,64 PDLS=1 TAG=xin bash bench/lab/ab.sh
python3 bench/lab/ab_report.py nx xin "$OUT/r/xin-pdl1-*.json" 2>&1 | grep -v '^$' | cut -c1-170
left 250 && A=nx B=xin SHAPES=llama70b.gate_up,llama8b.qkv,7168x7168 M=33,56 PDLS=1 TAG=xinb EXTRA="--dtype bfloat16 --zp" bash bench/lab/ab.sh
left 300 && python3 bench/lab/ab_report.py nx xin "$OUT/r/xinb-pdl1-*.json" 2>&1 | grep -v '^$' | cut -c1-170
cd $OUT && tar czf r-x.tgz r && rm -rf r
