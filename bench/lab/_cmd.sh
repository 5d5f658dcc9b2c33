set -u
mkdir -p $OUT/r
# session 36: dect's narrow tile on small layers (target/dtile = pdlrule + dect_tile_rank)
D=$PWD/target/dtile/libmate.so
echo "== suite (dtile)"
MATE_LIBRARY=$D timeout 200 python3 -m pytest -q -m gpu tests/python --ignore=tests/python/test_tp_distributed.py -p no:cacheprovider -x 2>&1 | tail -3
for pdl in 1 0; do
  echo "== per call MATE_PDL=$pdl"
  MATE_PDL=$pdl timeout 120 python3 bench/decode.py --library $D --arms mate,read --shapes qwen1.5b.qkv,qwen1.5b.o --m 1,2,4,8,12,16 --variants mate_dect_f16_sym_m8_n32,mate_dect_f16_sym_m16_n32 --json $OUT/r/s36-qwen-dect-tiles-pdl$pdl.json 2>&1 | grep "M=" | grep -v FAILED | cut -c1-200
done
for lib in pdlrule dtile pdlrule dtile; do
  echo "== steps $lib"
  timeout 100 python3 bench/decode_step.py --library $PWD/target/$lib/libmate.so --models qwen1.5b --m 1,16 --rounds 3 --json $OUT/r/steps-qwen-$lib-$RANDOM.json 2>&1 | grep "step us" | cut -c1-200
done
for lib in pdlrule dtile pdlrule dtile; do
  echo "== e2e qwen $lib"
  timeout 100 python3 bench/e2e.py --model qwen1.5b --library $PWD/target/$lib/libmate.so --batches 1,8 --steps 2 --replays 8 --json $OUT/r/e2e-qwen-$lib-$RANDOM.json 2>&1 | grep -E "^w4a16 |in situ" | cut -c1-200
done
cd $OUT && tar czf r.tgz r && rm -rf r
