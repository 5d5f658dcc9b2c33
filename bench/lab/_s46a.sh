set -u
# session 46, device call 1: GPU suite on main (879da19: never suite-run after 1a24f8c), then
# _cmd19.sh (the zero-point Llama-8B step judging bench/lab/s45_zp_m1_overlap.patch).
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/r
t0=$(date +%s)
MATE_LIBRARY=$PWD/target/main46/libmate.so timeout 200 python3 -m pytest -q -rf -m gpu tests/python \
  --ignore=tests/python/test_tp_distributed.py -p no:cacheprovider > $OUT/r/suite-main46.log 2>&1
echo "suite rc $? ($(( $(date +%s) - t0 )) s): $(tail -1 $OUT/r/suite-main46.log)"
grep -E "^FAILED|^ERROR" $OUT/r/suite-main46.log | head -20
cd $OUT && tar czf r0.tgz r && cd - > /dev/null
bash bench/lab/_cmd19.sh
echo "total $(( $(date +%s) - t0 )) s"
