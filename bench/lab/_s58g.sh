set -u
# session 58: what the stage releases' proxy fences cost. bench/lab/s58_fence_lab.patch on main:
# xnf = -DMATE_BWG_LAB_XNOFENCE (no fence before the x part's in-loop release: wgmma reads and TMA
# refills are both async proxy, so nothing to order; formally sound), anf = also
# -DMATE_BWG_LAB_WNOFENCE (none before the weights' release either: LDS reads, bulk refills;
# CUTLASS-style, formally open). nx = main. Prediction (pc sampling: the two release sites ~4.5 %
# of the samples, on the consumers' path between the wgmma wait and the next issue): xnf 0.97-0.99x,
# anf 0.95-0.98x on the 256-token plans; the decode tiles (16-64 tokens) 0.97-1.0x.
# rel1 = bench/lab/s58_rel1.patch: the weights' release moves to the x part's (the producer waited
# for both before refilling a slot anyway), so one fence and one arrive a stage, formally sound:
# as anf or better.
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/f; T0=$(date +%s)
LL=llama8b.qkv,llama8b.o,llama8b.gate_up,llama8b.down,llama70b.qkv,llama70b.o,llama70b.gate_up,llama70b.down
i=0
for lib in nx xnf anf rel1 rel1 anf xnf nx; do
  i=$((i+1))
  timeout 100 python3 bench/decode.py --library $PWD/target/$lib/libmate.so --arms mate --shapes $LL --m 256,1024,4096 \
    --sustain-ms 300 --json $OUT/f/pf-pdl1-$lib-$i.json > /dev/null 2> $OUT/f/pf-$i.err
  echo "prefill $lib $i rc $? ($(( $(date +%s) - T0 )) s)"
done
for b in xnf anf rel1; do python3 bench/lab/ab_report.py nx $b "$OUT/f/pf-pdl1-*.json" 2>&1 | grep -v '^$' | cut -c1-150; done
i=0
for lib in nx xnf anf rel1 rel1 anf xnf nx; do
  i=$((i+1))
  timeout 60 python3 bench/decode.py --library $PWD/target/$lib/libmate.so --arms mate,read --orders 2 \
    --shapes llama8b.gate_up,llama70b.o,llama8b.qkv,7168x7168 --m 16,48,64 --json $OUT/f/dc-pdl1-$lib-$i.json > /dev/null 2> $OUT/f/dc-$i.err
  echo "decode $lib $i rc $? ($(( $(date +%s) - T0 )) s)"
done
for b in xnf anf rel1; do python3 bench/lab/ab_report.py nx $b "$OUT/f/dc-pdl1-*.json" 2>&1 | grep -v '^$' | cut -c1-150; done
for b in xnf anf rel1; do
  MATE_LIBRARY=$PWD/target/$b/libmate.so timeout 60 python3 -m pytest -q -rf -m gpu tests/python/test_gpu_matrix.py -p no:cacheprovider > $OUT/f/tests-$b.log 2>&1
  echo "$b tests rc $? ($(( $(date +%s) - T0 )) s)"; tail -1 $OUT/f/tests-$b.log | cut -c1-200
done
# rel1's protocol under the sanitizers, rings that wrap (K = 4096), whole / split / stream-K / sliced / 256-feature
V="mate_bwg_f16_sym_m256_n128_whole_pre@4096 mate_bwg_f16_sym_m128_n128_split_pre@4160@7@3@128@200 mate_bwg_f16_sym_m32_n128_split@4096 mate_bwg_bf16_zp_m64_n128_split_pre@4096@132@5@1024@50 mate_bwg_f16_sym_m48_n256_whole@4096@132@0@512@48"
for tool in racecheck synccheck; do
  MATE_LIBRARY=$PWD/target/rel1/libmate.so PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 150 compute-sanitizer --tool $tool \
    python3 bench/lab/racecheck_wrap.py $V > $OUT/f/san-$tool.log 2>&1
  echo "$tool rc $? ($(( $(date +%s) - T0 )) s): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|hazard' $OUT/f/san-$tool.log | tail -2 | tr '\n' ' ')"
done
cd $OUT && tar czf f.tgz f && rm -rf f
