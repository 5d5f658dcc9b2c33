set -u
# session 44, device call 5: bulk_overlap_round (target/ovr: with overlap at M = 2-4, whole 8 x 32
# tiles where they make one round of >= 90 % of the SMs over K <= 4096) against target/final44,
# A B B A, MATE_PDL 1 only (the plain context's plans are the same); Llama-8B step at M = 2 / 4
# (all of mate's calls: overlap) A B B A; the routing / workspace / PDL GPU tests on ovr.
# Predictions: Llama-8B o 0.94-0.95x; 2048 x 4096 / 3072 x 4096 unmeasured (whole 1.00x-1.05x?);
# 7168 x 4096 / 3584 x 3584 controls 1.00x; step ~0.995x.
mkdir -p $OUT/r
MATE_LIBRARY=$PWD/target/ovr/libmate.so timeout 150 python3 -m pytest -q -m gpu tests/python/test_op_workspace.py tests/python/test_workspace_shared.py \
  tests/python/test_launch_log.py tests/python/test_pdl_chain.py tests/python/test_gpu_matrix.py -p no:cacheprovider 2>&1 | tail -1
A=final44 B=ovr TAG=ovr M=2,3,4 SHAPES=llama8b.o,2048x4096,3072x4096,7168x4096,3584x3584 PDLS=1 bash bench/lab/ab.sh > /dev/null
python3 bench/lab/ab_report.py final44 ovr "$OUT/r/ovr-pdl1-*.json" | tee $OUT/r/report.txt
i=0
for lib in final44 ovr ovr final44; do
  i=$((i+1))
  timeout 80 python3 bench/decode_step.py --library $PWD/target/$lib/libmate.so --models llama8b --m 2,4 --rounds 3 \
    --json $OUT/r/step-$lib-$i.json > $OUT/r/step-$lib-$i.log 2>&1
  echo "$lib $i: $(grep -E 'step us' $OUT/r/step-$lib-$i.log | cut -c1-90 | tr '\n' ' ')"
done
cd $OUT && tar czf r.tgz r && rm -rf r
