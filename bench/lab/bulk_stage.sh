#!/usr/bin/env bash
# Lab A/B (session 4) of two bulk switches against the library's form, on M = 1 (32-feature
# tiles) and M = 8/16 (128-feature tiles): MATE_BULK_FULL_STAGE=1 (a warp's chunks of a whole
# stage unrolled into one block) and MATE_BULK_WEIGHT_EVICT_FIRST=0 (weights copied with the
# evict_normal L2 policy instead of evict_first). Compiles the three forms on the GPU machine,
# checks each against torch, times them (events, large shapes, two interleaved rounds):
#   MATE_LIBRARY=$PWD/target/release/libmate.so bash bench/lab/bulk_stage.sh
# Measured once (bench/NOTES.md, session 4): both lost, and the switches were removed after
# commit dbee774; check that commit's kernels/bulk.cuh out to rerun this.
set -uo pipefail
NVCC="${NVCC:-nvcc}"
D="$(mktemp -d)"
cat > "$D/k.cu" <<'CU'
#include "params.cuh"
#include "bulk.cuh"
extern "C" __global__ void __launch_bounds__(288, 2) b1(const mate::GemmParams p) { mate::bulk_body<__half, false, 1, 32, 9, 4, false, false>(p); }
extern "C" __global__ void __launch_bounds__(288, 2) w8(const mate::GemmParams p) { mate::bulk_body<__half, false, 8, 128, 9, 4, true, false>(p); }
extern "C" __global__ void __launch_bounds__(288, 2) w16(const mate::GemmParams p) { mate::bulk_body<__half, false, 16, 128, 9, 4, true, false>(p); }
CU
FORMS="base: stage:-DMATE_BULK_FULL_STAGE=1 normal:-DMATE_BULK_WEIGHT_EVICT_FIRST=0"
for f in $FORMS; do
  "$NVCC" ${f#*:} -std=c++17 -O3 -Ikernels -gencode arch=compute_90a,code=sm_90a -cubin -Xptxas -v -o "$D/${f%%:*}.cubin" "$D/k.cu" 2>&1 | grep -E "error|spill" | tr '\n' ' '; echo " <- ${f%%:*}"
done
# dynamic smem (Variant::dynamic_smem): 4 stages + barriers + the reduction copies
SM_b1=$(( 4 * (2 * 16 * 512 + 16 * 128 + 16 + 16 * 64 + 16) + 7 * 2 * 512 ))
sm_w() { echo $(( 4 * (16384 + $1 * 528 + 1024 + 16) + 8 * (($1 + 7) / 8) * 512 )); }
R="python3 bench/lab/run_cubin.py"
for shape in 8192x57344:1 28672x8192:4 4096x28672:1; do
  KN=${shape%:*}; S=${shape#*:}; K=${KN%x*}; N=${KN#*x}
  echo "== K=$K N=$N (wide split $S)"
  for M in 1 8 16; do
    for r in 1 2; do
      for f in $FORMS; do
        c="$D/${f%%:*}.cubin"
        if [ $M = 1 ]; then
          g=$(( N / 32 < 264 ? N / 32 : 264 ))
          echo -n "M=$M ${f%%:*} "; $R "$c" b1 --tm 1 --tn 32 --threads 288 --smem $SM_b1 --K $K --N $N --M 1 --grid $g </dev/null 2>&1 | grep -v cublas
        else
          tm=8; [ $M -gt 8 ] && tm=16; it=$(( N / 128 * S )); g=$(( it < 264 ? it : 264 ))
          echo -n "M=$M ${f%%:*} "; $R "$c" w$tm --tm $tm --tn 128 --threads 288 --smem $(sm_w $tm) --K $K --N $N --M $M --split $S --grid $g </dev/null 2>&1 | grep -v cublas
        fi
      done
    done
  done
done
