set -u
# Session 56, prepared for session 57: what the word pick costs the bwg consumers. target/ownword =
# main's sources + bench/lab/s56_ownword.patch built with MATE_KERNEL_FLAGS=-DMATE_BWG_LAB_OWNWORD
# (a consumer lane takes its own 16 bytes as its four wgmma steps' words: one LDS.128 a chunk, no
# SEL / PRMT; wrong results until x is permuted into mma.sync's k-slot order, so timed by
# bench/lab/unchecked.py); target/nx = main's library (58b4d7b's code, which main's is).
# Predictions (words: +4 LDS a chunk cost ~10 %): the 256-feature tiles 0.85-0.92x at M = 48 / 64;
# the 128-feature decode tiles 0.90-0.97x at M = 16-40; prefill (M = 256) 0.95-1.0x.
# >= 10 % on the wide layers: build the x permutation (bench/NOTES.md session 56, "The word-order lead").
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/r; t1=$(date +%s)
run() {  # tag shapes m
  local i=0
  for lib in nx ownword ownword nx; do
    i=$((i+1))
    MATE_PDL=1 timeout 120 python3 bench/lab/unchecked.py --library "$PWD/target/$lib/libmate.so" --arms mate,read \
      --shapes "$2" --m "$3" --orders 2 --json "$OUT/r/$1-pdl1-$lib-$i.json" > /dev/null 2> "$OUT/r/$1-$i.err"
    echo "$1 $lib $i rc $? ($(( $(date +%s) - t1 )) s)"
  done
  python3 bench/lab/ab_report.py nx ownword "$OUT/r/$1-pdl1-*.json" 2>&1 | grep -v '^$' | cut -c1-170
}
run own256 llama70b.qkv,llama70b.gate_up,llama70b.down,llama8b.gate_up,7168x7168 48,64
run own128 llama8b.qkv,llama70b.o,llama70b.qkv,8192x6144,qwen1.5b.down 16,32,40
run ownpre llama8b.gate_up,llama70b.o 256
cd $OUT && tar czf r-d.tgz r && rm -rf r
