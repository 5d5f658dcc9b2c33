set -u
# session 46, device call 5: bwg_one_an_sm (target/s1: the 16-token even split at one CTA an SM
# where such parts fit the ring and fill >= 90 % of the SMs) against main46: per call in both
# contexts on the layers it moves (and Llama-8B qkv unmoved), then the Qwen2-1.5B step at M = 16
# with and without --between (A B B A).
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/r
t0=$(date +%s)
A=main46 B=s1 SHAPES=qwen1.5b.down,8192x1536,7168x2048,2048x8192,5120x2560,2048x5120,1536x8192,llama8b.qkv M=9,12,16 TAG=s1 bash bench/lab/ab.sh
python3 bench/lab/ab_report.py main46 s1 "$OUT/r/s1-pdl1-*.json" "$OUT/r/s1-pdl0-*.json" 2>&1 | tail -60
i=0
for lib in main46 s1 s1 main46; do
  i=$((i+1))
  for between in "" "--between"; do
    timeout 100 python3 bench/decode_step.py --library $PWD/target/$lib/libmate.so --models qwen1.5b --m 16 --rounds 3 $between \
      --json $OUT/r/qstep-$lib-$i${between:+-between}.json > $OUT/r/qstep-$lib-$i${between:+-between}.log 2>&1
    echo "$lib $i ${between:-overlap}: $(grep -E 'step us' $OUT/r/qstep-$lib-$i${between:+-between}.log | cut -c1-100)"
  done
done
cd $OUT && tar czf r.tgz r && rm -rf r
echo "total $(( $(date +%s) - t0 )) s"
