set -u
# session 42, device call 7: target/s42c (dect at M = 9-16 where its 32-feature CTAs fill one wave
# over K <= 4096; the 64-token tile keeps its sliced sum where the ring-first rule fires) against
# target/s42b, libraries A B B A per launch context, both arm orders; then the routing GPU tests.
mkdir -p $OUT/r
S=2048x4096,3584x3584,4096x3072,4096x2048,llama8b.o,llama8b.qkv,8192x1536,3584x2560
t0=$(date +%s)
for pdl in 1 0; do
  i=0
  for lib in s42b s42c s42c s42b; do
    i=$((i+1))
    MATE_PDL=$pdl timeout 60 python3 bench/decode.py --library $PWD/target/$lib/libmate.so --arms mate,read \
      --shapes $S --m 9,16,33,64 --orders 2 --json $OUT/r/ab-pdl$pdl-$lib-$i.json > /dev/null 2>$OUT/r/err-$pdl-$i.log
    echo "ab pdl$pdl $lib $i rc $? ($(( $(date +%s) - t0 )) s)"
  done
done
MATE_LIBRARY=$PWD/target/s42c/libmate.so timeout 60 python3 -m pytest -q -m gpu tests/python/test_pdl_chain.py tests/python/test_launch_log.py -p no:cacheprovider 2>&1 | tail -2
echo "($(( $(date +%s) - t0 )) s)"
cd $OUT && tar czf r.tgz r && rm -rf r
