set -u
# Prepared in session 47 (refused: too little device time left), not run: do one-CTA-an-SM plans of the other families pay
# the co-residence cost too? target/lab47 = HEAD + bench/lab/s47_alone_families.patch:
# MATE_LAB_ALONE=<families> launches every plan of those families whose grid fits the SMs alone
# (an SM's shared memory). Steps at M = 16 with overlap, Qwen2-1.5B (qkv / o dect 128 / 96 CTAs,
# gate_up bulk 112) and Llama-8B. Prediction: 0.97-1.0x if the cost is general; >1 where the
# plans' own early start mattered more (down alone lost 0.91 -> 0.96x of its own gain).
tar xzf target/pack/lab.tgz
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/f
t0=$(date +%s)
i=0
for arm in none dect bulk dect,bulk dect,bulk bulk dect none; do
  i=$((i+1))
  if [ $arm = none ]; then env=""; else env="MATE_LAB_ALONE=$arm"; fi
  env $env timeout 60 python3 bench/decode_step.py --library $PWD/target/lab47/libmate.so --models qwen1.5b,llama8b --m 16 --rounds 3 \
    --json $OUT/f/st-$arm-$i.json > $OUT/f/st-$arm-$i.log 2>&1
  echo "$arm $i rc $? ($(( $(date +%s) - t0 )) s)"; grep -E 'step us' $OUT/f/st-$arm-$i.log | cut -c1-75
done
cd $OUT && tar czf f.tgz f && rm -rf f
echo "total $(( $(date +%s) - t0 )) s"
