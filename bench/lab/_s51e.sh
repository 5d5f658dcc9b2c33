set -u
# session 51 call 3: what makes M = 40 cost ~30 % more than M = 32 (Llama-8B gate_up 28.0 -> 37.9 us)?
# Forced variants at M = 32 / 40 (main51 = main 32b0d42), overlap: the 32-token exact tile (at
# M = 40: two m-tiles), the 32-token pre-scaled one (9 warps, no pairs), the 40 / 48 / 64-token
# pre-scaled ones (2 chunks a stage, 4 stages, pairs).
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/p; L=$PWD/target/main51/libmate.so
W=mate_bwg_f16_sym_m32_n128_whole,mate_bwg_f16_sym_m32_n128_whole_pre,mate_bwg_f16_sym_m40_n128_whole_pre,mate_bwg_f16_sym_m48_n128_whole_pre,mate_bwg_f16_sym_m64_n128_whole_pre
S=mate_bwg_f16_sym_m32_n128_split,mate_bwg_f16_sym_m32_n128_split_pre,mate_bwg_f16_sym_m40_n128_split_pre,mate_bwg_f16_sym_m64_n128_split_pre
MATE_PDL=1 timeout 120 python3 bench/decode.py --library $L --arms mate,read --shapes llama8b.gate_up,qwen1.5b.gate_up,4096x4096 --m 32,40 --orders 2 \
  --variants $W --json $OUT/p/whole.json > $OUT/p/whole.log 2>&1; echo "whole rc $?"; grep "M=" $OUT/p/whole.log | cut -c1-400
MATE_PDL=1 timeout 120 python3 bench/decode.py --library $L --arms mate,read --shapes llama8b.down,llama70b.down,llama8b.qkv --m 32,40 --orders 2 \
  --variants $S --json $OUT/p/split.json > $OUT/p/split.log 2>&1; echo "split rc $?"; grep "M=" $OUT/p/split.log | cut -c1-400
