set -u
# session 42, device call 2: the shallow wide layers (K < 4096, K <= N, > 2^24 weights) on bwg's
# 32-token tile at M = 33-64 instead of wg (target/m32w) against HEAD (target/head), libraries
# A B B A in each launch context, both arm orders in each run; then bf16 zp and group 32 on three
# of them; then the routing sweep at M = 33-64 on HEAD (call 1 lost its files: 8 files at most).
mkdir -p $OUT/r
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
S=1536x17920,1536x28672,1024x57344,2048x13824,2048x11008,3072x8192,3072x16384,3584x18944,3584x6144,llama8b.o,llama8b.qkv
C=1536x17920,3072x16384,3584x18944
t0=$(date +%s)
for pdl in 1 0; do
  i=0
  for lib in head m32w m32w head; do
    i=$((i+1))
    MATE_PDL=$pdl timeout 100 python3 bench/decode.py --library $PWD/target/$lib/libmate.so --arms mate,read \
      --shapes $S --m 33,48,64 --orders 2 --json $OUT/r/ab-pdl$pdl-$lib-$i.json > $OUT/r/ab-pdl$pdl-$lib-$i.log 2>&1
    echo "ab pdl$pdl $lib $i rc $? ($(( $(date +%s) - t0 )) s)"
  done
  for cfg in "--dtype bfloat16 --zp" "--group 32"; do
    tag=$(echo $cfg | tr -d ' -'); i=0
    for lib in head m32w m32w head; do
      i=$((i+1))
      MATE_PDL=$pdl timeout 60 python3 bench/decode.py --library $PWD/target/$lib/libmate.so --arms mate,read $cfg \
        --shapes $C --m 33,48,64 --orders 2 --json $OUT/r/cfg-$tag-pdl$pdl-$lib-$i.json > $OUT/r/cfg-$tag-pdl$pdl-$lib-$i.log 2>&1
      echo "cfg $tag pdl$pdl $lib $i rc $? ($(( $(date +%s) - t0 )) s)"
    done
  done
  MATE_PDL=$pdl timeout 200 python3 bench/routing_sweep.py --library $PWD/target/head/libmate.so --m 33,48,64 \
    --json $OUT/r/sweep-pdl$pdl.json > $OUT/r/sweep-pdl$pdl.log 2>&1; echo "sweep pdl$pdl rc $? ($(( $(date +%s) - t0 )) s)"
done
cd $OUT && tar czf r.tgz r && rm -rf r
