set -u
# Order (session 59, a short budget: a cut run still returns what it wrote): the A/B (decode.py
# checks every timed call against float64), the matrix tests, the sanitizers, the rest of the suite.
# Session 59: sw2 replaces sw. sw's store warps waited on the slot's empty barrier, whose parity
# aliases two uses back when an item has more than P stages (the slot is reused while they copy
# the previous item): found on the CPU before any run. sw2 (branch swm, md5 7e4988f5) waits on a per-slot
# `staged` barrier instead (bench/lab/s59_store_warps.patch).
# Prepared in session 58 for the next session's first call. sw = main (89b16cc) +
# bench/lab/s58_store_warps.patch: the whole 128-320-token tiles' output leaves shared memory by
# the producer warpgroup's three idle warps (consumers stmatrix into the last slot's x boxes and
# release the slot; the store warps wait on the slot's empty barrier, copy the tile out, fence,
# arrive on the slot's new `stored` barrier; the producer waits for it before refilling a slot
# that held an item's last stage). rel1m = main's library (89b16cc). Built on the CPU machine:
# target/sw (md5 in NOTES), target/rel1m.
# Checks first (the protocol is new): test_gpu_matrix (the rest of the GPU suite after the A/B, so a
# merge of the same code needs no second run; last, as a start costs ~100-160 s of a short budget), then racecheck / synccheck with several
# items a CTA (2 SMs), one-stage items (K = 128) and the 288 / 320-token wide tiles.
# Prediction: the store loop was about half of the epilogue's ~4 % of a consumer warp's time:
# 0.97-0.99x at M = 1024-4096 on the K = 4096 layers (Llama-8B qkv / o / gate_up), ~1.0x at
# K >= 14336; >= 1.02x would mean the store warps' L2 traffic now competes with the x refills.
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/w; T0=$(date +%s)
LL=llama8b.qkv,llama8b.o,llama8b.gate_up,llama8b.down,llama70b.qkv,llama70b.o,llama70b.gate_up,llama70b.down
i=0
for lib in rel1m sw2 sw2 rel1m; do
  i=$((i+1))
  timeout 100 python3 bench/decode.py --library $PWD/target/$lib/libmate.so --arms mate --shapes $LL --m ${MS:-1024,4096} \
    --sustain-ms 300 --json $OUT/w/sw2-pdl1-$lib-$i.json > /dev/null 2> $OUT/w/sw-$i.err
  echo "$lib $i rc $? ($(( $(date +%s) - T0 )) s)"
done
python3 bench/lab/ab_report.py rel1m sw2 "$OUT/w/sw2-pdl1-*.json" 2>&1 | grep -v '^$' | cut -c1-160
MATE_LIBRARY=$PWD/target/sw2/libmate.so timeout 80 python3 -m pytest -q -rf -m gpu tests/python/test_gpu_matrix.py -p no:cacheprovider > $OUT/w/tests.log 2>&1
echo "sw tests rc $? ($(( $(date +%s) - T0 )) s): $(tail -1 $OUT/w/tests.log | cut -c1-120)"; grep -E '^FAILED' $OUT/w/tests.log | head -5 | cut -c1-200
V="mate_bwg_f16_sym_m256_n128_whole_pre@4096@2@0@1024@300 mate_bwg_f16_sym_m128_n128_whole_pre@128@2@0@1024@200 mate_bwg_bf16_zp_m320_n128_whole_pre@1024@3@0@768@650 mate_bwg_f16_sym_m192_n128_whole_pre@4160@132@0@512@400"
bash bench/lab/san.sh sw2 $OUT/w $V
grep -E " err " $OUT/w/san-racecheck.log | head -5
MATE_LIBRARY=$PWD/target/sw2/libmate.so timeout 150 python3 -m pytest -q -rf -m gpu tests/python --ignore=tests/python/test_tp_distributed.py \
  --ignore=tests/python/test_gpu_matrix.py -p no:cacheprovider > $OUT/w/suite.log 2>&1
echo "sw rest of suite rc $? ($(( $(date +%s) - T0 )) s): $(tail -1 $OUT/w/suite.log | cut -c1-120)"; grep -E '^FAILED' $OUT/w/suite.log | head -5 | cut -c1-200
cd $OUT && tar czf w.tgz w && rm -rf w
