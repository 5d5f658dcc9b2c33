set -u
# Prepared in session 46, not run: (1) bwg_one_an_sm's 32-token form in bf16 zp and group 32
# (plain; session 46 measured f16 g128 only): target/fin46 (the 16-token rule, 1f99257) against
# target/fin46b (both tiles: main from 2aad071 on; rebuild as `cargo build --release` on that
# commit if target/ was cleaned); (2) the 64-token tile's split counts at M = 48 / 64 in the plain
# context (--variants @S on main's library), the sweep that found the 16/32-token rule (call 8).
# ~3 min of device time. Predicted: (1) as f16 (0.78-0.86x on Llama-8B o / Qwen2-1.5B down /
# 7168 x 2048 / 3072 x 4096); (2) unknown: the 64-token tile has 2 stages of 2 chunks and the
# sliced sum on Llama-8B qkv / down, Qwen2-1.5B down.
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/r
t0=$(date +%s)
SH=llama8b.o,qwen1.5b.down,7168x2048,3072x4096
A=fin46 B=fin46b SHAPES=$SH M=24,32 TAG=zp32 PDLS=0 EXTRA="--dtype bfloat16 --zp" bash bench/lab/ab.sh
A=fin46 B=fin46b SHAPES=$SH M=24,32 TAG=g32w PDLS=0 EXTRA="--group 32" bash bench/lab/ab.sh
python3 bench/lab/ab_report.py fin46 fin46b "$OUT/r/zp32-pdl0-*.json" "$OUT/r/g32w-pdl0-*.json" 2>&1 | tail -20
cd $OUT && tar czf r0.tgz r && cd - > /dev/null
for m in 48 64; do
  MATE_PDL=0 timeout 150 python3 bench/decode.py --library $PWD/target/fin46b/libmate.so --arms mate,read \
    --shapes llama8b.qkv,llama8b.down,qwen1.5b.down,8192x1536,llama70b.o,7168x2048 --m $m --orders 2 \
    --variants @2,@3,@4,@6,@8,@11 --json $OUT/r/m64split-m$m.json > $OUT/r/m64split-m$m.log 2>&1
  echo "M=$m rc $? ($(( $(date +%s) - t0 )) s)"; grep -E "^   .*M=" $OUT/r/m64split-m$m.log | cut -c1-200
done
cd $OUT && tar czf r.tgz r && rm -rf r
echo "total $(( $(date +%s) - t0 )) s"
