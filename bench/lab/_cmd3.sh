set -u
# session 42, device call 3: the final rule (bwg_m32_splits: the shallow wide layers take the
# 32-token tile at M = 33-64 only where its plan splits K; target/s42) against HEAD (target/head),
# libraries A B B A per launch context, both arm orders; bf16 zp / group 32 on four moved shapes;
# the GPU suite and the sanitizers on the 32-token stream-K tile in two / three m-tiles.
mkdir -p $OUT/r
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
S=1536x17920,3584x18944,3072x8192,3584x6144,2048x11008,2560x28672,3072x13824,2560x6912,3584x5632,1024x17920,1536x28672,llama8b.o
C=3072x8192,3584x6144,2560x28672,3584x18944
t0=$(date +%s)
for pdl in 1 0; do
  i=0
  for lib in head s42 s42 head; do
    i=$((i+1))
    MATE_PDL=$pdl timeout 100 python3 bench/decode.py --library $PWD/target/$lib/libmate.so --arms mate,read \
      --shapes $S --m 33,48,64 --orders 2 --json $OUT/r/ab-pdl$pdl-$lib-$i.json > /dev/null 2>$OUT/r/err-ab-$pdl-$i.log
    echo "ab pdl$pdl $lib $i rc $? ($(( $(date +%s) - t0 )) s)"
  done
  for cfg in "--dtype bfloat16 --zp" "--group 32"; do
    tag=$(echo $cfg | tr -d ' -'); i=0
    for lib in head s42 s42 head; do
      i=$((i+1))
      MATE_PDL=$pdl timeout 60 python3 bench/decode.py --library $PWD/target/$lib/libmate.so --arms mate,read $cfg \
        --shapes $C --m 33,48,64 --orders 2 --json $OUT/r/cfg-$tag-pdl$pdl-$lib-$i.json > /dev/null 2>$OUT/r/err-$tag-$pdl-$i.log
      echo "cfg $tag pdl$pdl $lib $i rc $? ($(( $(date +%s) - t0 )) s)"
    done
  done
done
echo "== suite"
MATE_LIBRARY=$PWD/target/s42/libmate.so timeout 200 python3 -m pytest -q -m gpu tests/python --ignore=tests/python/test_tp_distributed.py -p no:cacheprovider > $OUT/r/suite.log 2>&1
echo "suite rc $? ($(( $(date +%s) - t0 )) s)"; tail -3 $OUT/r/suite.log
for tool in synccheck racecheck; do
  for a in mate_bwg_f16_sym_m32_n128_sk@1536@132@0@4096@48 mate_bwg_bf16_zp_m32_n128_sk@1536@20@0@2048@64; do
    MATE_LIBRARY=$PWD/target/s42/libmate.so PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 120 compute-sanitizer --tool $tool \
      python3 bench/lab/racecheck_wrap.py $a > $OUT/r/san-$tool-${a%%@*}.log 2>&1
    echo "$tool $a rc $? ($(( $(date +%s) - t0 )) s)"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|err " $OUT/r/san-$tool-${a%%@*}.log | head -3
  done
done
cd $OUT && tar czf r.tgz r && rm -rf r
