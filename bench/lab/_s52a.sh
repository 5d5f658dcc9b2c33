set -u
# Prepared in session 51 (device budget spent), not run. ~4 min on an H100. Needs target/pack/libs.tgz:
#   x48 = main 44f19d5 (byte-identical to its build);
#   ch4 = x48 + bench/lab/s51_m40_ch4p2.patch: stages of 4 chunks x 2 at 40 tokens (exact form;
#         2 x 80 KB) instead of 2 x 4, and, the reverse probe, the 12-warp 32-token tiles in stages
#         of 2 chunks x 5 instead of 4 x 3 (chunks_per_stage<TM, P>, mirrored in Rust). Its plan
#         pins in tests/plan.rs fail as built (stage counts move the stream-K choices): lab only.
# Question (NOTES session 51): is the 40-64-token tiles' gap to the 32-token tile (1.33-1.38x at
# the same M) the stage granularity? Prediction if so: ch4's 32-token tile 1.10-1.30x slower at
# M = 32, its 40-token tile 0.80-0.90x at M = 33-40; if neither moves, look at n = 40 itself.
tar xzf target/pack/libs.tgz
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/r; t0=$(date +%s)
MATE_LIBRARY=$PWD/target/ch4/libmate.so timeout 120 python3 -m pytest -q -m gpu tests/python/test_gpu_matrix.py tests/python/test_split_sliced.py \
  -k "m32_n128 or m40_n128" -p no:cacheprovider > $OUT/r/tests.log 2>&1
echo "tests rc $? ($(( $(date +%s) - t0 )) s)"; tail -1 $OUT/r/tests.log | cut -c1-200; grep -E '^FAILED' $OUT/r/tests.log | head | cut -c1-250
W=mate_bwg_f16_sym_m32_n128_whole,mate_bwg_f16_sym_m40_n128_whole
S=mate_bwg_f16_sym_m32_n128_split,mate_bwg_f16_sym_m40_n128_split
for lib in x48 ch4; do
  MATE_PDL=1 timeout 60 python3 bench/decode.py --library $PWD/target/$lib/libmate.so --arms mate,read --shapes llama8b.gate_up,qwen1.5b.gate_up \
    --m 32,40 --orders 2 --variants $W --json $OUT/r/fw-$lib.json 2>&1 | grep "M=" | grep -v "read " | sed "s/^/$lib /" | cut -c1-300
  MATE_PDL=1 timeout 60 python3 bench/decode.py --library $PWD/target/$lib/libmate.so --arms mate,read --shapes llama8b.down,llama70b.down \
    --m 32,40 --orders 2 --variants $S --json $OUT/r/fs-$lib.json 2>&1 | grep "M=" | grep -v "read " | sed "s/^/$lib /" | cut -c1-300
done
A=x48 B=ch4 SHAPES=llama8b.qkv,llama8b.gate_up,llama8b.down,llama70b.qkv,llama70b.o,llama70b.gate_up,llama70b.down \
  M=32,40 PDLS=1 TAG=ch4 bash bench/lab/ab.sh
python3 bench/lab/ab_report.py x48 ch4 "$OUT/r/ch4-pdl1-*.json" 2>&1 | grep -v '^$' | cut -c1-150
# Qwen2-1.5B down at M = 9-16 (2.08x the read at M = 16; its step misses 1.5x by 2 %): the 24-token
# sliced tile forced against the routed 16-token split (NOTES session 51, lead 2)
MATE_PDL=1 timeout 60 python3 bench/decode.py --library $PWD/target/x48/libmate.so --arms mate,read --shapes qwen1.5b.down --m 9,12,16 --orders 2 \
  --variants mate_bwg_f16_sym_m24_n128_split_sl,mate_bwg_f16_sym_m24_n128_split,mate_bwg_f16_sym_m32_n128_split_sl \
  --json $OUT/r/qd.json 2>&1 | grep "M=" | grep -v "read " | cut -c1-300
cd $OUT && tar czf r.tgz r && rm -rf r
