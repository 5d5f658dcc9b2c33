set -u
# Session 54's prepared device work, essential first (not yet run: session 55's starts were all refused).
# Libraries, carry all three: target/n256b = main (598682a); target/sk40 = main +
# bench/lab/s54_sk40_two_chunk.patch; target/m56 = main + bench/lab/s54_m56_n256.patch (git apply,
# cargo build --release, cp target/release/libmate.so target/<name>/). Run with the m56 patch
# applied to the working tree (its test_gpu_matrix.py has the 56-token cases). QUICK=1 stops
# after the two A/Bs.
# Prediction (NOTES session 54): the 56-token tile 0.93-0.97x of the 64-token one at M = 49-56
# on the wide layers (its padded rows 0-15 of 64 fewer; the exact form where the group allows).
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/r; t1=$(date +%s)
# main's library: the 48-token 256-feature parity cases (never run on a GPU: session 54's find)
MATE_LIBRARY=$PWD/target/n256b/libmate.so timeout 100 python3 -m pytest -q -rf -m gpu tests/python/test_gpu_matrix.py \
  -k "parity and _m48_n256_" -p no:cacheprovider > $OUT/r/main-parity.log 2>&1
echo "main m48 n256 parity rc $?"; tail -1 $OUT/r/main-parity.log | cut -c1-200; grep -E '^FAILED' $OUT/r/main-parity.log | head | cut -c1-250
MATE_LIBRARY=$PWD/target/m56/libmate.so timeout 150 python3 -m pytest -q -rf -m gpu tests/python/test_gpu_matrix.py \
  -k "n256" -p no:cacheprovider > $OUT/r/tests.log 2>&1
echo "n256 tests rc $? ($(( $(date +%s) - t1 )) s)"; tail -1 $OUT/r/tests.log | cut -c1-200; grep -E '^FAILED' $OUT/r/tests.log | head -20 | cut -c1-250
A=n256b B=m56 SHAPES=llama70b.qkv,llama70b.o,llama70b.gate_up,llama70b.down,llama8b.gate_up,7168x7168,5120x13824 M=49,52,56 PDLS=1 TAG=ab56 bash bench/lab/ab.sh
python3 bench/lab/ab_report.py n256b m56 "$OUT/r/ab56-pdl1-*.json" 2>&1 | grep -v '^$' | cut -c1-170
# (b) bench/lab/s54_sk40_two_chunk.patch (target/sk40 = main + that patch; it conflicts textually
# with the m56 patch at src/plan/bwg.rs:162, apply one at a time): stream-K on the 40-token exact
# tile where its parts are 8+ two-chunk stages deep. Prediction: 0.95-0.98x at M = 33 / 40 on the
# eight layers it moves (7168 x 7168 0.98x, 8192 x 6144 0.885-0.95x measured forced).
A=n256b B=sk40 SHAPES=7168x7168,8192x6144,4096x10240,4096x8192,14336x3584,5120x8192,8192x4608,8192x5120 M=33,40 PDLS=1 TAG=sk40 bash bench/lab/ab.sh
python3 bench/lab/ab_report.py n256b sk40 "$OUT/r/sk40-pdl1-*.json" 2>&1 | grep -v '^$' | cut -c1-170
# QUICK=1: stop here (what decides the merges, ~4 min)
if [ "${QUICK:-0}" = 1 ]; then cd $OUT && tar czf r.tgz r && rm -rf r; exit 0; fi
# ncu of the 256-feature tiles (main's library), Llama-8B gate_up forced whole tiles (112 of them
# at 256 features, 224 at 128), locked clock: what bounds them (DRAM %, issue, stalls, tensor pipe).
for vm in m48_n256_whole:48 m64_n256_whole_pre:64; do
  v=${vm%%:*}; m=${vm##*:}
  MATE_LIBRARY=$PWD/target/n256b/libmate.so timeout 120 ncu --kernel-name regex:mate_bwg --launch-skip 2 --launch-count 1 \
    --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis --section Occupancy --section MemoryWorkloadAnalysis --section LaunchStats \
    python3 bench/profile_one.py 4096 28672 $m mate_bwg_f16_sym_$v > $OUT/r/ncu-$v.txt 2>&1
  echo "== ncu $v M=$m rc $?"; grep -E "Duration|Elapsed Cycles|DRAM Throughput|Memory Throughput|Compute \(SM\)|Stall|Issued Warp|No Eligible|Active Warps Per|Eligible Warps|Executed Ipc A|Registers Per|Achieved Occ" $OUT/r/ncu-$v.txt | head -30
  MATE_LIBRARY=$PWD/target/n256b/libmate.so timeout 90 ncu --kernel-name regex:mate_bwg --launch-skip 2 --launch-count 1 \
    --metrics "regex:^smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio$,regex:^sm__pipe_tensor.*cycles_active\.avg\.pct_of_peak_sustained_active$,regex:^sm__inst_executed_pipe_.*\.avg\.pct_of_peak_sustained_active$" \
    python3 bench/profile_one.py 4096 28672 $m mate_bwg_f16_sym_$v > $OUT/r/ncum-$v.txt 2>&1; echo "metrics rc $?"
  grep -E "stalled|pipe_tensor|inst_executed_pipe|ERR" $OUT/r/ncum-$v.txt | awk '$NF+0 > 0.05' | sed -e "s/smsp__average_warps_issue_stalled_//" -e "s/_per_issue_active.ratio//" | tr -s " " | head -30
done
timeout 100 ncu --launch-skip 2 --launch-count 1 --section SpeedOfLight python3 bench/lab/read_one.py 4096 28672 48 > $OUT/r/ncu-read.txt 2>&1
echo "== ncu read rc $?"; grep -E "Duration|Elapsed Cycles|DRAM Throughput|Memory Throughput" $OUT/r/ncu-read.txt | head -8
V=mate_bwg_f16_sym_m56_n256_whole,mate_bwg_f16_sym_m56_n256_split,mate_bwg_f16_sym_m56_n256_sk,mate_bwg_f16_sym_m56_n256_whole_pre,mate_bwg_f16_sym_m56_n256_split_pre,mate_bwg_f16_sym_m56_n256_sk_pre
MATE_PDL=1 timeout 150 python3 bench/decode.py --library $PWD/target/m56/libmate.so --arms mate --shapes llama70b.qkv,llama70b.o,llama70b.gate_up,llama70b.down,llama8b.gate_up,7168x7168,5120x13824,3584x18944 \
  --m 52,56 --orders 1 --variants $V --json $OUT/r/f56.json 2>&1 | grep "M=" | grep -v MHz | cut -c1-400
cd $OUT && tar czf r.tgz r && rm -rf r
