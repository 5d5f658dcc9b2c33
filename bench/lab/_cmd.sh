set -u
mkdir -p $OUT/r
# session 32: bulk's even-split sum with every part's load issued at once (library target/batch5: 5-8 parts only)
# against the four-at-a-time loop (target/w16): the GPU suite on batch, per call A B B A at M = 1 / 8
# on the split plans, then the Llama-8B / Qwen2-1.5B steps A B A B
MATE_LIBRARY=$PWD/target/batch5/libmate.so timeout 200 python3 -m pytest -q -m gpu tests/python --ignore=tests/python/test_tp_distributed.py -p no:cacheprovider 2>&1 | tail -2
S=llama8b.qkv,llama8b.o,llama8b.down,llama70b.qkv,llama70b.o,llama70b.down,qwen1.5b.down
for L in w16 batch5 batch5 w16; do
timeout 100 python3 bench/decode.py --library $PWD/target/$L/libmate.so --arms mate --shapes $S --m 1,8 --json $OUT/r/call-$L-$RANDOM.json > /dev/null 2>&1; echo "call $L rc=$?"
done
for L in w16 batch5 w16 batch5; do
timeout 120 python3 bench/decode_step.py --library $PWD/target/$L/libmate.so --models llama8b,qwen1.5b --m 1,16 --rounds 5 --json $OUT/r/step-$L-$RANDOM.json > $OUT/r/step-$L.log 2>&1; echo "step $L rc=$?"
grep "M=" $OUT/r/step-$L.log | cut -c1-150
done
cd $OUT && tar czf r.tgz r && rm -rf r
