set -u
# session 50 call 2: the GPU suite on c50 (branch s50-t4056 = the 40 / 56-token tiles routed, plus
# stream-K instead of deep even splits for the 40-56-token tiles where it leaves the busiest CTA
# <= 92 % of the split's stages); t4056b (the branch without that rule) against main49 with plain
# launches and in bf16 zp; c50 against t4056b in both contexts. Predictions: t4056b plain as with
# overlap (0.91-0.98x at M = 33-40 / 49-56); c50 0.92-0.99x on the moved M = 48 plans, 28672 x 2560
# and 8192 x 6144 unchanged (they keep the even split at 92 %).
tar xzf target/pack/libs.tgz
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/r
t0=$(date +%s)
MATE_LIBRARY=$PWD/target/c50/libmate.so timeout 200 python3 -m pytest -q -rf -m gpu tests/python \
  --ignore=tests/python/test_tp_distributed.py -p no:cacheprovider > $OUT/r/suite.log 2>&1
echo "suite rc $? ($(( $(date +%s) - t0 )) s)"; tail -4 $OUT/r/suite.log | cut -c1-200; grep -E '^FAILED' $OUT/r/suite.log | head -20 | cut -c1-250
A=t4056b B=c50 SHAPES=llama70b.qkv,8192x6144,7168x7168,14336x5120,5120x14336,28672x2560,4096x7168 \
  M=40,48,56 TAG=c50 bash bench/lab/ab.sh
python3 bench/lab/ab_report.py t4056b c50 "$OUT/r/c50-pdl1-*.json" "$OUT/r/c50-pdl0-*.json" 2>&1 | grep -v '^$' | cut -c1-150
A=main49 B=t4056b SHAPES=llama8b.qkv,llama8b.gate_up,llama8b.down,llama70b.qkv,llama70b.o,llama70b.gate_up,llama70b.down,qwen1.5b.down \
  M=33,40,49,56 TAG=t4056 PDLS=0 bash bench/lab/ab.sh
python3 bench/lab/ab_report.py main49 t4056b "$OUT/r/t4056-pdl0-*.json" 2>&1 | grep -v '^$' | cut -c1-150
A=main49 B=t4056b SHAPES=llama8b.gate_up,llama8b.down,llama70b.o,qwen1.5b.down M=40,56 TAG=zp PDLS=1 \
  EXTRA="--dtype bfloat16 --zp" bash bench/lab/ab.sh
python3 bench/lab/ab_report.py main49 t4056b "$OUT/r/zp-pdl1-*.json" 2>&1 | grep -v '^$' | cut -c1-150
cd $OUT && tar czf r.tgz r && rm -rf r
