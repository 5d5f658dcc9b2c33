set -u
# Session 54 (device scarce): _s54c.sh reordered, the GPU suite on n256b first, then the A/Bs.
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/r; B=n256b; t1=$(date +%s)
MATE_LIBRARY=$PWD/target/$B/libmate.so timeout 200 python3 -m pytest -q -rf -m gpu tests/python --ignore=tests/python/test_tp_distributed.py \
  -p no:cacheprovider > $OUT/r/suite.log 2>&1
echo "$B suite rc $? ($(( $(date +%s) - t1 )) s)"; tail -1 $OUT/r/suite.log | cut -c1-200; grep -E '^FAILED' $OUT/r/suite.log | head -20 | cut -c1-250
A=d40 B=$B SHAPES=llama70b.qkv,llama70b.o,llama70b.gate_up,llama70b.down,llama8b.gate_up M=44,48,56,64 PDLS=1 TAG=ab1 bash bench/lab/ab.sh
python3 bench/lab/ab_report.py d40 $B "$OUT/r/ab1-pdl1-*.json" 2>&1 | grep -v '^$' | cut -c1-170
A=d40 B=$B SHAPES=7168x7168,8192x6144,5120x13824,3584x18944,3072x13824 M=44,56,64 PDLS=1 TAG=ab2 bash bench/lab/ab.sh
python3 bench/lab/ab_report.py d40 $B "$OUT/r/ab2-pdl1-*.json" 2>&1 | grep -v '^$' | cut -c1-170
A=d40 B=$B SHAPES=llama70b.qkv,llama70b.o,llama8b.gate_up M=48,64 PDLS=1 TAG=bz EXTRA="--dtype bfloat16 --zp" bash bench/lab/ab.sh
python3 bench/lab/ab_report.py d40 $B "$OUT/r/bz-pdl1-*.json" 2>&1 | grep -v '^$' | cut -c1-170
cd $OUT && tar czf r.tgz r && rm -rf r
