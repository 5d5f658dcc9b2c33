set -u
# session 51 call 5: the exact form at 40 and 48 tokens (x48 = x40 + 16 exact 48-token variants;
# the 56-token exact form spills, 16-144 bytes of stack, not built). GPU suite on x48, then
# main51 / x48 A B B A at M = 40 / 48 (overlap, plain) and bf16 zp (overlap). Prediction: M = 48
# as M = 40 gave (0.92-0.98x), a little less where the sk variant's 24-40 bytes of stack bite.
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/r; t0=$(date +%s)
MATE_LIBRARY=$PWD/target/x48/libmate.so timeout 150 python3 -m pytest -q -rf -m gpu tests/python \
  --ignore=tests/python/test_tp_distributed.py -p no:cacheprovider > $OUT/r/suite.log 2>&1
echo "suite rc $? ($(( $(date +%s) - t0 )) s)"; tail -1 $OUT/r/suite.log | cut -c1-200; grep -E '^FAILED' $OUT/r/suite.log | head -20 | cut -c1-250
A=main51 B=x48 SHAPES=llama8b.qkv,llama8b.gate_up,llama8b.down,llama70b.qkv,llama70b.o,llama70b.gate_up,llama70b.down,qwen1.5b.down \
  M=40,48 TAG=x48 bash bench/lab/ab.sh
A=main51 B=x48 SHAPES=llama8b.qkv,llama8b.down,llama70b.o,llama70b.down M=40,48 PDLS=1 TAG=zp EXTRA="--dtype bfloat16 --zp" bash bench/lab/ab.sh
for t in x48 zp; do python3 bench/lab/ab_report.py main51 x48 "$OUT/r/$t-pdl1-*.json" "$OUT/r/$t-pdl0-*.json" 2>&1 | grep -v '^$' | cut -c1-150; done
cd $OUT && tar czf r.tgz r && rm -rf r
