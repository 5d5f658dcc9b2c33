set -u
# Prepared in session 59 for the next session's first call (issue 5 on whatever GPU comes; the
# H200 is the issue's). L = main's library (target/s59m: 36f611d, md5 9ef37141, built by the clean-clone CI; its
# kernels' SASS equals HEAD's), or LIB=<folder under target/>.
# 1. Llama-8B qkv at M = 128 / 256 missed on the H200 (0.92 / 0.93x cuBLAS at --sustain-ms 300,
#    main's library the same). Its routed plans are stream-K on all 132 SMs (m128 at 128, m256 at
#    256: every tile's partials summed through L2). Forced beside them: whole tiles (@1: 48 / 48
#    CTAs), an even split of two (@2: 96), the 64-token tiles (128 and 256 features, their own
#    stream-K), and at 256 the 128-token tile. Llama-8B o (the same K, N = 4096) as a control.
#    Prediction: if the fix-up is the cost, @2 or the m64 n256 stream-K comes within 0.95x of the
#    routed time; if every arm is within 2 %, the 128-token tile itself is the limit at this size.
# 2. ncu of 8B qkv at M = 128 (routed, whole). The standing at --sustain-ms 1000: _s60d.sh.
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/p; L=$PWD/target/${LIB:-s59m}/libmate.so; t0=$(date +%s)
V=@1,@2,mate_bwg_f16_sym_m64_n128_sk_pre,mate_bwg_f16_sym_m64_n256_sk_pre,mate_bwg_f16_sym_m128_n128_split_pre
timeout 200 python3 bench/decode.py --library $L --arms mate,fp16 --variants $V --shapes llama8b.qkv,llama8b.o \
  --m 128,256 --orders 2 --sustain-ms 1000 --json $OUT/p/qkv.json > $OUT/p/qkv.log 2>&1
echo "qkv rc $? ($(( $(date +%s) - t0 )) s)"; grep -E "M=" $OUT/p/qkv.log | cut -c1-220 | head -20
# ncu of the routed plan (stream-K, 132 CTAs) and of whole tiles (48 CTAs) at M = 128: where the
# 17-19 us go against ~7 us of tensor-pipe time (6.4 GFLOP at ~905 TFLOP/s).
for v in routed mate_bwg_f16_sym_m128_n128_whole_pre; do
  MATE_LIBRARY=$L timeout 60 ncu --kernel-name regex:mate_bwg --launch-skip 2 --launch-count 1 --section SpeedOfLight \
    --section WarpStateStats --section SchedulerStats --section LaunchStats \
    python3 bench/profile_one.py 4096 6144 128 ${v#routed} > $OUT/p/ncu-$v.txt 2>&1
  echo "== ncu $v rc $?"; grep -E "Duration|Elapsed Cycles|DRAM Throughput|Compute \(SM\)|Stall|Issued Warp|No Eligible|Eligible Warps|Grid Size|SM Frequency" $OUT/p/ncu-$v.txt | head -16
done
cd $OUT && tar czf p.tgz p && rm -rf p
