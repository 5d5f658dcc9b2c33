set -u
# Prepared in session 43, not run: the data for widening the launch-context rules (after _cmd10.sh):
# the routing sweep on the serving and benchmark shapes at M = 2 / 4 / 8 / 16 in both contexts
# (MATE_PDL 1: all of mate's calls, the overlap context; MATE_PDL 0: the plain context, as behind a
# torch kernel), one order each (~8 min; split over two calls if the first runs long). Compare the
# best variant per context (bench/routing_sweep.py --report F1 F2 re-reads them); force what
# differs in both orders before writing a rule. Library: target/ctx (or main's).
mkdir -p $OUT/r
L=$PWD/target/${LIB:-ctx}/libmate.so
S=4096x3072,3584x3584,7168x4096,8192x2560,2048x8192,3584x4608,4096x14336,8192x14336,18944x3584,5120x7168,llama8b.qkv,llama8b.o,llama8b.down,llama70b.o,qwen1.5b.down,qwen1.5b.gate_up
t0=$(date +%s)
for pdl in ${PDLS:-0 1}; do
  left=$(( ${BUDGET:-560} - ($(date +%s) - t0) )); [ $left -lt 60 ] && break
  MATE_PDL=$pdl timeout $left python3 bench/routing_sweep.py --library $L --shapes $S --m ${MS:-2,4,8,16} \
    --json $OUT/r/ctx-sweep-pdl$pdl.json > $OUT/r/ctx-sweep-pdl$pdl.log 2>&1; echo "sweep pdl$pdl rc $? ($(( $(date +%s) - t0 )) s)"
  grep -E "<|points" $OUT/r/ctx-sweep-pdl$pdl.log | cut -c1-160
done
cd $OUT && tar czf r.tgz r && rm -rf r
