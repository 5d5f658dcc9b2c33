set -u
# Prepared in session 43, not run (no device time left): bench/lab/s43_launch_context.patch, plans
# keyed by the launch context (Problem::overlap: whether a programmatic launch would overlap its
# predecessor, as src/device/mod.rs behind_triggers decides; the workspace query answers the larger
# of the two plans). Two context rules from session 43's forced runs: M = 1 on 4096 x 3072 /
# 3584 x 3584 (bulk_m1_dect_wave: the 128-feature split with overlap, whole 8 x 32 tiles without;
# dect before), M = 5-8 Llama-8B qkv in whole 8 x 32 tiles without overlap. Build here:
#   git apply bench/lab/s43_launch_context.patch && cargo build --release && mkdir -p target/ctx &&
#   cp target/release/libmate.so target/ctx/ && git apply -R bench/lab/s43_launch_context.patch &&
#   cargo build --release && mkdir -p target/main && cp target/release/libmate.so target/main/
# then on the GPU machine (carry target/main, target/ctx; apply the patch there too for the test
# file): bash bench/lab/_cmd10.sh   (~7 min)
# Predictions (session 43's forced runs): per call with MATE_PDL 1 0.79x / 0.91x (4096 x 3072 /
# 3584 x 3584 M = 1), MATE_PDL 0 0.83x / 0.83x and Llama-8B qkv M = 6 / 8 0.85x / 0.92x; steps
# (decode_step.py, all of mate's calls: the overlap context) 1.00x; steps with --between (a torch
# kernel before every GEMM: the plain context, as in a model) Llama-8B at M = 8 ~0.98x.
mkdir -p $OUT/r
(git apply bench/lab/s43_launch_context.patch 2>/dev/null || patch -p1 < bench/lab/s43_launch_context.patch) > /dev/null && echo patched
MATE_LIBRARY=$PWD/target/ctx/libmate.so timeout 200 python3 -m pytest -q -m gpu tests/python --ignore=tests/python/test_tp_distributed.py \
  -p no:cacheprovider 2>&1 | tail -2
A=main B=ctx TAG=ctx M=1,6,8 SHAPES=4096x3072,3584x3584,2048x4096,llama8b.qkv,3584x4608 bash bench/lab/ab.sh
python3 bench/lab/ab_report.py main ctx "$OUT/r/ctx-pdl1-*.json" "$OUT/r/ctx-pdl0-*.json" | tee $OUT/r/report.txt
i=0
for lib in main ctx ctx main; do
  i=$((i+1))
  for between in "" "--between"; do
    timeout 90 python3 bench/decode_step.py --library $PWD/target/$lib/libmate.so --models llama8b --m 1,8 --rounds 3 $between \
      --json $OUT/r/step-$lib-$i${between:+-between}.json > $OUT/r/step-$lib-$i${between:+-between}.log 2>&1
    echo "$lib $i ${between:-overlap}: $(grep -E 'M=  [18] step' $OUT/r/step-$lib-$i${between:+-between}.log | cut -c1-90 | tr '\n' ' ')"
  done
done
cd $OUT && tar czf r.tgz r && rm -rf r
