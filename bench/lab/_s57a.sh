set -u
# Session 57, first call. target/xslot = main + bench/lab/s57_xslot.patch built with
# MATE_KERNEL_FLAGS=-DMATE_BWG_LAB_OWNWORD: every bwg plan gathers x into mma.sync's k-slot order
# (kernels/gather.cuh, one more launch a call) and a consumer lane takes its own 16 bytes (one
# LDS.128 a chunk, no pick). Checked results (decode.py's float64 check).
# Predictions: Llama-70B layers at M = 48 / 64 0.88-0.95x end to end; Llama-8B layers 0.95-1.03x
# (the extra launch ~1-2 us against 10 % of 5-15 us); M = 16 / 32 0.93-1.0x.
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/r
MATE_LIBRARY=$PWD/target/xslot/libmate.so timeout 150 python3 -m pytest -q -rf -m gpu tests/python/test_gpu_matrix.py \
  tests/python/test_split_sliced.py tests/python/test_split_paired.py -x -p no:cacheprovider > $OUT/r/xslot-tests.log 2>&1
echo "xslot tests rc $?"; tail -1 $OUT/r/xslot-tests.log | cut -c1-200; grep -E '^FAILED' $OUT/r/xslot-tests.log | head -5 | cut -c1-250
A=nx B=xslot SHAPES=llama70b.qkv,llama70b.gate_up,llama70b.down,llama70b.o,llama8b.gate_up,llama8b.qkv,7168x7168 M=16,32,48,64 PDLS=1 TAG=xslot bash bench/lab/ab.sh
python3 bench/lab/ab_report.py nx xslot "$OUT/r/xslot-pdl1-*.json" 2>&1 | grep -v '^$' | cut -c1-170
# the slot-order gather launched programmatically (lab env MATE_LAB_GATHER_PDL; nx ignores it)
MATE_LAB_GATHER_PDL=1 A=nx B=xslot SHAPES=llama70b.gate_up,llama70b.o,llama8b.qkv,7168x7168 M=16,48,64 PDLS=1 TAG=xslotp bash bench/lab/ab.sh
python3 bench/lab/ab_report.py nx xslot "$OUT/r/xslotp-pdl1-*.json" 2>&1 | grep -v '^$' | cut -c1-170
cd $OUT && tar czf r-a.tgz r && rm -rf r
