set -u
# session 51 call 5, trimmed _s51g.sh for ~260 s of budget: the GPU tests of the 40 / 48-token
# tiles (every variant forced, bwg parity with the exact form's configurations, the sliced twins),
# then main51 / x48 A B B A at M = 48 with overlap. Prediction: M = 48 as M = 40 gave (0.92-0.98x).
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/r; t0=$(date +%s)
MATE_LIBRARY=$PWD/target/x48/libmate.so timeout 100 python3 -m pytest -q -rf -m gpu tests/python/test_gpu_matrix.py tests/python/test_split_sliced.py \
  -k "m40 or m48 or test_sliced_variants_exist" -p no:cacheprovider > $OUT/r/suite.log 2>&1
echo "tests rc $? ($(( $(date +%s) - t0 )) s)"; tail -1 $OUT/r/suite.log | cut -c1-200; grep -E '^FAILED' $OUT/r/suite.log | head -20 | cut -c1-250
A=main51 B=x48 SHAPES=llama8b.qkv,llama8b.gate_up,llama8b.down,llama70b.o,llama70b.gate_up,llama70b.down \
  M=48 PDLS=1 TAG=x48 bash bench/lab/ab.sh
python3 bench/lab/ab_report.py main51 x48 "$OUT/r/x48-pdl1-*.json" 2>&1 | grep -v '^$' | cut -c1-150
cd $OUT && tar czf r.tgz r && rm -rf r
