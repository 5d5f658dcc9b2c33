set -u
# session 50, when little device time is left: _s50a.sh's two library A/Bs in the overlap context
# only (PDLS=1), the 40 / 56-token tiles first; the forced Llama-8B o step left out.
tar xzf target/pack/libs.tgz
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/r
A=main49 B=t4056 SHAPES=llama8b.qkv,llama8b.gate_up,llama8b.down,llama70b.qkv,llama70b.o,llama70b.gate_up,llama70b.down,qwen1.5b.down \
  M=33,40,48,49,56,64 TAG=t4056 PDLS=1 bash bench/lab/ab.sh
python3 bench/lab/ab_report.py main49 t4056 "$OUT/r/t4056-pdl1-*.json" 2>&1 | grep -v '^$' | cut -c1-150
A=main49 B=dsk48 SHAPES=llama70b.qkv,8192x6144,7168x7168,14336x5120,5120x14336,28672x2560,4096x7168 \
  M=33,48 TAG=dsk PDLS=1 bash bench/lab/ab.sh
python3 bench/lab/ab_report.py main49 dsk48 "$OUT/r/dsk-pdl1-*.json" 2>&1 | grep -v '^$' | cut -c1-150
cd $OUT && tar czf r.tgz r && rm -rf r
