set -u
# session 43, device call 8: target/fin2 (the M = 5-8 rule kept off Llama-8B qkv / down after call
# 7's step at M = 8): the routing / workspace GPU tests, then the steps at M = 8, main / fin2 A B B A.
t0=$(date +%s)
mkdir -p $OUT/r
MATE_LIBRARY=$PWD/target/fin2/libmate.so timeout 120 python3 -m pytest -q -m gpu tests/python/test_op_workspace.py tests/python/test_workspace_shared.py \
  tests/python/test_launch_log.py tests/python/test_pdl_chain.py -p no:cacheprovider 2>&1 | tail -1
i=0
for lib in main fin2 fin2 main; do
  i=$((i+1))
  timeout 60 python3 bench/decode_step.py --library $PWD/target/$lib/libmate.so --models llama8b,qwen1.5b --m 8 --rounds 3 \
    --json $OUT/r/step8-$lib-$i.json > $OUT/r/step8-$lib-$i.log 2>&1; echo "$lib $i rc $? ($(( $(date +%s) - t0 )) s)"
  grep -E "M=  8 step" $OUT/r/step8-$lib-$i.log | cut -c1-110
done
cd $OUT && tar czf r.tgz r && rm -rf r
