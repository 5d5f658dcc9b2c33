set -u
# Library: git apply bench/lab/s53_w256.patch on main, cargo build --release, cp target/release/libmate.so target/w256/ (carry target/w256).
# Session 53, last device minutes: _s53b.sh's timing on three shapes (decode.py checks each arm
# against float64 before timing it), then the forced n256 GPU tests if time is left.
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/r
L=$PWD/target/w256/libmate.so
SH=llama8b.gate_up,llama8b.down,llama70b.down
MATE_PDL=1 timeout 80 python3 bench/decode.py --library $L --arms mate,read --shapes $SH --m 48 --orders 2 \
  --variants mate_bwg_f16_sym_m48_n256_whole,mate_bwg_f16_sym_m48_n256_split,mate_bwg_f16_sym_m48_n256_sk \
  --json $OUT/r/w48.json 2>&1 | grep "M=" | cut -c1-300
MATE_PDL=1 timeout 80 python3 bench/decode.py --library $L --arms mate,read --shapes $SH --m 64 --orders 2 \
  --variants mate_bwg_f16_sym_m64_n256_whole_pre,mate_bwg_f16_sym_m64_n256_split_pre,mate_bwg_f16_sym_m64_n256_sk_pre \
  --json $OUT/r/w64.json 2>&1 | grep "M=" | cut -c1-300
MATE_LIBRARY=$L timeout 60 python3 -m pytest -q -rf -m gpu tests/python/test_gpu_matrix.py -k "n256" -p no:cacheprovider 2>&1 | tail -3 | cut -c1-250
