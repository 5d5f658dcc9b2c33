set -u
# Prepared in session 45, not run (no device time left): the arbiter for
# bench/lab/s45_zp_m1_overlap.patch (zero-point layers of 2^24-2^25 weights over K >= 4096 take
# the one-token 128-feature split at M = 1 with overlap: per call 0.84-0.95x, session 45 call 7).
# In the Llama-8B step qkv and o move (gate_up, down: no). Build here:
#   cargo build --release && mkdir -p target/main46 && cp target/release/libmate.so target/main46/ &&
#   git apply bench/lab/s45_zp_m1_overlap.patch && cargo build --release && mkdir -p target/zp46 &&
#   cp target/release/libmate.so target/zp46/ && git apply -R bench/lab/s45_zp_m1_overlap.patch
# (the patch's pins in tests/plan.rs are not updated: expect bulk_routing_is_pinned to fail on it)
# then on the GPU machine (carry target/main46, target/zp46): bash bench/lab/_cmd19.sh  (~4 min)
# Predicted: the overlap step (no --between) ~0.99x (qkv -0.4, o -0.3 us a layer of ~25 us of
# GEMMs at M = 1 with zero points); --between 1.00x (the rule is overlap-only). Merge only if the
# overlap step moves by more than its spread (sessions 43-44: such per-call wins did not).
mkdir -p $OUT/r
i=0
for lib in main46 zp46 zp46 main46; do
  i=$((i+1))
  for between in "" "--between"; do
    timeout 120 python3 bench/decode_step.py --library $PWD/target/$lib/libmate.so --models llama8b --m 1 --rounds 3 \
      --dtype bfloat16 --zp $between --json $OUT/r/zstep-$lib-$i${between:+-between}.json > $OUT/r/zstep-$lib-$i${between:+-between}.log 2>&1
    echo "$lib $i ${between:-overlap}: $(grep -E 'step us' $OUT/r/zstep-$lib-$i${between:+-between}.log | cut -c1-100)"
  done
done
cd $OUT && tar czf r.tgz r && rm -rf r
