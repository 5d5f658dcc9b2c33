set -u
# Session 52 call 1: the wgmma rate against N (bench/lab/wgmma_rate.cu), then _s52a.sh.
nvcc -std=c++17 -O3 -arch=sm_90a -I kernels bench/lab/wgmma_rate.cu -o /tmp/wgmma_rate && /tmp/wgmma_rate | tee $OUT/wgmma_rate.txt
bash bench/lab/_s52a.sh
