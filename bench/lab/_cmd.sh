set -u
export MATE_COMMIT=arrive-all
R=$PWD/target/release/libmate.so
SYMS="mate_bulk_f16_sym_m1_n32_whole mate_bulk_bf16_zp_m8_n128_whole_pre mate_bwg_f16_sym_m32_n128_whole mate_bwg_bf16_zp_m16_n128_whole mate_bwg_f16_sym_m128_n128_whole mate_bwg_bf16_sym_m256_n128_whole"
mkdir -p $OUT/r
for L in base release; do
  MATE_LIBRARY=$PWD/target/$L/libmate.so PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 200 compute-sanitizer --tool racecheck python3 bench/lab/racecheck_wrap.py $SYMS > $OUT/r/racecheck-$L.log 2>&1
  echo "== $L rc=$?"; grep -E "err|RACECHECK SUMMARY|Error|error" $OUT/r/racecheck-$L.log | head -12
done
export MATE_LIBRARY=$R
NC="ncu --kernel-name regex:mate_ --launch-skip 2 --launch-count 1 --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section Occupancy --metrics sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed.sum"
timeout 90 $NC python3 bench/profile_one.py 4096 4096 128 > $OUT/r/ncu-bwg-8bo-m128.txt 2>&1; echo ncu1 $?
timeout 90 $NC python3 bench/profile_one.py 4096 28672 4096 > $OUT/r/ncu-bwg-8bgu-m4096.txt 2>&1; echo ncu2 $?
timeout 90 $NC python3 bench/profile_one.py 4096 28672 64 > $OUT/r/ncu-wg-8bgu-m64.txt 2>&1; echo ncu3 $?
timeout 90 $NC python3 bench/profile_one.py 4096 28672 32 > $OUT/r/ncu-bwg-8bgu-m32.txt 2>&1; echo ncu4 $?
cd $OUT && tar czf r.tgz r && rm -rf r
