set -u
mkdir -p $OUT/r
# session 33: part flags in the even splits (kernels/split.cuh): target/flags = bulk's even split
# (M = 1-16 bulk plans), target/flags2 = bulk's and bwg's 16-token one-part-a-CTA even split, against
# the ticket (target/fix = main's kernels with the workspace head). $1 = calls: the GPU suite on both,
# per call A B C C B A at M = 1 / 8 / 16 on the split plans; $1 = steps: Llama-8B / Qwen2-1.5B steps.
if [ "$1" = calls ]; then
for L in flags flags2; do
MATE_LIBRARY=$PWD/target/$L/libmate.so timeout 150 python3 -m pytest -q -m gpu tests/python --ignore=tests/python/test_tp_distributed.py -p no:cacheprovider 2>&1 | tail -1
done
S=llama8b.qkv,llama8b.o,llama8b.down,llama70b.qkv,llama70b.o,llama70b.down,qwen1.5b.down
for L in fix flags flags2 flags2 flags fix; do
timeout 70 python3 bench/decode.py --library $PWD/target/$L/libmate.so --arms mate --shapes $S --m 1,8,16 --json $OUT/r/call-$L-$RANDOM.json > /dev/null 2>&1; echo "call $L rc=$?"
done
else
for L in fix flags2 flags fix flags2 flags; do
timeout 90 python3 bench/decode_step.py --library $PWD/target/$L/libmate.so --models llama8b,qwen1.5b --m 1,16 --rounds 5 --json $OUT/r/step-$L-$RANDOM.json > $OUT/r/step-$L-$RANDOM.log 2>&1; echo "step $L rc=$?"
done
grep -h "M=" $OUT/r/step-*.log | cut -c1-150
fi
cd $OUT && tar czf r.tgz r && rm -rf r
