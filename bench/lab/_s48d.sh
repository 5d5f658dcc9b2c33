set -u
# session 48, call 3 (cut to what the device time left allows; _s48c.sh was the full form): the
# GPU suite on target/m48, then libraries A B B A against target/final47 with overlap (MATE_PDL=1)
# on the moved layers at M = 33 / 48 and 56 (control). Prediction: as forced in call 2.
tar xzf target/pack/libs.tgz
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/r
t0=$(date +%s)
MATE_LIBRARY=$PWD/target/m48/libmate.so timeout 150 python3 -m pytest -q -rf -m gpu tests/python \
  --ignore=tests/python/test_tp_distributed.py -p no:cacheprovider > $OUT/r/suite-m48.log 2>&1
echo "suite rc $? ($(( $(date +%s) - t0 )) s): $(tail -1 $OUT/r/suite-m48.log)"
grep -E "^FAILED|^ERROR" $OUT/r/suite-m48.log | head -20
A=final47 B=m48 SHAPES=llama8b.qkv,llama8b.gate_up,llama8b.down,llama70b.o,llama70b.gate_up,qwen1.5b.down \
  M=33,48,56 TAG=rt PDLS=1 bash bench/lab/ab.sh
python3 bench/lab/ab_report.py final47 m48 "$OUT/r/rt-pdl1-*.json" 2>&1 | grep -v '^$' | cut -c1-150
cd $OUT && tar czf r.tgz r && rm -rf r
echo "total $(( $(date +%s) - t0 )) s"
