set -u
# session 45, device call 3: (1) GPU suite on target/fin45 (main + bulk_m1_eight's fill bound +
# bulk_wide_balanced + the context-aware graph tests); (2) A/B m1b vs fin45 on N = 57344 layers
# other than Llama-70B gate_up's K (4096, 14336) and 70B gate_up at M = 2 (the rule's reach beyond
# what call 2 measured; predicted 0.93-0.98x like K = 8192); (3) the H100 standing at M = 1 / 16
# (per call: mate, read; steps: Llama-8B, Qwen2-1.5B).
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/r
L=$PWD/target/fin45/libmate.so
MATE_LIBRARY=$L timeout 200 python3 -m pytest -q -rf -m gpu tests/python --ignore=tests/python/test_tp_distributed.py \
  -p no:cacheprovider > $OUT/r/suite.log 2>&1; echo "suite rc $?"; grep -E "^FAILED|passed|failed" $OUT/r/suite.log | tail -8
A=m1b B=fin45 TAG=reach M=1,2,8,16 SHAPES=4096x57344,14336x57344,llama70b.gate_up PDLS="1 0" bash bench/lab/ab.sh > /dev/null
python3 bench/lab/ab_report.py m1b fin45 "$OUT/r/reach-pdl1-*.json" "$OUT/r/reach-pdl0-*.json" | tee $OUT/r/report.txt
t0=$(date +%s)
timeout 120 python3 bench/decode.py --library $L --arms mate,read --m 1,16 --orders 2 \
  --json $OUT/r/standing.json > $OUT/r/standing.log 2>&1; echo "standing rc $? ($(( $(date +%s) - t0 )) s)"
timeout 150 python3 bench/decode_step.py --library $L --models llama8b,qwen1.5b --m 1,16 --rounds 3 \
  --json $OUT/r/steps.json > $OUT/r/steps.log 2>&1; echo "steps rc $? ($(( $(date +%s) - t0 )) s)"
grep -E "step us" $OUT/r/steps.log | cut -c1-160
cd $OUT && tar czf r.tgz r && rm -rf r
