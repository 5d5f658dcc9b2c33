set -u
mkdir -p $OUT/r
# session 35: the programmatic launch in situ on Llama-8B (e2e, MATE_PDL=1 / 0 / 1 / 0)
L=$PWD/target/ws2/libmate.so
for p in 1 0 1 0; do
  echo "== MATE_PDL=$p"
  MATE_PDL=$p timeout 100 python3 bench/e2e.py --model llama8b --library $L --batches 1,8 --steps 2 --replays 8 --json $OUT/r/e2e-llama-pdl$p-$RANDOM.json 2>&1 | grep -E "w4a16 |inreads|nongemm|in situ" | cut -c1-200
done
cd $OUT && tar czf r.tgz r && rm -rf r
