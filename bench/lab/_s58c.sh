set -u
# session 58: where the 256-token tile's time goes at M = 4096 (issue 5's misses are 0.92-0.94x
# cuBLAS at M = 1024-4096 on the H100). Hypothesis: L2 -> SM traffic (x re-read by every
# 128-feature tile: 36 KB a chunk a CTA, ~6.6 TB/s at the tensor pipe's full rate). ncu sections
# for mate (routed plan) and cuBLAS fp16 on Llama-8B gate_up (0.92x) and mate on 8B qkv (0.99x).
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/n; T0=$(date +%s)
S="--section SpeedOfLight --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis --section WarpStateStats --section SchedulerStats"
prof() {  # name, kernel regex, command...
  local n=$1 k=$2; shift 2
  MATE_LIBRARY=$PWD/target/nx/libmate.so timeout 150 ncu $S --kernel-name regex:$k --launch-skip 2 --launch-count 1 \
    -o $OUT/n/$n "$@" > $OUT/n/$n.log 2>&1; echo "== $n rc $? ($(( $(date +%s) - T0 )) s)"
  timeout 60 ncu -i $OUT/n/$n.ncu-rep --page details --csv > $OUT/n/$n.csv 2>/dev/null
  grep -E '"(Duration|Elapsed Cycles|SM Frequency|L2 Cache Throughput|DRAM Throughput|Compute \(SM\) Throughput|L1/TEX Cache Throughput|Memory Throughput|L2 Hit Rate|Issue Slots Busy|Executed Ipc Active|No Eligible|Eligible Warps Per Scheduler|Warp Cycles Per Issued Instruction|Registers Per Thread)"' $OUT/n/$n.csv | awk -F'","' '{print $(NF-2)" | "$(NF-1)" | "$NF}' | cut -c1-120
}
prof mate_gu4096 mate_bwg python3 bench/profile_one.py 4096 28672 4096
prof fp16_gu4096 'nvjet|sm90|gemm|cutlass|xmma' python3 bench/lab/fp16_one.py 4096 28672 4096
prof mate_qkv4096 mate_bwg python3 bench/profile_one.py 4096 6144 4096
cd $OUT && tar czf n.tgz n && rm -rf n
