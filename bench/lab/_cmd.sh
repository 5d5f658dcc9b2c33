set -u
# session 34: the shared-workspace serving tests on main's kernels, with the new linear.py and with
# the old one (the outgrown workspace freed: the graph test should fail there), then the GPU suite.
export MATE_LIBRARY=$PWD/target/fix/libmate.so
T=tests/python/test_serving_workspace.py
timeout 200 python3 -m pytest -q $T -p no:cacheprovider 2>&1 | tail -15
cp torch_ops/mate/linear.py /tmp/new_linear.py && cp bench/lab/_old_linear.py torch_ops/mate/linear.py
echo "== old linear.py"; timeout 200 python3 -m pytest -q $T -p no:cacheprovider 2>&1 | grep -E "^E |passed|failed" | head -12
cp /tmp/new_linear.py torch_ops/mate/linear.py
echo "== suite"; timeout 200 python3 -m pytest -q -m gpu tests/python --ignore=tests/python/test_tp_distributed.py -p no:cacheprovider 2>&1 | tail -3
