set -u
# Session 57, first call (replaces _s57a). target/xslot2 = branch xslot2 (bench/lab/s57_xslot2.patch):
# every bwg plan gathers x into k-slot order (kernels/gather.cuh slot_order, one more launch a call;
# act order composed) and a consumer lane takes its own 16 bytes (one LDS.128 a chunk, no pick).
# target/xslot = the lab build of the same (s57_xslot.patch), whose gather launches
# programmatically under MATE_LAB_GATHER_PDL=1.
# Predictions: Llama-70B layers at M = 48 / 64 0.88-0.95x end to end; Llama-8B layers 0.95-1.03x
# (the extra launch ~1-2 us against 10 % of 5-15 us); M = 16 / 32 0.93-1.0x; prefill 0.95-1.02x.
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/r; T0=$(date +%s)
left() { [ $(( $(date +%s) - T0 )) -lt "$1" ]; }  # the remaining steps only while the call has time
MATE_LIBRARY=$PWD/target/xslot2/libmate.so timeout 200 python3 -m pytest -q -rf -m gpu tests/python \
  --ignore=tests/python/test_tp_distributed.py -p no:cacheprovider > $OUT/r/xslot2-tests.log 2>&1
echo "xslot2 GPU suite rc $?"; tail -1 $OUT/r/xslot2-tests.log | cut -c1-200; grep -E '^FAILED' $OUT/r/xslot2-tests.log | head -8 | cut -c1-250
A=nx B=xslot2 SHAPES=llama70b.qkv,llama70b.gate_up,llama70b.down,llama70b.o,llama8b.gate_up,llama8b.qkv,7168x7168 M=16,32,48,64 PDLS=1 TAG=dec bash bench/lab/ab.sh
python3 bench/lab/ab_report.py nx xslot2 "$OUT/r/dec-pdl1-*.json" 2>&1 | grep -v '^$' | cut -c1-170
left 380 && A=nx B=xslot2 SHAPES=llama8b.gate_up,llama8b.qkv,llama70b.o M=128,256,1024 PDLS=1 TAG=pre bash bench/lab/ab.sh
python3 bench/lab/ab_report.py nx xslot2 "$OUT/r/pre-pdl1-*.json" 2>&1 | grep -v '^$' | cut -c1-170
# the slot-order gather launched programmatically (the lab build, MATE_LAB_GATHER_PDL) against xslot2's plain launch
left 420 && MATE_LAB_GATHER_PDL=1 A=xslot2 B=xslot SHAPES=llama70b.gate_up,llama70b.o,llama8b.qkv,7168x7168 M=16,48,64 PDLS=1 TAG=gpdl bash bench/lab/ab.sh
python3 bench/lab/ab_report.py xslot2 xslot "$OUT/r/gpdl-pdl1-*.json" 2>&1 | grep -v '^$' | cut -c1-170
cd $OUT && tar czf r-b.tgz r && rm -rf r
