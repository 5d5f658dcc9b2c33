set -u
# session 43, device call 6: the GPU suite on target/fin (04c8e49's rules + the 32-token split with
# the sliced sum); that tile in bf16 with zero points against target/s43 (libraries A B B A, both
# launch contexts); then the routing sweep on the serving shapes at M = 2 / 4 (MATE_PDL = 0, one
# order) with what time is left: leads for the next session.
t0=$(date +%s)
mkdir -p $OUT/r
MATE_LIBRARY=$PWD/target/fin/libmate.so timeout 200 python3 -m pytest -q -m gpu tests/python --ignore=tests/python/test_tp_distributed.py \
  -p no:cacheprovider 2>&1 | tail -2
echo "suite ($(( $(date +%s) - t0 )) s)"
A=s43 B=fin TAG=zp M=17,32 EXTRA="--dtype bfloat16 --zp" SHAPES=28672x1024,18944x1536,14336x2048,8960x3072,qwen1.5b.down bash bench/lab/ab.sh
python3 bench/lab/ab_report.py s43 fin "$OUT/r/zp-pdl1-*.json" "$OUT/r/zp-pdl0-*.json"
S=4096x3072,2048x4096,4096x14336,7168x4096,8192x2560,2048x8192,8192x14336,7168x8192,3584x4608,3584x3584,3584x37888,18944x3584,5120x7168,5120x5120,5120x55296,27648x5120
left=$(( 560 - ($(date +%s) - t0) ))
[ $left -gt 60 ] && MATE_PDL=0 timeout $left python3 bench/routing_sweep.py --library $PWD/target/fin/libmate.so --shapes $S --m 2,4 \
  --json $OUT/r/sweep-m2-4-pdl0.json > $OUT/r/sweep-m2-4-pdl0.log 2>&1; echo "sweep rc $? ($(( $(date +%s) - t0 )) s)"
grep -E "<|points" $OUT/r/sweep-m2-4-pdl0.log | cut -c1-160
cd $OUT && tar czf r.tgz r && rm -rf r
