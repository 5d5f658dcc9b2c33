set -u
mkdir -p $OUT/r
# session 35 final check: the GPU suite on the final tree (library ws2 = HEAD's Rust/shim), and the
# op-workspace tests on the old library (target/opws3) to show they fail there.
export MATE_LIBRARY=$PWD/target/ws2/libmate.so
timeout 240 python3 -m pytest -q -m gpu tests/python --ignore=tests/python/test_tp_distributed.py -p no:cacheprovider 2>&1 | grep -E "^FAILED|^E  .{0,200}|passed|failed" | head -30
for i in 1 2; do timeout 100 python3 -m pytest -q tests/python/test_op_workspace.py tests/python/test_serving_workspace.py -p no:cacheprovider 2>&1 | tail -1; done
echo "== opws3"
MATE_LIBRARY=$PWD/target/opws3/libmate.so timeout 100 python3 -m pytest -q tests/python/test_op_workspace.py -k grown_during -p no:cacheprovider 2>&1 | grep -E "AssertionError: |CUresult|passed|failed" | cut -c1-250 | head -8
cd $OUT && tar czf r.tgz r && rm -rf r
