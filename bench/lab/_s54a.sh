set -u
# (Historical: bench/lab/s53_w256.patch and its test copy were merged in session 54 and removed.)
# Session 54 call 1: bench/lab/_s53b.sh (n256 forced timing + its tests, with the patch's
# test_gpu_matrix.py swapped in) and then the whole GPU suite on target/d40 with main's tests.
cp tests/python/test_gpu_matrix.py /tmp/gm_main.py
cp bench/lab/s53_w256_test_gpu_matrix.py tests/python/test_gpu_matrix.py
bash bench/lab/_s53b.sh
cp /tmp/gm_main.py tests/python/test_gpu_matrix.py
mv $OUT/r.tgz $OUT/w256.tgz
mkdir -p $OUT/r; t1=$(date +%s)
MATE_LIBRARY=$PWD/target/d40/libmate.so timeout 200 python3 -m pytest -q -rf -m gpu tests/python --ignore=tests/python/test_tp_distributed.py \
  -p no:cacheprovider > $OUT/r/suite.log 2>&1
echo "d40 suite rc $? ($(( $(date +%s) - t1 )) s)"; tail -1 $OUT/r/suite.log | cut -c1-200; grep -E '^FAILED' $OUT/r/suite.log | head -20 | cut -c1-250
cd $OUT && tar czf d40.tgz r && rm -rf r
