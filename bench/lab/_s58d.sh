set -u
# session 58: stream-K at M = 1024 / 4096 (issue 5). ncu (_s58c): at M = 4096 on Llama-8B gate_up
# the SMs are active 95 % of the elapsed cycles (cuBLAS 97.7 %): 3584 whole 256-token tiles on
# 132 CTAs take 28 rounds for 27.15 rounds of work; every Llama layer but 70B gate_up sits at
# ~97 % (70B gate_up 98.7 %, the one at 1.0x cuBLAS). The rule takes stream-K only at <= 90 % of
# the busiest CTA's stages. Forced split variant (stream-K: whole rounds but the last, then
# shared stages) against the routed whole tiles. Prediction: 0.97-0.985x at M = 4096 on the seven
# ~97 % layers, ~1.0 on 70B gate_up; at M = 1024 the same where the routed plan is whole.
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/s; L=$PWD/target/nx/libmate.so; t0=$(date +%s)
LL=llama8b.qkv,llama8b.o,llama8b.gate_up,llama8b.down,llama70b.qkv,llama70b.o,llama70b.gate_up,llama70b.down
timeout 400 python3 bench/decode.py --library $L --arms mate,fp16 --variants mate_bwg_f16_sym_m256_n128_split_pre \
  --shapes $LL --m 1024,4096 --orders 2 --sustain-ms 1000 --json $OUT/s/sk.json > $OUT/s/sk.log 2>&1
echo "sk rc $? ($(( $(date +%s) - t0 )) s)"; grep -E "M=" $OUT/s/sk.log | cut -c1-200 | head -40
cd $OUT && tar czf s.tgz s && rm -rf s
