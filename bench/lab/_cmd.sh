set -u
mkdir -p $OUT/r
# session 38: (1) GPU suite on target/new (the merged deep-even stream-K rule);
# (2) why the stream-id patch (target/sid) fails the workspace tests: one test's traceback;
# (3) the routing sweep's flagged M = 32-64 points, both orders, with and without PDL (target/new)
N=$PWD/target/new/libmate.so
echo "== suite (new)"
MATE_LIBRARY=$N timeout 240 python3 -m pytest -q -m gpu tests/python --ignore=tests/python/test_tp_distributed.py -p no:cacheprovider 2>&1 | tail -3
echo "== sid2 (context made current first)"
MATE_LIBRARY=$PWD/target/sid2/libmate.so timeout 150 python3 -m pytest -q -m gpu tests/python/test_op_workspace.py tests/python/test_serving_workspace.py tests/python/test_workspace_shared.py tests/python/test_pdl_chain.py -p no:cacheprovider 2>&1 | tail -2
echo "== sid traceback"
MATE_LIBRARY=$PWD/target/sid/libmate.so timeout 60 python3 -m pytest -q -m gpu tests/python/test_op_workspace.py -x --tb=short -p no:cacheprovider 2>&1 | grep -vE "^\s*$" | tail -25
SH=llama8b.qkv,llama8b.o,llama8b.gate_up,qwen1.5b.down,qwen1.5b.gate_up
for pdl in 0 1; do
  echo "== sweep MATE_PDL=$pdl"
  MATE_PDL=$pdl timeout 150 python3 bench/routing_sweep.py --library $N --shapes $SH --m 32,48,64 --orders 2 --json $OUT/r/sweep-pdl$pdl.json 2>&1 | grep -E "M=|points" | cut -c1-170
done
cd $OUT && tar czf r.tgz r && rm -rf r
