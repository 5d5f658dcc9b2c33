set -u
# (Historical: bench/lab/s53_w256.patch and its test copy were merged in session 54 and removed.)
# Library: git apply bench/lab/s53_w256.patch on main, cargo build --release, cp target/release/libmate.so target/w256/ (carry target/w256).
# Session 53: the 256-feature bwg tiles (lab, target/w256 = main + 8 forced-only variants; routed
# plans unchanged). (a) forced against the routed 128-feature plans in one process, overlap;
# (b) the GPU tests of the n256 variants and session 52's amended tests (the device budget).
# Prediction (NOTES session 53): M = 48 0.80-0.90x, M = 56-64 0.85-0.95x of the routed plan where
# the 256-feature tiles fill the SMs (one CTA each).
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/r
L=$PWD/target/w256/libmate.so
SH=llama8b.qkv,llama8b.gate_up,llama8b.down,llama70b.o,llama70b.down
MATE_PDL=1 timeout 150 python3 bench/decode.py --library $L --arms mate,read --shapes $SH --m 48 --orders 2 \
  --variants mate_bwg_f16_sym_m48_n256_whole,mate_bwg_f16_sym_m48_n256_split,mate_bwg_f16_sym_m48_n256_sk \
  --json $OUT/r/w48.json 2>&1 | grep "M=" | cut -c1-300
MATE_PDL=1 timeout 150 python3 bench/decode.py --library $L --arms mate,read --shapes $SH --m 64 --orders 2 \
  --variants mate_bwg_f16_sym_m64_n256_whole_pre,mate_bwg_f16_sym_m64_n256_split_pre,mate_bwg_f16_sym_m64_n256_sk_pre \
  --json $OUT/r/w64.json 2>&1 | grep "M=" | cut -c1-300
t1=$(date +%s)
MATE_LIBRARY=$L timeout 120 python3 -m pytest -q -rf -m gpu tests/python/test_gpu_matrix.py tests/python/test_split_sliced.py \
  -k "n256 or m40 or refuses or sliced" -p no:cacheprovider > $OUT/r/suite.log 2>&1
echo "tests rc $? ($(( $(date +%s) - t1 )) s)"; tail -1 $OUT/r/suite.log | cut -c1-200; grep -E '^FAILED' $OUT/r/suite.log | head -20 | cut -c1-250
cd $OUT && tar czf r.tgz r && rm -rf r
