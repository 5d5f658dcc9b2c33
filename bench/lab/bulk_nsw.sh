#!/usr/bin/env bash
# Lab A/B (session 4): stripes per consumer warp of bulk's 128-feature tiles (M = 2-16). NSW = 1:
# each warp owns one stripe and every chunk of it; NSW = 2: two stripes and every other chunk, so
# each activation fragment read from shared memory serves two stripes (half the x reads).
# Compiles both on the GPU machine, checks each against torch, times them (events, large shapes):
#   MATE_LIBRARY=$PWD/target/release/libmate.so bash bench/lab/bulk_nsw.sh
# Measured once (bench/NOTES.md, session 4): NSW = 2 lost; the switch was removed after commit
# d47a4f4 (check its kernels/bulk.cuh out to rerun).
set -uo pipefail
NVCC="${NVCC:-nvcc}"
D="$(mktemp -d)"
for n in 1 2; do
  cat > "$D/n$n.cu" <<'CU'
#include "params.cuh"
#include "bulk.cuh"
extern "C" __global__ void __launch_bounds__(288, 2) w8(const mate::GemmParams p) { mate::bulk_body<__half, false, 8, 128, 9, 4, true, false>(p); }
extern "C" __global__ void __launch_bounds__(288, 2) w16(const mate::GemmParams p) { mate::bulk_body<__half, false, 16, 128, 9, 4, true, false>(p); }
CU
  "$NVCC" -DMATE_BULK_WIDE_NSW=$n -std=c++17 -O3 -Ikernels -gencode arch=compute_90a,code=sm_90a -cubin -Xptxas -v -o "$D/n$n.cubin" "$D/n$n.cu" 2>&1 | grep -E "error|registers|spill"
done
# smem: P (4) x (stage + 16) + one fp32 copy of the tile's fragments (8 stripes x MT x 512)
wsm() { echo $(( 4 * (16384 + $1 * 528 + 1024 + 16) + 8 * (($1 + 7) / 8) * 512 )); }
R="python3 bench/lab/run_cubin.py"
for shape in 8192x57344:1 28672x8192:4 4096x28672:1; do
  KN=${shape%:*}; S=${shape#*:}; K=${KN%x*}; N=${KN#*x}; items=$(( N / 128 * S )); grid=$(( items < 264 ? items : 264 ))
  echo "== K=$K N=$N split $S"
  for M in 4 8 16; do
    tm=8; [ $M -gt 8 ] && tm=16
    for n in 1 2 1 2; do
      echo -n "M=$M NSW=$n "; $R "$D/n$n.cubin" w$tm --tm $tm --tn 128 --threads 288 --smem $(wsm $tm) --K $K --N $N --M $M --split $S --grid $grid </dev/null 2>&1 | grep -v cublas
    done
  done
done
