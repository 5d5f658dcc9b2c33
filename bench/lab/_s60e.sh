set -u
# Session 60: the 256-token tile's even split of two instead of stream-K where stream-K saves
# fewer than BWG_SK_FIXUP_STAGES_M256 stages (src/plan/bwg.rs; library target/sk256). Libraries
# A = s59m (main), B = sk256, A B B A, PDL on, --sustain-ms 300; every shape whose plan moves
# (M = 256: N = 6144 / 7168; M = 1024: N = 1536).
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
A=s59m B=sk256 PDLS=1 TAG=m256 SHAPES=4096x6144,5120x7168,4096x7168,3584x7168,8192x7168,7168x7168,2048x6144,1536x6144,2048x7168 \
  M=256 EXTRA="--arms mate --sustain-ms 300" bash bench/lab/ab.sh
A=s59m B=sk256 PDLS=1 TAG=m1024 SHAPES=1536x1536,2048x1536,3072x1536,4096x1536,5120x1536 \
  M=1024 EXTRA="--arms mate --sustain-ms 300" bash bench/lab/ab.sh
python3 bench/lab/ab_report.py s59m sk256 "$OUT/r/m*-pdl1-*.json" 2>&1 | tail -30
