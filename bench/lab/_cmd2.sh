set -u
# usage: bash bench/lab/_cmd2.sh PDL (0 or 1): one context a device call (4 runs, < 600 s)
pdl=$1
mkdir -p $OUT/r2
# session 39's plan: A/B of bench/lab/s38_bwg_m64_tile.patch (target/m64) against HEAD (target/new),
# libraries new m64 m64 new, both orders inside each run, with plain launches and with PDL.
# Moves at M = 33-64: 8B qkv, 8B gate_up, 70B qkv, Qwen gate_up, Qwen down; 8B o is the control.
SH=llama8b.qkv,llama8b.gate_up,llama70b.qkv,qwen1.5b.gate_up,qwen1.5b.down,llama8b.o
i=0
for lib in new m64 m64 new; do
  i=$((i+1))
  echo "== $i MATE_PDL=$pdl $lib"
  MATE_PDL=$pdl timeout 140 python3 bench/decode.py --library $PWD/target/$lib/libmate.so --arms mate,read \
    --shapes $SH --m 33,48,64 --orders 2 --json $OUT/r2/m64-pdl$pdl-$lib-$i.json 2>&1 | grep -E "^\s*(llama|qwen)|M *=" | cut -c1-150
done
cd $OUT && tar czf r2-pdl$pdl.tgz r2 && rm -rf r2
