set -u
# session 41, device call 2: the m64-tile A/B (bench/lab/s38_bwg_m64_tile.patch, target/m64) against
# HEAD (target/new) on the 12 benchmark shapes at M = 33-64, libraries A B B A in each launch
# context (MATE_PDL=0, then 1), both arm orders in each run; then sid2's failing concurrency test.
mkdir -p $OUT/r
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
for pdl in 0 1; do
  i=0
  for lib in new m64 m64 new; do
    i=$((i+1)); t0=$(date +%s)
    echo "== $i MATE_PDL=$pdl $lib"
    MATE_PDL=$pdl timeout 100 python3 bench/decode.py --library $PWD/target/$lib/libmate.so --arms mate,read \
      --m 33,40,48,56,64 --orders 2 --json $OUT/r/m64-pdl$pdl-$lib-$i.json 2>&1 | grep -E "^\s*(llama|qwen)" | cut -c1-80
    echo "   ($(( $(date +%s) - t0 )) s)"
  done
done
echo "== sid2 concurrency"
MATE_LIBRARY=$PWD/target/sid2/libmate.so timeout 60 python3 -m pytest -q -m gpu tests/python/test_concurrency.py -p no:cacheprovider --tb=long 2>&1 | grep -vE "^\s*$" | tail -60
cd $OUT && tar czf r.tgz r && rm -rf r
