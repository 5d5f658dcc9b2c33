export MATE_LIBRARY=$PWD/target/release/libmate.so SHAPES="8192x57344 28672x8192 4096x28672 4096x4096" MS=1
echo "### post-scale, 1 CTA min"; VARIANTS="b1_32_w4p8 1 32 4 8;b1_32_w8p6 1 32 8 6" bash bench/lab/bulk_lab.sh 2>&1 | grep -E "M=|regis"
echo "### post-scale, 3 CTAs"; MINB=3 VARIANTS="b1_32_w8p6 1 32 8 6;b1_16_w8p8 1 16 8 8;b1_32_w4p6 1 32 4 6" bash bench/lab/bulk_lab.sh 2>&1 | grep -E "M=|regis"
echo "### CH16"; MINB=2 CH=16 VARIANTS="b1_32_w8p4 1 32 8 4" bash bench/lab/bulk_lab.sh 2>&1 | grep -E "M=|regis"
