set -e
R="python3 bench/lab/run_cubin.py bench/lab/t.cubin"
$R w8_m256 --tm 256 --tn 128 --threads 256 --smem 190464
$R w8_m128 --tm 128 --tn 128 --threads 256 --smem 130048
$R w12_m128 --tm 128 --tn 192 --threads 384 --smem 142336
$R w16_m128 --tm 128 --tn 256 --threads 512 --smem 160768
$R w16_m64 --tm 64 --tn 256 --threads 512 --smem 148480
