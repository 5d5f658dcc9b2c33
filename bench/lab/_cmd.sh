set -u
# session 41, device call 3, on the merged 64-token rule (target/merged): the GPU suite;
# racecheck / synccheck on the newly routed 64-token plans; the A/B against HEAD before it
# (target/new) in two more frame configurations (bf16 with zero points; fp16 group 32), A B B A,
# plain launches and PDL.
mkdir -p $OUT/r
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
L=$PWD/target/merged/libmate.so
echo "== suite (merged)"; t0=$(date +%s)
MATE_LIBRARY=$L timeout 200 python3 -m pytest -q -m gpu tests/python --ignore=tests/python/test_tp_distributed.py \
  -p no:cacheprovider --tb=short 2>&1 | grep -vE "^\s*$" | tail -8
echo "   ($(( $(date +%s) - t0 )) s)"
for tool in racecheck synccheck; do
  echo "== $tool"; t0=$(date +%s)
  MATE_LIBRARY=$L PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 150 compute-sanitizer --tool $tool --print-limit 5 \
    python3 bench/lab/racecheck_wrap.py mate_bwg_f16_sym_m64_n128_split_pre_sl@8960@132@0@1536@48 \
    mate_bwg_bf16_zp_m64_n128_split_pre_sl@4096@132@0@6144@40 mate_bwg_f16_sym_m64_n128_whole_pre@1536@132@0@17920@64 \
    mate_bwg_bf16_zp_m64_n128_split_pre@8192@132@0@10240@33 2>&1 | tail -6
  echo "   ($(( $(date +%s) - t0 )) s)"
done
SH=llama8b.qkv,llama8b.gate_up,llama70b.qkv,qwen1.5b.gate_up,qwen1.5b.down,llama8b.o
for cfg in "--zp --dtype bfloat16" "--group 32"; do
  tag=$(echo $cfg | tr -d ' -')
  for pdl in 0 1; do
    i=0
    for lib in new merged merged new; do
      i=$((i+1))
      echo "== $tag MATE_PDL=$pdl $i $lib"
      MATE_PDL=$pdl timeout 60 python3 bench/decode.py --library $PWD/target/$lib/libmate.so --arms mate,read \
        --shapes $SH --m 33,48,64 --orders 2 $cfg --json $OUT/r/m64-$tag-pdl$pdl-$lib-$i.json 2>&1 | grep -E "^\s*(llama|qwen)" | cut -c1-60
    done
  done
done
cd $OUT && tar czf r.tgz r && rm -rf r
