set -u
# session 42, device call 1 (HEAD 1f978e0's library, target/head): issue 4's standing on the H200
# (per call M = 1/16/33/48/64 with read and fp16 arms; steps M = 1/16), the routing sweep at
# M = 33/48/64 with and without PDL (never run at M = 33-48), and Qwen2-1.5B gate_up's 32/64-token
# bwg variants at M = 33-64 (session 41 item 2).
mkdir -p $OUT/r
L=$PWD/target/head/libmate.so
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
t0=$(date +%s)
echo "== standing"
timeout 120 python3 bench/decode.py --library $L --arms mate,read,fp16 --m 1,16,33,48,64 --orders 2 \
  --json $OUT/r/standing.json > $OUT/r/standing.log 2>&1; echo "rc $? ($(( $(date +%s) - t0 )) s)"
for pdl in 1 0; do
  echo "== sweep MATE_PDL=$pdl"
  MATE_PDL=$pdl timeout 200 python3 bench/routing_sweep.py --library $L --m 33,48,64 \
    --json $OUT/r/sweep-pdl$pdl.json > $OUT/r/sweep-pdl$pdl.log 2>&1; echo "rc $? ($(( $(date +%s) - t0 )) s)"
  tail -25 $OUT/r/sweep-pdl$pdl.log | cut -c1-150
  echo "== qwen gate_up variants MATE_PDL=$pdl"
  MATE_PDL=$pdl timeout 80 python3 bench/decode.py --library $L --arms mate,read --shapes qwen1.5b.gate_up \
    --m 33,48,64 --orders 2 --variants mate_bwg_f16_sym_m32_n128_sk,mate_bwg_f16_sym_m32_n128_whole,mate_bwg_f16_sym_m64_n128_whole_pre,mate_bwg_f16_sym_m64_n128_sk_pre \
    --json $OUT/r/qgu-pdl$pdl.json > $OUT/r/qgu-pdl$pdl.log 2>&1; echo "rc $? ($(( $(date +%s) - t0 )) s)"
  grep -E "^\s*qwen" $OUT/r/qgu-pdl$pdl.log | cut -c1-160
done
echo "== steps"
timeout 150 python3 bench/decode_step.py --library $L --models llama8b,qwen1.5b --m 1,16 --rounds 3 \
  --json $OUT/r/steps.json > $OUT/r/steps.log 2>&1; echo "rc $? ($(( $(date +%s) - t0 )) s)"
tail -20 $OUT/r/steps.log | cut -c1-150
grep -E "^\s*(llama|qwen)" $OUT/r/standing.log | cut -c1-150
