set -u
# Prepared in sessions 48-49 (no device time left in either), not run. One call, ~7 minutes on an
# H100. Needs target/pack/libs.tgz with three libraries, built in session 49 (if main has moved
# since, rebuild them: bench/lab/README or the commands below):
#   main49 = main at e6edc29 (the same kernels and planner as 59eb032);
#   dsk48  = main49 + bench/lab/s48_m48_deep_even_sk.patch;
#   t4056  = main49 + bench/lab/s48_m40_m56_tiles.patch.
#   (git apply P && cargo build --release && cp target/release/libmate.so target/<name>/ && git apply -R P)
#   tar czf target/pack/libs.tgz target/main49/libmate.so target/dsk48/libmate.so target/t4056/libmate.so
# (1) The 48-token tile's stream-K instead of a deep even split (as the 32-token tile's
#     BWG_SK_DEEP_PART_STAGES rule): 49 layer shapes move at M = 48 (plan table), among them
#     Llama-70B qkv, forced in session 48 at 0.87-0.90x of its 3-way split. Prediction: 0.90-0.97x
#     where the even split's parts are >= 8 stages and stream-K saves >= 5 % of them; the 64-token
#     tile's note (Llama-70B down at M = 64 stream-K 1.055x) says where it stops paying.
# (2) Llama-8B o at M = 33-48: the 48-token tile forced against the routed 32-token m-tiles.
# (3) The 40- and 56-token tiles routed (t4056) against main49, A B B A, both contexts. Prediction:
#     ~0.95x at M = 33-40 (against the 48-token tile) and M = 49-56 (against the 64-token tile);
#     M = 48 and 64 unchanged (controls).
tar xzf target/pack/libs.tgz
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/r
A=main49 B=dsk48 SHAPES=llama70b.qkv,8192x6144,7168x7168,14336x5120,5120x14336,28672x2560,4096x7168 \
  M=33,48 TAG=dsk bash bench/lab/ab.sh
python3 bench/lab/ab_report.py main49 dsk48 "$OUT/r/dsk-pdl1-*.json" "$OUT/r/dsk-pdl0-*.json" 2>&1 | grep -v '^$' | cut -c1-150
for pdl in 0 1; do
  MATE_PDL=$pdl timeout 100 python3 bench/decode.py --library $PWD/target/main49/libmate.so --arms mate \
    --variants mate_bwg_f16_sym_m48_n128_split_pre,mate_bwg_f16_sym_m48_n128_sk_pre --shapes llama8b.o --m 33,40,48 --orders 2 \
    --json $OUT/r/o48-pdl$pdl.json > /dev/null 2>> $OUT/r/o48.err; echo "8b o forced pdl$pdl rc $?"
done
A=main49 B=t4056 SHAPES=llama8b.qkv,llama8b.gate_up,llama8b.down,llama70b.qkv,llama70b.o,llama70b.gate_up,llama70b.down,qwen1.5b.down \
  M=33,40,48,49,56,64 TAG=t4056 bash bench/lab/ab.sh
python3 bench/lab/ab_report.py main49 t4056 "$OUT/r/t4056-pdl1-*.json" "$OUT/r/t4056-pdl0-*.json" 2>&1 | grep -v '^$' | cut -c1-150
cd $OUT && tar czf r.tgz r && rm -rf r
# If t4056 wins: its GPU suite (MATE_LIBRARY=$PWD/target/t4056/libmate.so python3 -m pytest -q -rf -m gpu
# tests/python --ignore=tests/python/test_tp_distributed.py -p no:cacheprovider) in the next call, the
# tests/plan.rs pins (48 / 64 rows at M = 33-40 / 49-56) and test_scripts' candidate tiles updated.
