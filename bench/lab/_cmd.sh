set -u
mkdir -p $OUT/r
(MATE_LIBRARY=$PWD/target/s19e/libmate.so timeout 240 python3 -m pytest -q -m gpu tests/python --ignore=tests/python/test_tp_distributed.py -p no:cacheprovider > $OUT/r/suite.log 2>&1; echo "suite rc=$?"); tail -2 $OUT/r/suite.log
cd $OUT && tar czf r.tgz r && rm -rf r
