set -u
mkdir -p $OUT/r
A=$PWD/target/s26rule2/libmate.so
B=$PWD/target/s26tail/libmate.so
(MATE_LIBRARY=$B timeout 200 python3 -m pytest -q -x -m gpu tests/python --ignore=tests/python/test_tp_distributed.py -p no:cacheprovider > $OUT/r/suite.log 2>&1; echo "suite rc=$?"); tail -1 $OUT/r/suite.log; grep FAILED $OUT/r/suite.log | head -3
for L in $A $B; do n=$(basename $(dirname $L))
python3 bench/decode.py --library $L --arms mate --variants mate_bwg_f16_sym_m128_n128_split_pre --shapes llama8b.o,llama8b.qkv --m 136,160,256,320 --orders 2 --sustain-ms 700 --json $OUT/r/tail_$n.json > $OUT/r/tail_$n.log 2>&1; echo "$n rc=$?"; grep "  mate=\|=.*mate=" $OUT/r/tail_$n.log
done
cd $OUT && tar czf r.tgz r && rm -rf r
