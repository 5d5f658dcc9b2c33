set -u
# Session 56, one call. Libraries (carried): target/m56 = 591f5b3's; target/nx = 58b4d7b's (the
# two-chunk stream-K count for the 40-56-token tiles except sliced splits; the 56-token
# 256-feature tile at the 87 % stream-K bound); target/ring4 = nx's sources built with
# MATE_KERNEL_FLAGS=-DMATE_BWG_LAB_RING4 (branch lab-ring4: the 256-feature decode tiles' four
# warpgroups issue each pair's wgmma in a ring, named barriers 2-5); target/nodeq = nx's built
# with -DMATE_BWG_LAB_NODEQ (wrong results: what dequantizing costs).
# Predictions: M = 33 / 40 as session 56's sk40 run on the four moved layers (0.96-0.98x),
# 14336 x 3584 / 8192 x 4608 unmoved (1.0x); M = 52 / 56 Llama-70B gate_up 0.90-0.93x (forced),
# the other moved N = 28672 / 57344 layers 0.93-1.0x, Llama-8B gate_up unmoved. ring4: if the
# warpgroups run in phase (ncu: ~1 eligible warp, tensor 41 %, issue 36 %), 0.8-0.9x at M = 41-64
# on the 256-feature layers; 1.0x or slower if they already overlap. nodeq: the share of the
# consumer's dequantization (0.75-0.85x if it is what binds).
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/r; t1=$(date +%s)
fin() { cd $OUT && tar czf r.tgz r && rm -rf r; }
A=m56 B=nx SHAPES=llama70b.gate_up,5120x28672,7168x28672,3584x57344,14336x28672,llama8b.gate_up M=52,56 PDLS=1 TAG=sk56 bash bench/lab/ab.sh
python3 bench/lab/ab_report.py m56 nx "$OUT/r/sk56-pdl1-*.json" 2>&1 | grep -v '^$' | cut -c1-170
A=m56 B=nx SHAPES=7168x7168,8192x6144,4096x10240,8192x5120,14336x3584,8192x4608 M=33,40 PDLS=1 TAG=sk40 bash bench/lab/ab.sh
python3 bench/lab/ab_report.py m56 nx "$OUT/r/sk40-pdl1-*.json" 2>&1 | grep -v '^$' | cut -c1-170
MATE_LIBRARY=$PWD/target/ring4/libmate.so timeout 60 python3 -m pytest -q -rf -m gpu tests/python/test_gpu_matrix.py \
  -k "n256" -p no:cacheprovider > $OUT/r/ring4-tests.log 2>&1
echo "ring4 n256 tests rc $?"; tail -1 $OUT/r/ring4-tests.log | cut -c1-200; grep -E '^FAILED' $OUT/r/ring4-tests.log | head -5 | cut -c1-250
N256=llama70b.qkv,llama70b.gate_up,llama70b.down,llama8b.gate_up,7168x7168,3584x18944
A=nx B=ring4 SHAPES=$N256 M=48,56,64 PDLS=1 TAG=ring4 bash bench/lab/ab.sh
python3 bench/lab/ab_report.py nx ring4 "$OUT/r/ring4-pdl1-*.json" 2>&1 | grep -v '^$' | cut -c1-170
A=nx B=nodeq SHAPES=$N256 M=48,64 PDLS=1 TAG=nodeq bash bench/lab/ab.sh
python3 bench/lab/ab_report.py nx nodeq "$OUT/r/nodeq-pdl1-*.json" 2>&1 | grep -v '^$' | cut -c1-170
echo "($(( $(date +%s) - t1 )) s)"
# Where the 48-token 256-feature tile's warps stall, per SASS instruction (pc sampling), clocks
# left alone: the consumer is ~2.5x its issue or tensor budget a chunk (session 56's ncu).
MATE_LIBRARY=$PWD/target/nx/libmate.so timeout 120 ncu --clock-control none --kernel-name regex:mate_bwg --launch-skip 2 --launch-count 1 \
  --section SourceCounters --section WarpStateStats --import-source no -o $OUT/r/src48 \
  python3 bench/profile_one.py 4096 28672 48 mate_bwg_f16_sym_m48_n256_whole > $OUT/r/src48.log 2>&1; echo "== ncu src48 rc $?"
timeout 60 ncu -i $OUT/r/src48.ncu-rep --page source --csv --print-source sass > $OUT/r/src48.csv 2> $OUT/r/src48.err
echo "source page rc $? $(wc -l < $OUT/r/src48.csv) lines"; head -2 $OUT/r/src48.csv | cut -c1-400
# The GPU suite on nx last (its kernels are m56's, whose n256 cases passed in session 56's first
# call; the planner moved): what is left of the call.
left=$(( 540 - ($(date +%s) - t1) )); echo "suite gets $left s"
MATE_LIBRARY=$PWD/target/nx/libmate.so timeout $left python3 -m pytest -q -rf -m gpu tests/python \
  --ignore=tests/python/test_tp_distributed.py -p no:cacheprovider > $OUT/r/suite.log 2>&1
echo "suite rc $? ($(( $(date +%s) - t1 )) s)"; tail -1 $OUT/r/suite.log | cut -c1-200; grep -E '^FAILED' $OUT/r/suite.log | head -20 | cut -c1-250
fin
