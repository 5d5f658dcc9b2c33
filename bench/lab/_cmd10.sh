set -u
# Prepared in session 43, not run (no device time left): bench/lab/s43_launch_context.patch, plans
# keyed by the launch context (Problem::overlap: whether a programmatic launch would overlap its
# predecessor, as src/device/mod.rs behind_triggers decides; the workspace query answers the larger
# of the two plans). Context rules from session 43's forced runs (bench/lab/context_diff.py):
# - M = 1 on 4096 x 3072 / 3584 x 3584 (bulk_m1_dect_wave; dect before): the 128-feature split with
#   overlap, whole 8 x 32 tiles without;
# - M = 2-8 without overlap, bulk_plain_fill / bulk_plain_whole: whole 8 x 32 tiles where they fill
#   a third of the slots or more over K <= 8192 (moves Llama-8B o at M = 2-4, 8B qkv and 70B o at
#   M = 5-8, 7168 x 4096, 3584 x 3584, 4096 x 3072, 5120 x 7168 / 5120 x 5120 at M = 5-8).
# Build here:
#   git apply bench/lab/s43_launch_context.patch && cargo build --release && mkdir -p target/ctx &&
#   cp target/release/libmate.so target/ctx/ && git apply -R bench/lab/s43_launch_context.patch &&
#   cargo build --release && mkdir -p target/main && cp target/release/libmate.so target/main/
# then on the GPU machine (carry target/main, target/ctx; the patch is applied there too, for the
# test file): bash bench/lab/_cmd10.sh   (~7 min)
# Predictions (session 43's forced runs): MATE_PDL 1 (overlap) 0.79x / 0.91x on 4096 x 3072 /
# 3584 x 3584 at M = 1, 1.00x elsewhere; MATE_PDL 0 (plain) 0.83x at M = 1 on those two, 0.80-0.90x
# at M = 4 on 7168 x 4096 / 3584 x 3584 / 4096 x 3072, 0.85-0.98x at M = 8 on Llama-8B qkv /
# 7168 x 4096 / 70B o; unmeasured: Llama-8B o at M = 4, 5120 x 5120 at M = 8. Steps (decode_step.py,
# all of mate's calls: the overlap context) 1.00x; with --between (a torch kernel before every
# GEMM: the plain context, as in a model) Llama-8B at M = 8 ~0.97x, at M = 1 1.00x.
mkdir -p $OUT/r
(git apply bench/lab/s43_launch_context.patch 2>/dev/null || patch -p1 < bench/lab/s43_launch_context.patch) > /dev/null && echo patched
MATE_LIBRARY=$PWD/target/ctx/libmate.so timeout 200 python3 -m pytest -q -m gpu tests/python --ignore=tests/python/test_tp_distributed.py \
  -p no:cacheprovider 2>&1 | tail -2
A=main B=ctx TAG=ctx M=1,4,8 SHAPES=4096x3072,3584x3584,2048x4096,7168x4096,8192x2560,5120x5120,llama8b.qkv,llama8b.o,llama8b.down,llama70b.o \
  bash bench/lab/ab.sh
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
