set -u
# Prepared in session 60 (not run): the stream-K contributor's signal from an idle warp
# (bench/lab/s60_sk_arrive_warp.patch; library target/skarr, else build main + the patch).
# Today a contributor's consumers store their partial, bar.sync, and thread 0's red.release waits
# for the 64 / 128 KB to reach L2 (the probe: ~1.8 / ~3.2 us at M = 128 / 256 between the main
# loop's end and the next item) while warpgroup 0 stands. With the patch the consumers bar.arrive
# (named barrier 4) and go on; warp WC + 1 bar.syncs and signals. 128-320-token tiles only (the
# 24-64-token `_sk` SASS is unchanged). Prediction: Llama-8B qkv at M = 128 (stream-K) 0.92-0.96x,
# other stream-K plans at M = 128 0.95-0.99x, at M = 1024-4096 0.99-1.0x.
# A = LIBA (default s60m: main's library from the clean-clone CI of this session's HEAD), B = skarr.
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"; mkdir -p $OUT/r
A=${LIBA:-s60m}
bash bench/lab/san.sh skarr $OUT/r mate_bwg_f16_sym_m128_n128_split_pre@4096@8@0@1280@128 \
  mate_bwg_bf16_zp_m256_n128_split_pre@4096@8@0@1280@256 mate_bwg_f16_sym_m128_n128_split_pre@1536@132@0@6144@128
A=$A B=skarr PDLS=1 TAG=ska SHAPES=llama8b.qkv,llama70b.qkv,llama8b.gate_up,llama70b.gate_up,8192x6144,4096x10240 \
  M=128,256 EXTRA="--arms mate --sustain-ms 300" bash bench/lab/ab.sh
A=$A B=skarr PDLS=1 TAG=skb SHAPES=llama8b.gate_up,llama70b.gate_up,llama70b.qkv M=4096 EXTRA="--arms mate --sustain-ms 300" bash bench/lab/ab.sh
python3 bench/lab/ab_report.py $A skarr "$OUT/r/ska-pdl1-*.json" "$OUT/r/skb-pdl1-*.json" 2>&1 | tail -20
MATE_LIBRARY=$PWD/target/skarr/libmate.so timeout 150 python3 -m pytest -q -rf -m gpu tests/python \
  --ignore=tests/python/test_tp_distributed.py -p no:cacheprovider 2>&1 | tail -3
cd $OUT && tar czf r.tgz r && rm -rf r
