set -u
# session 58, last call: rel1 as merged (target/rel1m: the weights' empty barrier removed, three
# barriers a stage) - the GPU suite, the sanitizers on wrapping rings, then the decode A/B against
# nx (main before it) as the claim's JSON. Prediction: as the lab rel1 (0.965-0.995x decode).
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/r; T0=$(date +%s)
MATE_LIBRARY=$PWD/target/rel1m/libmate.so timeout 200 python3 -m pytest -q -rf -m gpu tests/python \
  --ignore=tests/python/test_tp_distributed.py -p no:cacheprovider > $OUT/r/suite.log 2>&1
echo "suite rc $? ($(( $(date +%s) - T0 )) s): $(tail -1 $OUT/r/suite.log | cut -c1-200)"
grep -E "^FAILED|^ERROR" $OUT/r/suite.log | head -20 | cut -c1-250
V="mate_bwg_f16_sym_m256_n128_whole_pre@4096 mate_bwg_f16_sym_m128_n128_split_pre@4160@7@3@128@200 mate_bwg_f16_sym_m32_n128_split@4096 mate_bwg_bf16_zp_m64_n128_split_pre@4096@132@5@1024@50 mate_bwg_f16_sym_m48_n256_whole@4096@132@0@512@48 mate_bwg_f16_sym_m16_n128_split@8960@132@17@1536@16"
for tool in racecheck synccheck; do
  MATE_LIBRARY=$PWD/target/rel1m/libmate.so PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 150 compute-sanitizer --tool $tool \
    python3 bench/lab/racecheck_wrap.py $V > $OUT/r/san-$tool.log 2>&1
  echo "$tool rc $? ($(( $(date +%s) - T0 )) s): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|hazard' $OUT/r/san-$tool.log | tail -2 | tr '\n' ' ')"
done
A=nx B=rel1m SHAPES=llama8b.gate_up,llama70b.o,llama8b.qkv,llama70b.down,7168x7168,qwen1.5b.down M=16,48,64 PDLS=1 TAG=rel bash bench/lab/ab.sh
python3 bench/lab/ab_report.py nx rel1m "$OUT/r/rel-pdl1-*.json" 2>&1 | grep -v '^$' | cut -c1-160
cd $OUT && tar czf r.tgz r && rm -rf r
