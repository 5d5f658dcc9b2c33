set -u
mkdir -p $OUT/r
B=$PWD/target/base/libmate.so
A1=$PWD/target/alt1/libmate.so
A2=$PWD/target/alt2/libmate.so
S=llama8b.qkv,llama8b.gate_up,llama70b.o,llama70b.gate_up
PH=${PHASE:-1}
# lab (session 30): a second A register set for a stage's chunk 1 (MATE_BWG_LAB_ALT=1 half, =2 early)
if [ "$PH" = 1 ]; then
  for L in $A1 $A2; do n=$(basename $(dirname $L))
    MATE_LIBRARY=$L timeout 200 python3 -m pytest -q -m gpu tests/python --ignore=tests/python/test_tp_distributed.py -p no:cacheprovider -x > $OUT/r/suite_$n.log 2>&1; echo "suite $n rc=$? $(tail -1 $OUT/r/suite_$n.log)"
  done
  ORDER="$B $A1 $A2"
else
  ORDER="$A2 $A1 $B"
fi
for L in $ORDER; do n=$(basename $(dirname $L))
  timeout 130 python3 bench/decode.py --library $L --arms mate,fp16 --shapes $S --m 144,208,256,320,800,4096 --orders 2 --sustain-ms 300 --json $OUT/r/ab_${n}_p$PH.json > $OUT/r/ab_${n}_p$PH.log 2>&1; echo "ab $n rc=$?"; tail -26 $OUT/r/ab_${n}_p$PH.log
done
cd $OUT && tar czf r$PH.tgz r && rm -rf r
