set -u
mkdir -p $OUT/r
(MATE_LIBRARY=$PWD/target/fin4/libmate.so timeout 150 python3 -m pytest -q -m gpu tests/python --ignore=tests/python/test_tp_distributed.py -p no:cacheprovider -x > $OUT/r/suite_fin4.log 2>&1; echo "suite fin4 rc=$?"); tail -1 $OUT/r/suite_fin4.log
S=llama8b.o,llama8b.down,llama70b.o,llama8b.qkv
for r in 1 2; do
  libs="fin3 fin4"; [ $r = 2 ] && libs="fin4 fin3"
  for L in $libs; do
    timeout 60 python3 bench/decode.py --library target/$L/libmate.so --arms mate --shapes $S --m 9,12,16 --json $OUT/r/m916_${L}_$r.json > $OUT/r/m916_${L}_$r.log 2>&1; echo "ab $L $r rc=$?"
  done
done
timeout 60 python3 bench/decode_step.py --library target/fin4/libmate.so --models llama8b --m 16 --rounds 3 --json $OUT/r/step16_fin4.json > $OUT/r/step16_fin4.log 2>&1; echo "step rc=$?"; grep "step us" $OUT/r/step16_fin4.log | cut -c1-140
cd $OUT && tar czf r.tgz r && rm -rf r
