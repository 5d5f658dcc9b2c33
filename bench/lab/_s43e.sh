set -u
# session 43, device call 5: why 12 of the 18 32-token parity tests failed on target/sl (call 4)
(git apply bench/lab/s42_m32_split_sl.patch 2>&1 || patch -p1 < bench/lab/s42_m32_split_sl.patch) | tail -3
git diff --stat 2>/dev/null | tail -3; grep -n '"_m32_n128_": 1 if pre else' tests/python/test_gpu_matrix.py
MATE_LIBRARY=$PWD/target/sl/libmate.so timeout 200 python3 -m pytest -q -m gpu tests/python/test_gpu_matrix.py \
  -k "bwg_variants_parity and _m32_n128_" -p no:cacheprovider --tb=short -rf 2>&1 | grep -vE "Warning|warn" | tail -45
