set -u
# Session 65's fourth GPU call (prepared, not run: no device lent in session 65). Carry
# ["target/main65", "target/widesum"] (bench/lab/build_s65.sh). ~450 s.
# widesum = main + bench/lab/s65_wide_sum.patch: the 272-320-token tiles' partial sums (the
# ticket's last arriver, the stream-K owner) go through a held ring slot by cp.async
# (kernels/bwg.cuh add_part_staged): 9-11 loads in flight a half instead of 1-4 (cuobjdump; the
# 256-token tile's add_part keeps 13-19). Session 65's analysis of session 63's H100 data: those
# plans pay ~2x the narrow tiles' cost beyond the mainloop (F 30-78k against 12-27k cycles).
# Part 1 (TEST=0 skips): the wide tiles' parity tests (whole, then split / stream-K at 7 / 33 /
# 40 / 100 / 132 SMs, bitwise reruns, float64) on widesum.
# Part 2 (AB=0 skips): library A/B, main65 against widesum (A B B A, PDL on) at M = 272 / 640.
# Predicted: the wide stream-K plans (70B qkv / gate_up, 8B gate_up at 272; 70B qkv, 8B gate_up at
# 640) and the wide unpaired even splits (70B o / down at 272, 8B down at 640) 0.85-0.95x;
# controls, whole wide tiles (70B o / down at 640), 1.0x.
# Part 3 (FORCED=0 skips): forced on widesum at M = 800, where session 32 measured 3 wide m-tiles
# 1.03-1.15x slower than 4 narrow ones (with the slow sum): the routed 4 x 208 plans beside 3 x 272.
# Session 63 (H100, main): 8B qkv 800 routed 77.74 us, m272 77.65 (its F ~32k cycles); with the sum
# at the narrow tiles' F (~18k) m272 would run ~0.88x routed. A lead there extends bwg_wide_tile
# to four m-tiles -> three.
# If pair-wide also wins, the two compose (the pair never calls add_part): A/B the pair on top.
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/w; t0=$(date +%s)
if [ "${TEST:-1}" = 1 ]; then
  MATE_LIBRARY=$PWD/target/widesum/libmate.so timeout 240 python3 -m pytest -q -rf -p no:cacheprovider tests/python/test_gpu_matrix.py \
    -k "test_bwg_variants_parity and (m272 or m288 or m304 or m320)" > $OUT/w/test.log 2>&1
  echo "wide parity rc $? ($(( $(date +%s) - t0 )) s)"; tail -3 $OUT/w/test.log
fi
if [ "${AB:-1}" = 1 ]; then
  A=main65 B=widesum SHAPES=llama70b.qkv,llama70b.gate_up,llama8b.gate_up,llama70b.o,llama70b.down,llama8b.down M=272,640 TAG=ws PDLS=1 \
    EXTRA="--arms mate --sustain-ms 1000" bash bench/lab/ab.sh
  python3 bench/lab/ab_report.py main65 widesum "$OUT/r/ws-pdl1-*.json" 2>&1 | tail -16
  mv $OUT/r $OUT/w/ab
fi
source bench/lab/tiles.sh  # forced_arms: the forced arms
if [ "${FORCED:-1}" = 1 ]; then
  forced_arms $PWD/target/widesum/libmate.so $OUT/w $t0 <<'LIST'
llama8b.qkv 800 272 304
llama8b.o 800 272
llama70b.qkv 800 272
LIST
fi
cd $OUT && tar czf w.tgz w && rm -rf w
