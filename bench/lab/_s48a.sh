set -u
# session 48, call 1: (a) session 47's prepared _s47f.sh (other families alone with overlap, target/lab47 =
# 13a35c9 + bench/lab/s47_alone_families.patch); (b) bench/e2e.py Qwen2-1.5B B = 48 / 64, fin46b / final47
# (the 64-token one-CTA-an-SM rule in a model step; prediction ~0.998x).
# On an H200 (none for seven sessions): issue 4/5 standing with final47 (= HEAD's plans) instead.
tar xzf target/pack/libs.tgz
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
if echo "$gpu" | grep -q H200; then
  sed -i 's#target/fin46b/libmate.so#target/final47/libmate.so#' bench/lab/_s47c.sh
  bash bench/lab/_s47c.sh; exit 0
fi
bash bench/lab/_s47f.sh
mkdir -p $OUT/r
t0=$(date +%s)
i=0
for lib in fin46b final47 final47 fin46b; do
  i=$((i+1))
  timeout 100 python3 bench/e2e.py --model qwen1.5b --library $PWD/target/$lib/libmate.so --batches 48,64 --steps 2 --replays 8 \
    --json $OUT/r/e2eq-$lib-$i.json > $OUT/r/e2eq-$lib-$i.log 2>&1
  echo "$lib $i rc $? ($(( $(date +%s) - t0 )) s): $(python3 -c "
import json,sys; d=json.load(open(sys.argv[1]))['batches']
print(' '.join(f\"B={b} {r['w4a16']['median_us']:.0f}/{r['nongemm']['median_us']:.0f}\" for b, r in d.items()))" $OUT/r/e2eq-$lib-$i.json 2>&1 | tail -1)"
done
cd $OUT && tar czf r.tgz r && rm -rf r
echo "total $(( $(date +%s) - t0 )) s"
