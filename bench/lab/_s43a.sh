set -u
# session 43, device call 1 (main's library, target/main = 4631fdb): issue 4's standing (per call
# M = 1/16/33/48/64 with read and fp16 arms; steps M = 1/16), issue 5's standing (8 Llama layers,
# M = 128/256/1024/4096, --sustain-ms 1000), then _cmd9.sh's first sweep (serving shapes, M = 1/8/24,
# MATE_PDL = 1) while time is left.
mkdir -p $OUT/r
L=$PWD/target/main/libmate.so
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
t0=$(date +%s)
timeout 130 python3 bench/decode.py --library $L --arms mate,read,fp16 --m 1,16,33,48,64 --orders 2 \
  --json $OUT/r/standing.json > $OUT/r/standing.log 2>&1; echo "standing rc $? ($(( $(date +%s) - t0 )) s)"
timeout 150 python3 bench/decode_step.py --library $L --models llama8b,qwen1.5b --m 1,16 --rounds 3 \
  --json $OUT/r/steps.json > $OUT/r/steps.log 2>&1; echo "steps rc $? ($(( $(date +%s) - t0 )) s)"
tail -14 $OUT/r/steps.log | cut -c1-150
LL=llama8b.qkv,llama8b.o,llama8b.gate_up,llama8b.down,llama70b.qkv,llama70b.o,llama70b.gate_up,llama70b.down
timeout 170 python3 bench/decode.py --library $L --arms mate,fp16 --shapes $LL --m 128,256,1024,4096 --orders 2 \
  --sustain-ms 1000 --json $OUT/r/prefill.json > $OUT/r/prefill.log 2>&1; echo "prefill rc $? ($(( $(date +%s) - t0 )) s)"
S=4096x3072,2048x4096,4096x14336,7168x4096,8192x2560,2048x8192,8192x14336,7168x8192,3584x4608,3584x3584,3584x37888,18944x3584,5120x7168,5120x5120,5120x55296,27648x5120
left=$(( 560 - ($(date +%s) - t0) ))
[ $left -gt 60 ] && MATE_PDL=1 timeout $left python3 bench/routing_sweep.py --library $L --shapes $S --m 1,8,24 \
  --json $OUT/r/sweep-pdl1.json > $OUT/r/sweep-pdl1.log 2>&1; echo "sweep rc $? ($(( $(date +%s) - t0 )) s)"
grep -E "<|points" $OUT/r/sweep-pdl1.log | cut -c1-160
cd $OUT && tar czf r.tgz r && rm -rf r
