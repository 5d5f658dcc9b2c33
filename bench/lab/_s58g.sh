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
cd $OUT && tar czf f.tgz f && rm -rf f
