set -u
# Session 60: per-CTA timelines (bench/lab/probe_bwg.py; a MATE_PROBE build of main with
# the probe slots 14 / 15, target/probe60) of the 128-token plans at
# M = 128 / 256: Llama-8B qkv (stream-K, 132 CTAs: the H200 miss), 8B o (even split of 4, 128
# CTAs: met), 70B qkv (stream-K: met). Warm L2 (one weight copy), PDL on, 20 calls a graph.
mkdir -p $OUT/q
MATE_LIBRARY=$PWD/target/probe60/libmate.so timeout 120 python3 bench/lab/probe_bwg.py \
  4096 6144 128 4096 6144 256 4096 4096 128 8192 10240 128 > $OUT/q/probe.log 2>&1
echo "probe rc $?"; grep -v '^\[' $OUT/q/probe.log | head -80
