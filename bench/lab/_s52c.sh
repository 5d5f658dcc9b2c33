set -u
# Session 52 call 2: the 40-token exact tile in stages of four chunks x 3 (three scale rows a stage:
# groups >= 128), lib target/d40, against main (x48 from target/pack). Prediction (NOTES session 52):
# M = 33-40 0.75-0.85x on the Llama layers (the 32-token tile's stage structure), forced at M = 32
# within 1.05x of the 32-token tile (it was 1.33-1.38x).
tar xzf target/pack/libs.tgz target/x48
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/r; t0=$(date +%s)
A=x48 B=d40 SHAPES=llama8b.qkv,llama8b.gate_up,llama8b.down,llama70b.qkv,llama70b.o,llama70b.gate_up,llama70b.down,qwen1.5b.down \
  M=33,40 PDLS=1 TAG=d40 bash bench/lab/ab.sh
python3 bench/lab/ab_report.py x48 d40 "$OUT/r/d40-pdl1-*.json" 2>&1 | grep -v '^$' | cut -c1-150
A=x48 B=d40 SHAPES=llama8b.gate_up,llama70b.down M=40 PDLS=1 TAG=zp EXTRA="--dtype bfloat16 --zp" bash bench/lab/ab.sh
python3 bench/lab/ab_report.py x48 d40 "$OUT/r/zp-pdl1-*.json" 2>&1 | grep -v '^$' | cut -c1-150
MATE_PDL=1 timeout 60 python3 bench/decode.py --library $PWD/target/d40/libmate.so --arms mate,read --shapes llama8b.gate_up,llama70b.down \
  --m 32 --orders 2 --variants mate_bwg_f16_sym_m32_n128_whole,mate_bwg_f16_sym_m40_n128_whole,mate_bwg_f16_sym_m32_n128_split,mate_bwg_f16_sym_m40_n128_split \
  --json $OUT/r/forced32.json 2>&1 | grep "M=" | grep -v "read " | cut -c1-300
# the stream-K bound at 7168 x 7168 (4-chunk stages: parts 7 stages deep, under the 8 of the rule)
MATE_PDL=1 timeout 60 python3 bench/decode.py --library $PWD/target/d40/libmate.so --arms mate,read --shapes 7168x7168,8192x6144 \
  --m 33,40 --orders 2 --variants mate_bwg_f16_sym_m40_n128_sk,mate_bwg_f16_sym_m40_n128_split \
  --json $OUT/r/sk7168.json 2>&1 | grep "M=" | grep -v "read " | cut -c1-300
t1=$(date +%s)
MATE_LIBRARY=$PWD/target/d40/libmate.so timeout 200 python3 -m pytest -q -rf -m gpu tests/python --ignore=tests/python/test_tp_distributed.py \
  -p no:cacheprovider > $OUT/r/suite.log 2>&1
echo "suite rc $? ($(( $(date +%s) - t1 )) s)"; tail -1 $OUT/r/suite.log | cut -c1-200; grep -E '^FAILED' $OUT/r/suite.log | head -20 | cut -c1-250
cd $OUT && tar czf r.tgz r && rm -rf r
