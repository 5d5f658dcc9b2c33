set -u
# session 44, device call 4: GPU suite on the final library (target/final44 = f1eae18); the
# Llama-8B step with a torch kernel between the GEMMs (the plain context, as in a model) at
# M = 1 / 4 / 8 / 16, session start (target/main = 7267a61) against final, A B B A; a second
# order of the overlap-context candidates the sweep flagged (MATE_PDL 1: Llama-8B o M = 2,
# 4096 x 14336 M = 4, 3584 x 4608 M = 8).
# Predictions: steps M = 1 1.00x, M = 4 ~0.99x (Llama-8B o whole at M = 2-4 since 1a41b19),
# M = 8 ~0.98x, M = 16 1.00x (no Llama-8B layer moves at 16).
mkdir -p $OUT/r
MATE_LIBRARY=$PWD/target/final44/libmate.so timeout 200 python3 -m pytest -q -m gpu tests/python --ignore=tests/python/test_tp_distributed.py \
  -p no:cacheprovider 2>&1 | tail -2
i=0
for lib in main final44 final44 main; do
  i=$((i+1))
  timeout 100 python3 bench/decode_step.py --library $PWD/target/$lib/libmate.so --models llama8b --m 1,4,8,16 --rounds 3 --between \
    --json $OUT/r/step-$lib-$i.json > $OUT/r/step-$lib-$i.log 2>&1
  echo "$lib $i between:"; grep -E 'step us' $OUT/r/step-$lib-$i.log | cut -c1-100
done
MATE_PDL=1 timeout 100 python3 bench/routing_sweep.py --library $PWD/target/final44/libmate.so --shapes llama8b.o,4096x14336,3584x4608 --m 2,4,8 \
  --json $OUT/r/sweep-pdl1.json > $OUT/r/sweep-pdl1.log 2>&1; echo "sweep rc $?"
grep -E "<|points" $OUT/r/sweep-pdl1.log | cut -c1-160
cd $OUT && tar czf r.tgz r && rm -rf r
