set -u
# session 46, device call 7: bulk's even split (M = 1 / 4 / 8) at forced split counts in the plain
# context (MATE_PDL=0), fin46's library: does one CTA an SM pay there too, as bwg_one_an_sm does
# for the 16-token tile?
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/r
t0=$(date +%s)
for m in 1 4 8; do
  MATE_PDL=0 timeout 150 python3 bench/decode.py --library $PWD/target/fin46/libmate.so --arms mate,read \
    --shapes qwen1.5b.down,8960x2048,7168x2048,5120x2560,8960x4096,llama8b.down --m $m --orders 2 \
    --variants @1,@2,@3,@4,@6,@8 --json $OUT/r/bsplit-m$m.json > $OUT/r/bsplit-m$m.log 2>&1
  echo "M=$m rc $? ($(( $(date +%s) - t0 )) s)"; grep -E "^   .*M=" $OUT/r/bsplit-m$m.log | cut -c1-200
done
cd $OUT && tar czf r.tgz r && rm -rf r
echo "total $(( $(date +%s) - t0 )) s"
