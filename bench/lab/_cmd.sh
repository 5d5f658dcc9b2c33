set -u
mkdir -p $OUT/r
# session 40: (1) GPU suite on target/new (fe625d0's stream-K rule, never GPU-run as a suite);
# (2) the stream-id patch with the context made current first (target/sid2): the workspace tests
N=$PWD/target/new/libmate.so
echo "== suite (new)"
MATE_LIBRARY=$N timeout 300 python3 -m pytest -q -m gpu tests/python --ignore=tests/python/test_tp_distributed.py -p no:cacheprovider 2>&1 | tail -4
echo "== sid2 (context made current first)"
MATE_LIBRARY=$PWD/target/sid2/libmate.so timeout 150 python3 -m pytest -q -m gpu tests/python/test_op_workspace.py tests/python/test_serving_workspace.py tests/python/test_workspace_shared.py tests/python/test_pdl_chain.py -x --tb=short -p no:cacheprovider 2>&1 | grep -vE "^\s*$" | tail -25
