set -u
# Session 60: sk2 (target/sk2: the fix-up rule at 128 and 256 tokens, bwg_sk_fixup_stages) against
# the merged rule alone (sk256), A B B A, PDL on, --sustain-ms 300, the M = 128 shapes whose plan
# moves (+ Llama-8B qkv, unmoved, as a control); then the GPU suite on sk2.
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
A=sk256 B=sk2 PDLS=1 TAG=m128 SHAPES=llama8b.qkv,1536x6144,2048x6144,2048x7168,3072x6144,3072x7168,3584x6144,3584x7168,5120x7168,7168x7168 \
  M=128 EXTRA="--arms mate --sustain-ms 300" bash bench/lab/ab.sh
python3 bench/lab/ab_report.py sk256 sk2 "$OUT/r/m128-pdl1-*.json" 2>&1 | tail -14
MATE_LIBRARY=$PWD/target/sk2/libmate.so timeout 200 python3 -m pytest -q -rf -m gpu tests/python \
  --ignore=tests/python/test_tp_distributed.py -p no:cacheprovider 2>&1 | tail -4
cd $OUT && tar czf r.tgz r && rm -rf r
