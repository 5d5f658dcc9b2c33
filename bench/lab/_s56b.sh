set -u
# Session 56, second call. target/nx = 58b4d7b's library; target/words = nx's sources (branch
# lab-lds32) with MATE_KERNEL_FLAGS=-DMATE_BWG_LAB_WORDS (the 256-feature decode tiles load a lane's
# two words with two LDS.32 instead of LDS.128 + two SEL: 8 instead of 12 instructions a chunk for
# the word pick; pc sampling put 20 % of the 48-token tile's samples on those SELs, waiting for
# the LDS); target/nodeq = nx's with -DMATE_BWG_LAB_NODEQ (wrong results, timed unchecked).
# Predictions: words 0.97-0.99x at M = 48-64; nodeq 0.75-0.85x if the consumer's issue binds.
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/r; t1=$(date +%s)
MATE_LIBRARY=$PWD/target/words/libmate.so timeout 60 python3 -m pytest -q -rf -m gpu tests/python/test_gpu_matrix.py \
  -k "n256" -p no:cacheprovider > $OUT/r/words-tests.log 2>&1
echo "words n256 tests rc $?"; tail -1 $OUT/r/words-tests.log | cut -c1-200; grep -E '^FAILED' $OUT/r/words-tests.log | head -5 | cut -c1-250
N256=llama70b.qkv,llama70b.gate_up,llama70b.down,llama8b.gate_up,7168x7168,3584x18944
A=nx B=words SHAPES=$N256 M=48,56,64 PDLS=1 TAG=words bash bench/lab/ab.sh
python3 bench/lab/ab_report.py nx words "$OUT/r/words-pdl1-*.json" 2>&1 | grep -v '^$' | cut -c1-170
i=0
for lib in nx nodeq nodeq nx; do
  i=$((i+1))
  MATE_PDL=1 timeout 120 python3 bench/lab/unchecked.py --library "$PWD/target/$lib/libmate.so" --arms mate,read \
    --shapes "$N256" --m 48,64 --orders 2 --json "$OUT/r/nodeq-pdl1-$lib-$i.json" > /dev/null 2> "$OUT/r/nodeq-$i.err"
  echo "nodeq $lib $i rc $? ($(( $(date +%s) - t1 )) s)"
done
python3 bench/lab/ab_report.py nx nodeq "$OUT/r/nodeq-pdl1-*.json" 2>&1 | grep -v '^$' | cut -c1-170
# the whole GPU suite on words last (its change reaches only the 256-feature decode tiles)
MATE_LIBRARY=$PWD/target/words/libmate.so timeout 150 python3 -m pytest -q -rf -m gpu tests/python \
  --ignore=tests/python/test_tp_distributed.py -p no:cacheprovider > $OUT/r/suite-words.log 2>&1
echo "suite words rc $? ($(( $(date +%s) - t1 )) s)"; tail -1 $OUT/r/suite-words.log | cut -c1-200; grep -E '^FAILED' $OUT/r/suite-words.log | head -10 | cut -c1-250
cd $OUT && tar czf r.tgz r && rm -rf r
