set -u
mkdir -p $OUT/r
# session 36: Llama-70B qkv at M = 9-16 on bwg (target/r916) against bulk (target/dtile), libraries A B B A, both orders; GPU suite on r916
for lib in dtile r916 r916 dtile; do
  echo "== $lib"
  timeout 100 python3 bench/decode.py --library $PWD/target/$lib/libmate.so --arms mate,read --shapes llama70b.qkv --m 9,12,16 --orders 2 --json $OUT/r/l70qkv-$lib-$RANDOM.json 2>&1 | grep -E "^llama" | cut -c1-200
done
echo "== suite (r916)"
MATE_LIBRARY=$PWD/target/r916/libmate.so timeout 200 python3 -m pytest -q -m gpu tests/python --ignore=tests/python/test_tp_distributed.py -p no:cacheprovider -x 2>&1 | tail -2
cd $OUT && tar czf r.tgz r && rm -rf r
