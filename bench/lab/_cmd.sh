set -u
mkdir -p $OUT/r
# session 36: per-layer in situ (decode_step --between --projs), HEAD (ws2) vs the capture rule (pdlrule); steps unchanged?
for p in qkv o gate_up down; do for lib in ws2 pdlrule; do
  echo "== between $p $lib"
  timeout 90 python3 bench/decode_step.py --library $PWD/target/$lib/libmate.so --models qwen1.5b --m 1 --rounds 3 --between --projs $p --json $OUT/r/between-$p-$lib.json 2>&1 | tail -6 | cut -c1-220
done; done
for lib in ws2 pdlrule; do
  echo "== steps $lib"
  timeout 150 python3 bench/decode_step.py --library $PWD/target/$lib/libmate.so --models llama8b,qwen1.5b --m 1,16 --rounds 3 --json $OUT/r/steps-$lib.json 2>&1 | tail -12 | cut -c1-220
done
cd $OUT && tar czf r.tgz r && rm -rf r
