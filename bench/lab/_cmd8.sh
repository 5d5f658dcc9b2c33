set -u
# Prepared in session 42, not run (no device time left): bench/lab/s42_m32_split_sl.patch, the
# 32-token plain split tile with the sliced sum (`_split_sl`, split = 4, post-scale), which the
# planner then picks where bwg_sliced holds and the ring-first rule does not: deep narrow layers
# at M = 17-32 (9-33 parts of 16 KB; TP-sharded down projections). Build main (target/main) and
# main + the patch (target/sl) here, carry both; then on the GPU machine:
#   bash bench/lab/_cmd8.sh   (~4 min)
# Prediction (session 21's sliced sum at 17 parts: 0.88-0.91x): 0.88-0.95x on the moved shapes,
# controls (Qwen2-1.5B down: ring_sl; Llama-8B o: 8 parts, not sliced) 1.00x.
mkdir -p $OUT/r
MATE_LIBRARY=$PWD/target/sl/libmate.so timeout 200 python3 -m pytest -q -m gpu tests/python/test_gpu_matrix.py \
  -k "bwg_variants_parity and _m32_n128_" -p no:cacheprovider 2>&1 | tail -2
for a in mate_bwg_f16_sym_m32_n128_split_sl@4096@132@16@2048@24 mate_bwg_bf16_zp_m32_n128_split_sl@4160@132@9@2048@32; do
  MATE_LIBRARY=$PWD/target/sl/libmate.so PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 120 compute-sanitizer --tool racecheck \
    python3 bench/lab/racecheck_wrap.py $a 2>&1 | grep -E "RACECHECK SUMMARY|err " | head -2
done
A=main B=sl TAG=sl M=17,24,32 SHAPES=14336x2048,28672x1024,28672x2048,18944x1536,8960x3072,27648x2560,7168x3584,qwen1.5b.down,llama8b.o \
  bash bench/lab/ab.sh
python3 bench/lab/ab_report.py main sl "$OUT/r/sl-pdl1-*.json" "$OUT/r/sl-pdl0-*.json" | tee $OUT/r/report.txt
cd $OUT && tar czf r.tgz r && rm -rf r
