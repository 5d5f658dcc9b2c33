set -u
# session 47, with _s47a.sh: where the one-CTA-an-SM 16-token split loses with overlap.
# Arms: main46 (before bwg_one_an_sm), one (target/hog, bench/lab/s47_hog.patch on HEAD, with
# MATE_LAB_OVERLAP_ONE=1: the rule in both contexts, as session 46's s1), hog (the same plus
# MATE_LAB_HOG=1: those plans launched with an SM's whole shared memory, so no CTA of the next
# kernels shares the SM while they run). The Qwen2-1.5B step at M = 16 with overlap
# (decode_step's default), built from projection subsets: down alone, qkv + down, all four.
# Prediction: down alone one 0.91-0.95x of main46; with qkv / all four one >= 1.0x (session 46:
# all four 1.03x); if the guess holds (the next kernels' CTAs start in the free slot and stream
# during down's main phase), hog takes the loss back (<= main46).
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/q
t0=$(date +%s)
for projs in down qkv,down qkv,o,gate_up,down; do
  i=0
  for arm in main46 one hog hog one main46; do
    i=$((i+1))
    case $arm in main46) lib=main46; env="";; one) lib=hog; env="MATE_LAB_OVERLAP_ONE=1";; hog) lib=hog; env="MATE_LAB_OVERLAP_ONE=1 MATE_LAB_HOG=1";; esac
    tag=$(echo $projs | tr , _)-$arm-$i
    env $env timeout 100 python3 bench/decode_step.py --library $PWD/target/$lib/libmate.so --models qwen1.5b --m 16 --rounds 3 \
      --projs $projs --json $OUT/q/qs-$tag.json > $OUT/q/qs-$tag.log 2>&1
    echo "$projs $arm $i rc $? ($(( $(date +%s) - t0 )) s): $(grep -E 'step us' $OUT/q/qs-$tag.log | cut -c1-100)"
  done
done
cd $OUT && tar czf q.tgz q && rm -rf q
echo "total $(( $(date +%s) - t0 )) s"
