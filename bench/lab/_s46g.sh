set -u
# session 46, device call 8: bwg's 32-token tile (M = 24 / 32) at forced split counts in the plain
# context (MATE_PDL=0), fin46: does one CTA an SM pay there as in the 16-token tile?
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/r
t0=$(date +%s)
for m in 24 32; do
  MATE_PDL=0 timeout 150 python3 bench/decode.py --library $PWD/target/fin46/libmate.so --arms mate,read \
    --shapes llama8b.o,llama8b.qkv,qwen1.5b.down,8192x1536,3072x4096,7168x2048 --m $m --orders 2 \
    --variants @2,@3,@4,@6,@8,@11 --json $OUT/r/wsplit-m$m.json > $OUT/r/wsplit-m$m.log 2>&1
  echo "M=$m rc $? ($(( $(date +%s) - t0 )) s)"; grep -E "^   .*M=" $OUT/r/wsplit-m$m.log | cut -c1-200
done
cd $OUT && tar czf r.tgz r && rm -rf r
echo "total $(( $(date +%s) - t0 )) s"
