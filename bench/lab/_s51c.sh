set -u
# session 51 trimmed _s51a.sh (overlap only, M = 20 / 24 / 32): for a budget under ~5 min.
# target/pack/libs.tgz with two libraries built in session 50 (if main has moved since a458846's
# kernels and planner, rebuild them):
#   fin50 = main at a458846 (the 40 / 56-token tiles);
#   m24   = fin50 + bench/lab/s50_m24_tile.patch (a 24-token bwg tile, every kind of the 32-token
#           one, wgmma n = 24, at M = 17-24; same stages and plans, except that partials of 12 KB
#           leave some 9-part splits under the sliced sum's 128 KB: 2568 plan lines move at M = 24).
#   (git apply P && cargo build --release && cp target/release/libmate.so target/m24/ && git apply -R P)
#   tar czf target/pack/libs.tgz target/fin50/libmate.so target/m24/libmate.so
# (1) The GPU suite on m24 with the patch's tests (bwg parity at the 24-token tile, M = 17 / 24; 32
#     sliced variants bitwise against their twins); the patch is applied to this copy for the tests
#     only (the library is prebuilt) and reverted after.
# (2) m24 against fin50, A B B A, both contexts, M = 17 / 20 / 24 (moved) and 32 (control).
#     Prediction: 0.93-0.98x where the tile moves (the 40 / 56-token tiles gave 0.90-0.99x; a
#     24-token tile drops a quarter of the tensor rows, as 48 -> 36 would); M = 32 unchanged.
tar xzf target/pack/libs.tgz
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/r
t0=$(date +%s)
git apply bench/lab/s50_m24_tile.patch && echo "patch applied for the tests"
MATE_LIBRARY=$PWD/target/m24/libmate.so timeout 200 python3 -m pytest -q -rf -m gpu tests/python \
  --ignore=tests/python/test_tp_distributed.py -p no:cacheprovider > $OUT/r/suite.log 2>&1
echo "suite rc $? ($(( $(date +%s) - t0 )) s)"; tail -2 $OUT/r/suite.log | cut -c1-200; grep -E '^FAILED' $OUT/r/suite.log | head -20 | cut -c1-250
git apply -R bench/lab/s50_m24_tile.patch
A=fin50 B=m24 SHAPES=llama8b.qkv,llama8b.o,llama8b.gate_up,llama8b.down,llama70b.qkv,llama70b.o,llama70b.gate_up,llama70b.down,qwen1.5b.gate_up,qwen1.5b.down \
  M=20,24,32 PDLS=1 TAG=m24 bash bench/lab/ab.sh
python3 bench/lab/ab_report.py fin50 m24 "$OUT/r/m24-pdl1-*.json" "$OUT/r/m24-pdl0-*.json" 2>&1 | grep -v '^$' | cut -c1-150
cd $OUT && tar czf r.tgz r && rm -rf r
# If m24 wins: merge the patch with its pins (tests/plan.rs bwg_sliced_sum_is_pinned and
# bwg_routing_is_pinned fail on it as built: their M = 17-24 rows name the 32-token tile), the
# bwg_m17_32_tokens doc (LAB now) and README; then the decode steps at M = 24 (_s50e.sh's form).
