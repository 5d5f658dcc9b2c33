set -u
# session 46, device call 3: bwg's staged even-split sum (target/stg) against main46 (879da19):
# GPU suite on stg, sanitizers on staged plans (two batches, several tiles a CTA), the per-call
# A/B (both contexts), then the Llama-8B / Qwen2-1.5B steps at M = 16 / 32 (A B B A).
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/r
t0=$(date +%s)
MATE_LIBRARY=$PWD/target/stg/libmate.so timeout 200 python3 -m pytest -q -rf -m gpu tests/python \
  --ignore=tests/python/test_tp_distributed.py -p no:cacheprovider > $OUT/r/suite-stg.log 2>&1
echo "suite rc $? ($(( $(date +%s) - t0 )) s): $(tail -1 $OUT/r/suite-stg.log)"
grep -E "^FAILED|^ERROR" $OUT/r/suite-stg.log | head -20
V="mate_bwg_f16_sym_m16_n128_split@8960@132@17@1536@16 mate_bwg_f16_sym_m16_n128_split@8960@8@17@1536@12 mate_bwg_f16_sym_m32_n128_split@8960@132@8@1536@32 mate_bwg_bf16_zp_m64_n128_split_pre@4096@132@5@1024@50"
for tool in synccheck racecheck; do
  MATE_LIBRARY=$PWD/target/stg/libmate.so PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 150 compute-sanitizer --tool $tool \
    python3 bench/lab/racecheck_wrap.py $V > $OUT/r/san-$tool.log 2>&1
  echo "$tool rc $? ($(( $(date +%s) - t0 )) s): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|hazard' $OUT/r/san-$tool.log | tail -2 | tr '\n' ' ')"
done
cd $OUT && tar czf r0.tgz r && cd - > /dev/null
A=main46 B=stg SHAPES=llama8b.qkv,llama8b.down,llama70b.qkv,llama70b.o,llama70b.down,qwen1.5b.down,llama8b.gate_up M=12,16,32,48,64 TAG=stg bash bench/lab/ab.sh
python3 bench/lab/ab_report.py main46 stg "$OUT/r/stg-pdl1-*.json" "$OUT/r/stg-pdl0-*.json" 2>&1 | tail -80
cd $OUT && tar czf r1.tgz r && cd - > /dev/null
echo "total $(( $(date +%s) - t0 )) s"
