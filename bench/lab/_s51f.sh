set -u
# session 51 call 4: the 40-token tile in the exact form (x40: 16 variants pre = 0 beside the
# pre-scaled ones, same 2 chunks a stage x 4 stages, chunk pairs; the planner prefers the exact
# form at group >= 64 as it does for the 16-32-token tiles). Prediction: from call 3 (32-token
# exact against pre-scaled at M = 32: 0.86-0.90x on Llama-8B gate_up / Llama-70B down, 0.99 on
# qkv), 0.88-0.97x at M = 33-40 on the Llama layers.
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/r; t0=$(date +%s)
MATE_LIBRARY=$PWD/target/x40/libmate.so timeout 150 python3 -m pytest -q -rf -m gpu tests/python \
  --ignore=tests/python/test_tp_distributed.py -p no:cacheprovider > $OUT/r/suite.log 2>&1
echo "suite rc $? ($(( $(date +%s) - t0 )) s)"; tail -1 $OUT/r/suite.log | cut -c1-200; grep -E '^FAILED' $OUT/r/suite.log | head -20 | cut -c1-250
L=$PWD/target/x40/libmate.so
W=mate_bwg_f16_sym_m32_n128_whole,mate_bwg_f16_sym_m40_n128_whole,mate_bwg_f16_sym_m40_n128_whole_pre
S=mate_bwg_f16_sym_m32_n128_split,mate_bwg_f16_sym_m40_n128_split,mate_bwg_f16_sym_m40_n128_split_pre
MATE_PDL=1 timeout 60 python3 bench/decode.py --library $L --arms mate,read --shapes llama8b.gate_up,qwen1.5b.gate_up --m 32,40 --orders 2 \
  --variants $W --json $OUT/r/fw.json 2>&1 | grep "M=" | grep -v "read " | cut -c1-300
MATE_PDL=1 timeout 60 python3 bench/decode.py --library $L --arms mate,read --shapes llama8b.down,llama70b.down --m 32,40 --orders 2 \
  --variants $S --json $OUT/r/fs.json 2>&1 | grep "M=" | grep -v "read " | cut -c1-300
A=main51 B=x40 SHAPES=llama8b.qkv,llama8b.o,llama8b.gate_up,llama8b.down,llama70b.qkv,llama70b.o,llama70b.gate_up,llama70b.down,qwen1.5b.down \
  M=33,40 TAG=x40 bash bench/lab/ab.sh
python3 bench/lab/ab_report.py main51 x40 "$OUT/r/x40-pdl1-*.json" "$OUT/r/x40-pdl0-*.json" 2>&1 | grep -v '^$' | cut -c1-150
cd $OUT && tar czf r.tgz r && rm -rf r
