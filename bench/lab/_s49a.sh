set -u
# Prepared in session 48 (device time spent), not run. Needs target/pack/libs.tgz with
# target/main48 (HEAD's library) and target/dsk48 (HEAD + bench/lab/s48_m48_deep_even_sk.patch):
#   git apply bench/lab/s48_m48_deep_even_sk.patch && cargo build --release && mkdir -p target/dsk48 \
#     && cp target/release/libmate.so target/dsk48/ && git checkout src/plan/bwg.rs && cargo build --release \
#     && mkdir -p target/main48 && cp target/release/libmate.so target/main48/ \
#     && tar czf target/pack/libs.tgz target/main48/libmate.so target/dsk48/libmate.so
# (1) The 48-token tile's stream-K instead of a deep even split (as the 32-token tile's
#     BWG_SK_DEEP_PART_STAGES rule): 49 layer shapes move at M = 48 (plan table), among them
#     Llama-70B qkv, forced in session 48 at 0.87-0.90x of its 3-way split. Prediction: 0.90-0.97x
#     where the even split's parts are >= 8 stages and stream-K saves >= 5 % of them; the 64-token
#     tile's note (Llama-70B down at M = 64 stream-K 1.055x) says where it stops paying.
# (2) Session 48's routed rule in the plain context and the M = 48 steps (not measured then).
# (3) Llama-8B o at M = 33-48: the 48-token tile forced against the routed 32-token m-tiles.
tar xzf target/pack/libs.tgz
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/r
A=main48 B=dsk48 SHAPES=llama70b.qkv,8192x6144,7168x7168,14336x5120,5120x14336,28672x2560,4096x7168 \
  M=33,48 TAG=dsk bash bench/lab/ab.sh
python3 bench/lab/ab_report.py main48 dsk48 "$OUT/r/dsk-pdl1-*.json" "$OUT/r/dsk-pdl0-*.json" 2>&1 | grep -v '^$' | cut -c1-150
MATE_PDL=0 timeout 100 python3 bench/decode.py --library $PWD/target/main48/libmate.so --arms mate \
  --variants mate_bwg_f16_sym_m48_n128_split_pre,mate_bwg_f16_sym_m48_n128_sk_pre --shapes llama8b.o --m 33,40,48 --orders 2 \
  --json $OUT/r/o48-pdl0.json > /dev/null 2> $OUT/r/o48.err; echo "8b o forced rc $?"
MATE_PDL=1 timeout 100 python3 bench/decode.py --library $PWD/target/main48/libmate.so --arms mate \
  --variants mate_bwg_f16_sym_m48_n128_split_pre,mate_bwg_f16_sym_m48_n128_sk_pre --shapes llama8b.o --m 33,40,48 --orders 2 \
  --json $OUT/r/o48-pdl1.json > /dev/null 2>> $OUT/r/o48.err; echo "8b o forced rc $?"
cd $OUT && tar czf r.tgz r && rm -rf r
# (4) Prepared too: bench/lab/s48_m40_m56_tiles.patch (40- and 56-token tiles, 32 variants, routed as
#     the smallest built 33-64-token tile that holds M; compiled in session 48: no spill, ptxas 80
#     registers at entry, sk zp 8 bytes of stack). Build it into target/t4056, then in one process
#     the routed 40 / 56 plans against the 48 / 64 ones forced (same kinds), e.g.
#       decode.py --library target/t4056/libmate.so --arms mate --variants <m48 / m64 kinds> \
#         --shapes <the eight moved layers> --m 33,40,49,56 --orders 2   (MATE_PDL 1 and 0)
#     Prediction: ~0.95x at M = 33-40 (against 48) and M = 49-56 (against 64). Its tests/plan.rs
#     pins fail by design (the 48 / 64 rows at M = 33-40 / 49-56): update them if it lands.
