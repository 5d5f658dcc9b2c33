# Session 52 call 3: the GPU tests the 40-token exact tile moved (lib = target/d40, byte-identical to the build merged)
MATE_LIBRARY=$PWD/target/d40/libmate.so timeout 150 python3 -m pytest -q -rf -m gpu tests/python/test_gpu_matrix.py tests/python/test_split_sliced.py \
  -k "m40 or refuses" -p no:cacheprovider 2>&1 | tail -15 | cut -c1-250
