set -u
# Session 55's last device try (~240 s of budget left): _s55.sh cut to what decides a merge.
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/r; t1=$(date +%s)
MATE_LIBRARY=$PWD/target/n256b/libmate.so timeout 80 python3 -m pytest -q -rf -m gpu tests/python/test_gpu_matrix.py \
  -k "parity and _m48_n256_" -p no:cacheprovider > $OUT/r/main-parity.log 2>&1
echo "main m48 n256 parity rc $? ($(( $(date +%s) - t1 )) s)"; tail -1 $OUT/r/main-parity.log | cut -c1-200; grep -E '^FAILED' $OUT/r/main-parity.log | head | cut -c1-250
MATE_LIBRARY=$PWD/target/m56/libmate.so timeout 100 python3 -m pytest -q -rf -m gpu tests/python/test_gpu_matrix.py \
  -k "_m56_n256_" -p no:cacheprovider > $OUT/r/tests.log 2>&1
echo "m56 tests rc $? ($(( $(date +%s) - t1 )) s)"; tail -1 $OUT/r/tests.log | cut -c1-200; grep -E '^FAILED' $OUT/r/tests.log | head -20 | cut -c1-250
A=n256b B=m56 SHAPES=llama70b.qkv,llama70b.o,llama70b.gate_up,llama70b.down,llama8b.gate_up,7168x7168 M=52,56 PDLS=1 TAG=ab56 bash bench/lab/ab.sh
python3 bench/lab/ab_report.py n256b m56 "$OUT/r/ab56-pdl1-*.json" 2>&1 | grep -v '^$' | cut -c1-170
A=n256b B=sk40 SHAPES=7168x7168,8192x6144,4096x10240,14336x3584 M=33,40 PDLS=1 TAG=sk40 bash bench/lab/ab.sh
python3 bench/lab/ab_report.py n256b sk40 "$OUT/r/sk40-pdl1-*.json" 2>&1 | grep -v '^$' | cut -c1-170
