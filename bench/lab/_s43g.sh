set -u
# session 43, device call 7: the two changed GPU tests on target/fin (the sliced-variant count, the
# 32-token parity tests), then the Llama-8B / Qwen2-1.5B steps at M = 8 on main and fin (the M = 5-8
# rule moves Llama-8B qkv / down there), libraries A B B A.
t0=$(date +%s)
mkdir -p $OUT/r
MATE_LIBRARY=$PWD/target/fin/libmate.so timeout 120 python3 -m pytest -q -m gpu tests/python/test_split_sliced.py tests/python/test_gpu_matrix.py \
  -k "sliced or (bwg_variants_parity and _m32_n128_)" -p no:cacheprovider 2>&1 | tail -1
i=0
for lib in main fin fin main; do
  i=$((i+1))
  timeout 100 python3 bench/decode_step.py --library $PWD/target/$lib/libmate.so --models llama8b,qwen1.5b --m 8 --rounds 3 \
    --json $OUT/r/step8-$lib-$i.json > $OUT/r/step8-$lib-$i.log 2>&1; echo "$lib $i rc $? ($(( $(date +%s) - t0 )) s)"
  grep -E "M=  8 step" $OUT/r/step8-$lib-$i.log | cut -c1-110
done
cd $OUT && tar czf r.tgz r && rm -rf r
