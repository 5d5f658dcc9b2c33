set -u
# Session 56, third call (if the budget allows): the exact form (scales folded after the MMA) for
# the 64-token 256-feature tile. target/m64e = nx (58b4d7b) + bench/lab/s56_m64_exact.patch
# (f16 / bf16 x sym / zp x whole / split exact variants; ptxas: 28 bytes of spill stores in the
# f16 sym ones, per stage, not per chunk; no exact stream-K variant: its 380 bytes of spills).
# Prediction (nodeq at 64: the pre-scaled dequantization 7-18 %; at 48 the exact 0-6 %): 0.92-0.97x.
# decode.py's float64 check guards each routed call it times.
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/r
MATE_LIBRARY=$PWD/target/m64e/libmate.so timeout 60 python3 -m pytest -q -rf -m gpu tests/python/test_gpu_matrix.py \
  -k "n256" -p no:cacheprovider > $OUT/r/m64e-tests.log 2>&1
echo "m64e n256 tests rc $?"; tail -1 $OUT/r/m64e-tests.log | cut -c1-200; grep -E '^FAILED' $OUT/r/m64e-tests.log | head -5 | cut -c1-250
A=nx B=m64e SHAPES=llama70b.qkv,llama70b.gate_up,llama70b.down,llama8b.gate_up,7168x7168 M=60,64 PDLS=1 TAG=m64e bash bench/lab/ab.sh
python3 bench/lab/ab_report.py nx m64e "$OUT/r/m64e-pdl1-*.json" 2>&1 | grep -v '^$' | cut -c1-170
cd $OUT && tar czf r-c.tgz r && rm -rf r
