set -u
# Session 52 call 1: the wgmma rate against N (bench/lab/wgmma_rate.cu), ncu of the 32- and
# 40-token whole tiles forced at M = 32 (Llama-8B gate_up), then _s52a.sh.
nvcc -std=c++17 -O3 -arch=sm_90a -I kernels bench/lab/wgmma_rate.cu -o /tmp/wgmma_rate && /tmp/wgmma_rate | tee $OUT/wgmma_rate.txt
tar xzf target/pack/libs.tgz
for v in m32_n128_whole m40_n128_whole; do
  MATE_LIBRARY=$PWD/target/x48/libmate.so timeout 100 ncu --kernel-name regex:mate_bwg --launch-skip 2 --launch-count 1 \
    --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis --section Occupancy \
    python3 bench/profile_one.py 4096 28672 32 mate_bwg_f16_sym_$v > $OUT/ncu-$v.txt 2>&1
  echo "== ncu $v rc $?"; grep -E "Duration|Throughput|Stall|Issued Warp|No Eligible|Active Warps Per|Eligible Warps|Pipe|Achieved Occ|Block Limit" $OUT/ncu-$v.txt | head -40
done
bash bench/lab/_s52a.sh
