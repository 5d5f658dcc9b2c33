set -u
# Session 57, the last ~250 s of budget: xin against nx only (decode.py's float64 check guards each
# routed call it times; the GPU suite on xin is left to the next session). Predictions: _s57c.sh.
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/r
A=nx B=xin SHAPES=llama70b.gate_up,llama70b.o,llama8b.qkv,7168x7168 M=32,48,64 PDLS=1 TAG=xin bash bench/lab/ab.sh
python3 bench/lab/ab_report.py nx xin "$OUT/r/xin-pdl1-*.json" 2>&1 | grep -v '^$' | cut -c1-170
cd $OUT && tar czf r-x.tgz r && rm -rf r
