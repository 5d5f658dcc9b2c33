#!/usr/bin/env bash
# Lab (session 4): bulk's 128-feature tiles (M = 2-16) with 8 chunks per stage (2 or 3 stages,
# MATE_BULK_WIDE_CH=8) against the library's 4 chunks x 4 stages, and the copy pipeline alone
# (MATE_BULK_NOCOMPUTE: consumers skip the math, wrong results) to see which side limits.
#   MATE_LIBRARY=$PWD/target/release/libmate.so bash bench/lab/bulk_wide_ch.sh
# Measured once (bench/NOTES.md, session 4): 8 chunks x 2 stages won and became the library's
# form; the switch was removed after commit 29b7101 (check its kernels/bulk.cuh out to rerun).
set -uo pipefail
NVCC="${NVCC:-nvcc}"
D="$(mktemp -d)"
mk() {  # name, defines, P, min blocks
  cat > "$D/$1.cu" <<CU
#include "params.cuh"
#include "bulk.cuh"
extern "C" __global__ void __launch_bounds__(288, $4) w8(const mate::GemmParams p) { mate::bulk_body<__half, false, 8, 128, 9, $3, true, false>(p); }
extern "C" __global__ void __launch_bounds__(288, $4) w16(const mate::GemmParams p) { mate::bulk_body<__half, false, 16, 128, 9, $3, true, false>(p); }
CU
  "$NVCC" $2 -std=c++17 -O3 -Ikernels -gencode arch=compute_90a,code=sm_90a -cubin -Xptxas -v -o "$D/$1.cubin" "$D/$1.cu" 2>&1 | grep -E "error|spill" | tr '\n' ' '; echo " <- $1"
}
mk base "" 4 2
mk nocomp "-DMATE_BULK_NOCOMPUTE" 4 2
mk ch8p2 "-DMATE_BULK_WIDE_CH=8" 2 2
mk ch8p3 "-DMATE_BULK_WIDE_CH=8" 3 1
# smem: P x (stage + 16) + one fp32 copy of the tile (8 x MT x 512); stage = 8 stripes x CH x 512 + TM x (CH x 128 + 16) + CH x 256
sm() { echo $(( $3 * (8 * $2 * 512 + $1 * ($2 * 128 + 16) + $2 * 256 + 16) + 8 * (($1 + 7) / 8) * 512 )); }
R="python3 bench/lab/run_cubin.py"
for shape in 8192x57344:1 28672x8192:4; do
  KN=${shape%:*}; S=${shape#*:}; K=${KN%x*}; N=${KN#*x}; it=$(( N / 128 * S ))
  echo "== K=$K N=$N split $S"
  for M in 2 16; do
    tm=8; [ $M -gt 8 ] && tm=16
    for r in 1; do
      for f in base:4:4:264 nocomp:4:4:264 ch8p2:8:2:264 ch8p3:8:3:132; do
        IFS=: read -r n ch pp gmax <<<"$f"; g=$(( it < gmax ? it : gmax ))
        echo -n "M=$M $n "; $R "$D/$n.cubin" w$tm --tm $tm --tn 128 --threads 288 --smem $(sm $tm $ch $pp) --K $K --N $N --M $M --split $S --grid $g </dev/null 2>&1 | grep -v cublas
      done
    done
  done
done
