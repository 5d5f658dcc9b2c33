#!/usr/bin/env bash
# Lab timing of the bulk-copy decode kernel (kernels/bulk.cuh) without rebuilding the library
# (events around back-to-back launches; large shapes so the weights do not sit in L2):
#   MATE_LIBRARY=$PWD/target/release/libmate.so bash bench/lab/bulk_lab.sh
# Variant list: "name TM TN WC P" (WC consumer warps); smem = P * stage + 16 P + WC * TN/16 * ceil(TM/8) * 512.
# The kernel is persistent: grid = min(tiles, 2 x 132 SMs), whole K (split 1).
set -uo pipefail
NVCC="${NVCC:-nvcc}"
D="$(mktemp -d)"
VARIANTS="${VARIANTS:-b1_32_w8 1 32 8 8;b1_16_w8 1 16 8 10;b1_32_w4 1 32 4 8;b8_32_w8 8 32 8 6;b16_32_w8 16 32 8 4}"
SHAPES="${SHAPES:-8192x57344 28672x8192 4096x28672}"
stage() {
  CH=8; [ "$1" = 1 ] && CH=16
  SR=$CH; [ "${PRE:-false}" = true ] && SR=$((2 * CH))
  echo $(( ($2 / 16) * CH * 512 + $1 * (CH * 128 + 16) + SR * $2 * 2 )); }
{
  echo '#include "params.cuh"'
  echo '#include "bulk.cuh"'
  tr ';' '\n' <<<"$VARIANTS" | while read -r n tm tn wc pp; do
    echo "extern \"C\" __global__ void __launch_bounds__($(( (wc + 1) * 32 )), ${MINB:-1}) $n(const mate::GemmParams p) { mate::bulk_body<__half, false, $tm, $tn, $((wc + 1)), $pp, false, ${PRE:-false}>(p); }"
  done
} > "$D/b.cu"
"$NVCC" -std=c++17 -O3 -Ikernels -gencode arch=compute_90a,code=sm_90a ${EXTRA:-} -cubin -Xptxas -v -o "$D/b.cubin" "$D/b.cu" 2>&1 | grep -E "error|registers|spill" | head -20

for shape in $SHAPES; do
  K=${shape%x*}; N=${shape#*x}
  echo "== K=$K N=$N"
  tr ';' '\n' <<<"$VARIANTS" | while read -r n tm tn wc pp; do
    mt=$(( (tm + 7) / 8 )); st=$(stage $tm $tn)
    smem=$(( pp * st + 16 * pp + wc * (tn / 16) * mt * 512 ))
    for M in ${MS:-1 $tm}; do
      [ "$M" -gt "$tm" ] && continue
      echo -n "M=$M "; python3 bench/lab/run_cubin.py </dev/null "$D/b.cubin" $n --tm $tm --tn $tn --threads $(( (wc + 1) * 32 )) --smem $smem --K $K --N $N --M $M --grid $(( N / tn < 264 ? N / tn : 264 )) 2>&1 | grep -v cublas
    done
  done
done
