set -u
# Session 54 call 2: the rest of bench/lab/_s53a.sh (stream-K against the even split at 40 tokens;
# group 64 at M = 33 / 40, x48 against d40).
tar xzf target/pack/libs.tgz target/x48
mkdir -p $OUT/r
MATE_PDL=1 timeout 150 python3 bench/decode.py --library $PWD/target/d40/libmate.so --arms mate,read \
  --shapes 28672x2560,7168x7168,8192x6144,llama70b.qkv,llama70b.o,llama70b.gate_up,llama70b.down,llama8b.down \
  --m 33,40 --orders 2 --variants mate_bwg_f16_sym_m40_n128_sk,mate_bwg_f16_sym_m40_n128_split \
  --json $OUT/r/sk40.json 2>&1 | grep "M=" | grep -v "read " | cut -c1-300
A=x48 B=d40 SHAPES=llama8b.gate_up,llama8b.down,llama70b.down M=33,40 PDLS=1 TAG=g64 EXTRA="--group 64" bash bench/lab/ab.sh
python3 bench/lab/ab_report.py x48 d40 "$OUT/r/g64-pdl1-*.json" 2>&1 | grep -v '^$' | cut -c1-150
cd $OUT && tar czf r.tgz r && rm -rf r
