set -u
# Session 53 call 1: (a) the whole GPU suite on the merged build (target/d40, md5 4d79c7d9...),
# with session 52's amended tests; (b) stream-K against the even split on the four-chunk 40-token
# tile at M = 33 / 40 (lead 3); (c) group 64 at M = 33 / 40: main's old exact form (x48) against
# the pre-scaled 40-token tile it takes now (d40) (lead 4).
tar xzf target/pack/libs.tgz target/x48
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/r; t1=$(date +%s)
MATE_LIBRARY=$PWD/target/d40/libmate.so timeout 200 python3 -m pytest -q -rf -m gpu tests/python --ignore=tests/python/test_tp_distributed.py \
  -p no:cacheprovider > $OUT/r/suite.log 2>&1
echo "suite rc $? ($(( $(date +%s) - t1 )) s)"; tail -1 $OUT/r/suite.log | cut -c1-200; grep -E '^FAILED' $OUT/r/suite.log | head -20 | cut -c1-250
MATE_PDL=1 timeout 120 python3 bench/decode.py --library $PWD/target/d40/libmate.so --arms mate,read \
  --shapes 28672x2560,7168x7168,8192x6144,llama70b.qkv,llama70b.o,llama70b.gate_up,llama70b.down,llama8b.down \
  --m 33,40 --orders 2 --variants mate_bwg_f16_sym_m40_n128_sk,mate_bwg_f16_sym_m40_n128_split \
  --json $OUT/r/sk40.json 2>&1 | grep "M=" | grep -v "read " | cut -c1-300
A=x48 B=d40 SHAPES=llama8b.gate_up,llama8b.down,llama70b.down M=33,40 PDLS=1 TAG=g64 EXTRA="--group 64" bash bench/lab/ab.sh
python3 bench/lab/ab_report.py x48 d40 "$OUT/r/g64-pdl1-*.json" 2>&1 | grep -v '^$' | cut -c1-150
cd $OUT && tar czf r.tgz r && rm -rf r
