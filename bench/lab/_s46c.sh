set -u
# session 46, device call 4: bwg's 16-token even-split sum with 8 parts' loads in flight
# (target/r8: s46_bwg_staged_sum.patch's out-of-line sum in its register form, MATE_BWG_SUM_REGS=8,
# 16-token tile only) against main46, per call both contexts and the Qwen2-1.5B / Llama-8B steps
# at M = 16 (A B B A); then the split count forced on main46 (is the planner's S right?).
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/r
t0=$(date +%s)
A=main46 B=r8 SHAPES=llama8b.qkv,llama8b.down,llama70b.qkv,llama70b.o,qwen1.5b.down,llama8b.gate_up M=12,16 TAG=r8 bash bench/lab/ab.sh
python3 bench/lab/ab_report.py main46 r8 "$OUT/r/r8-pdl1-*.json" "$OUT/r/r8-pdl0-*.json" 2>&1 | tail -30
i=0
for lib in main46 r8 r8 main46; do
  i=$((i+1))
  timeout 100 python3 bench/decode_step.py --library $PWD/target/$lib/libmate.so --models qwen1.5b,llama8b --m 16 --rounds 3 \
    --json $OUT/r/step-$lib-$i.json > $OUT/r/step-$lib-$i.log 2>&1
  echo "$lib $i: $(grep -E 'step us' $OUT/r/step-$lib-$i.log | cut -c1-90 | tr '\n' '|')"
done
cd $OUT && tar czf r0.tgz r && cd - > /dev/null
for pdl in 1 0; do
  MATE_PDL=$pdl timeout 100 python3 bench/decode.py --library $PWD/target/main46/libmate.so --arms mate,read --shapes qwen1.5b.down \
    --m 16 --orders 2 --variants @6,@8,@11,@13,@22 --json $OUT/r/splits-qwen-pdl$pdl.json > $OUT/r/splits-qwen-pdl$pdl.log 2>&1
  MATE_PDL=$pdl timeout 100 python3 bench/decode.py --library $PWD/target/main46/libmate.so --arms mate,read --shapes llama8b.qkv,llama8b.down \
    --m 16 --orders 2 --variants @3,@4,@6,@8,@10,@12 --json $OUT/r/splits-l8-pdl$pdl.json > $OUT/r/splits-l8-pdl$pdl.log 2>&1
  echo "splits pdl$pdl ($(( $(date +%s) - t0 )) s)"; grep -E "M= *16" $OUT/r/splits-qwen-pdl$pdl.log $OUT/r/splits-l8-pdl$pdl.log | cut -c1-220
done
cd $OUT && tar czf r1.tgz r && cd - > /dev/null
echo "total $(( $(date +%s) - t0 )) s"
