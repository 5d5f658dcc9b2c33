set -u
# Session 65's third GPU call (prepared, not run: no device lent in session 65). Carry
# ["target/main65", "target/round65"] (bench/lab/build_s65.sh). ~380 s.
# Part 1 (AB=0 skips): library A/B, main65 against round65 (bench/lab/s65_round_tile.patch, the
# draft bwg_round_tile: Llama-8B o / down at M = 513-768 on 4 whole m-tiles of 144-192 tokens,
# grid 128, instead of 3 x 176-256 stream-K or 2 x 272-320 split), A B B A with PDL. Predicted
# (session 63, from 8B o M = 800 on 4 x 208 whole at (75 + TM) rows a chunk): 8B o 0.88-0.93x at
# 576-768 (0.81 -> ~0.91x of cuBLAS at 640: still a miss); 8B down 640 ~0.97x (inside the noise).
# Run it only where _s65a.sh's forced "w" arms were >= 3 % faster than routed; merge on an A/B win
# with the full GPU suite green on round65.
# Part 2 (SWEEP=0 skips): issue 4's M = 33 / 48 / 64 routing sweep on the Llama-8B layers
# (bench/lab/_s62a.sh's SWEEP part; the routing was tuned on H100s): a forced arm >= 3 % faster
# than routed is a lead.
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/e; t0=$(date +%s)
if [ "${AB:-1}" = 1 ]; then
  A=main65 B=round65 SHAPES=llama8b.o,llama8b.down M=576,640,704,768 TAG=round PDLS=1 \
    EXTRA="--arms mate --sustain-ms 1000" bash bench/lab/ab.sh
  python3 bench/lab/ab_report.py main65 round65 "$OUT/r/round-pdl1-*.json" 2>&1 | tail -12
  mv $OUT/r $OUT/e/ab
fi
if [ "${SWEEP:-1}" = 1 ]; then
  timeout 200 python3 bench/routing_sweep.py --library $PWD/target/main65/libmate.so \
    --shapes llama8b.qkv,llama8b.o,llama8b.gate_up,llama8b.down --m 33,48,64 --json $OUT/e/sweep-llama8b.json > $OUT/e/sweep-llama8b.log 2>&1
  echo "sweep llama8b rc $? ($(( $(date +%s) - t0 )) s)"; tail -16 $OUT/e/sweep-llama8b.log | cut -c1-170
fi
cd $OUT && tar czf e.tgz e && rm -rf e
