set -u
# session 43, device call 4: the GPU suite on target/s43 (call 3's stopped at its first failure:
# a test whose split layer, Llama-8B qkv at M = 8, is whole now); then _cmd8.sh (session 42's
# 32-token split with the sliced sum, target/sl) with the patch's test change applied here.
t0=$(date +%s)
mkdir -p $OUT/r
MATE_LIBRARY=$PWD/target/s43/libmate.so timeout 240 python3 -m pytest -q -m gpu tests/python --ignore=tests/python/test_tp_distributed.py \
  -p no:cacheprovider 2>&1 | tail -5
echo "suite ($(( $(date +%s) - t0 )) s)"
(git apply bench/lab/s42_m32_split_sl.patch 2>/dev/null || patch -p1 < bench/lab/s42_m32_split_sl.patch) > /dev/null && echo patched
bash bench/lab/_cmd8.sh
echo "total ($(( $(date +%s) - t0 )) s)"
