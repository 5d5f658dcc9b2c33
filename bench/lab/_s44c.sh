set -u
# session 44, device call 3: the widened launch-context rules (target/new) against HEAD 1a41b19
# (target/ctx): GPU suite on new; libraries A B B A in both contexts on the moved layers
# (m58: plain M = 5-8 whole 8 x 32 on dect's one-wave layers; n112: plain whole 112-feature tiles
# at M = 4-16; deep: 8 x 32 split tiles at M = 2-4 on 18944 x 3584); Llama-8B step at M = 8 with
# a torch kernel between the GEMMs (llama8b.o moves) A B B A.
# Predictions (sweep, one order): m58 plain 0.91-0.94x, PDL 1.00x; n112 plain 0.86-0.93x, PDL
# 1.00x; deep 0.86-0.93x both; 14336 x 8192 / Llama-8B down / 2048 x 4096 controls 1.00x;
# step --between M = 8 ~0.997x (o is 1 of 4 layers, ~0.7 us of 2090).
mkdir -p $OUT/r
MATE_LIBRARY=$PWD/target/new/libmate.so timeout 200 python3 -m pytest -q -m gpu tests/python --ignore=tests/python/test_tp_distributed.py \
  -p no:cacheprovider 2>&1 | tail -2
A=ctx B=new TAG=m58 M=5,8 SHAPES=4096x3072,3584x3584,llama8b.o,3072x4096,2048x4096 bash bench/lab/ab.sh > /dev/null
A=ctx B=new TAG=n112 M=4,8,12,16 SHAPES=4096x14336,8192x14336 bash bench/lab/ab.sh > /dev/null
A=ctx B=new TAG=deep M=2,3,4 SHAPES=18944x3584,14336x8192,llama8b.down bash bench/lab/ab.sh > /dev/null
for t in m58 n112 deep; do python3 bench/lab/ab_report.py ctx new "$OUT/r/$t-pdl1-*.json" "$OUT/r/$t-pdl0-*.json"; done | tee $OUT/r/report.txt
i=0
for lib in ctx new new ctx; do
  i=$((i+1))
  timeout 90 python3 bench/decode_step.py --library $PWD/target/$lib/libmate.so --models llama8b --m 8 --rounds 3 --between \
    --json $OUT/r/step-$lib-$i.json > $OUT/r/step-$lib-$i.log 2>&1
  echo "$lib $i between: $(grep -E 'M=  8 step' $OUT/r/step-$lib-$i.log | cut -c1-90)"
done
cd $OUT && tar czf r.tgz r && rm -rf r
