set -u
# session 58: where the 256-token tile's warps stall at M = 4096 (Llama-8B gate_up, routed whole
# plan), per SASS instruction (pc sampling), clocks left alone: the epilogue (tensor pipe idle
# between tiles) or the chunk loop (ncu _s58c: tensor busy 90 % of the SMs' active cycles
# against cuBLAS' 94.8 %).
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/p; T0=$(date +%s)
MATE_LIBRARY=$PWD/target/nx/libmate.so timeout 200 ncu --clock-control none --kernel-name regex:mate_bwg --launch-skip 2 --launch-count 1 \
  --section SourceCounters --section WarpStateStats --import-source no \
  --metrics sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,sm__cycles_active.avg,sm__pipe_tensor_op_gmma_cycles_active.avg \
  -o $OUT/p/src256 python3 bench/profile_one.py 4096 28672 4096 > $OUT/p/src256.log 2>&1; echo "== ncu src256 rc $? ($(( $(date +%s) - T0 )) s)"
timeout 90 ncu -i $OUT/p/src256.ncu-rep --page source --csv --print-source sass > $OUT/p/src256.csv 2> $OUT/p/src256.err
echo "source page rc $? $(wc -l < $OUT/p/src256.csv) lines"
timeout 60 ncu -i $OUT/p/src256.ncu-rep --page details --csv > $OUT/p/src256-details.csv 2>/dev/null
grep -i "gmma\|cycles_active" $OUT/p/src256-details.csv | cut -c1-250
cd $OUT && tar czf p.tgz p && rm -rf p
