set -u
mkdir -p $OUT/r
# session 34: bulk's one-token even split with flagged words (zero-at-rest region after the
# tickets; workspace head 1 MiB) and a relaxed ticket: target/words (the last arriver reads the
# words after the ticket) and target/spec (every part reads the other parts' words with its ticket
# in flight; the last re-reads only unset words), against main's kernels (target/fix).
# $1 = calls: the GPU suite on spec, per call A B C C B A at M = 1; else steps A B C C B A at M = 1.
if [ "$1" = calls ]; then
MATE_LIBRARY=$PWD/target/spec/libmate.so timeout 150 python3 -m pytest -q -m gpu tests/python --ignore=tests/python/test_tp_distributed.py -p no:cacheprovider 2>&1 | tail -2
S=llama8b.qkv,llama8b.o,llama8b.down,llama70b.qkv,llama70b.o,llama70b.down,qwen1.5b.down
for L in fix words spec spec words fix; do
timeout 90 python3 bench/decode.py --library $PWD/target/$L/libmate.so --arms mate --shapes $S --m 1 --json $OUT/r/call-$L-$RANDOM.json > $OUT/r/call-$L-$RANDOM.log 2>&1; echo "call $L rc=$?"
done
else
for L in fix words spec spec words fix; do
timeout 90 python3 bench/decode_step.py --library $PWD/target/$L/libmate.so --models llama8b,qwen1.5b --m 1 --rounds 9 --json $OUT/r/step-$L-$RANDOM.json > $OUT/r/step-$L-$RANDOM.log 2>&1; echo "step $L rc=$?"
done
grep -h "M=" $OUT/r/step-*.log | cut -c1-150
fi
cd $OUT && tar czf r.tgz r && rm -rf r
