set -u
# session 44, device call 2: 5120 x 5120 at M = 4 alone (same plan in both libraries, 1.04-1.09x in
# call 1's multi-shape A/B: allocation layout or real?), then _cmd11.sh's sweep in both contexts
# on HEAD 1a41b19's library (target/ctx).
mkdir -p $OUT/r
for lib in main ctx ctx main; do
  for pdl in 1 0; do
    MATE_PDL=$pdl timeout 60 python3 bench/decode.py --library $PWD/target/$lib/libmate.so --arms mate,read --shapes 5120x5120 --m 4 --orders 2 \
      --json $OUT/r/s5120-$lib-pdl$pdl.json > $OUT/r/s5120.log 2>&1
    python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['rows'][0]; print(sys.argv[2], sys.argv[3], round(r['mate']['median_us'],2), round(r['mate']['min_us'],2), round(r['mate']['max_us'],2))" $OUT/r/s5120-$lib-pdl$pdl.json $lib $pdl
  done
done
cd $OUT && tar czf s5120.tgz r && cd - > /dev/null && rm -rf $OUT/r
bash bench/lab/_cmd11.sh
