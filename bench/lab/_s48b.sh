set -u
# session 48, call 2: a 48-token bwg tile (lab branch s48-m48: wgmma n = 48, 2 chunks a stage as the
# 64-token tile, chunk pairs pre-scaled) forced against the routed 64-token tile at M = 33-48, in one
# process (arms in both orders), MATE_PDL 1 (overlap) and 0 (plain), twice each. Prediction: the
# chain's wgmma part shrinks by a quarter, the dequantization not: 0.88-0.95x where the plan
# shape is the same (same split), flat where the chain is all dequantization.
tar xzf target/pack/lab.tgz
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
mkdir -p $OUT/r
t0=$(date +%s)
MATE_LIBRARY=$PWD/target/lab48/libmate.so timeout 200 python3 -m pytest -q -rf -m gpu tests/python -k "m48" \
  -p no:cacheprovider > $OUT/r/suite-m48.log 2>&1
echo "m48 tests rc $? ($(( $(date +%s) - t0 )) s): $(tail -1 $OUT/r/suite-m48.log)"
grep -E "^FAILED|^ERROR" $OUT/r/suite-m48.log | head -10
V=mate_bwg_f16_sym_m48_n128_whole_pre,mate_bwg_f16_sym_m48_n128_split_pre,mate_bwg_f16_sym_m48_n128_split_pre_sl,mate_bwg_f16_sym_m48_n128_sk_pre
S=llama8b.qkv,llama8b.gate_up,llama8b.down,llama70b.qkv,llama70b.o,llama70b.gate_up,llama70b.down,qwen1.5b.down
for pdl in 1 0 1 0; do
  MATE_PDL=$pdl timeout 150 python3 bench/decode.py --library $PWD/target/lab48/libmate.so --arms mate --variants $V \
    --shapes $S --m 33,40,48 --orders 2 --json $OUT/r/m48-pdl$pdl-$(date +%s).json > /dev/null 2> $OUT/r/m48-pdl$pdl.err
  echo "pdl$pdl rc $? ($(( $(date +%s) - t0 )) s)"
done
V2=mate_bwg_bf16_zp_m48_n128_whole_pre,mate_bwg_bf16_zp_m48_n128_split_pre,mate_bwg_bf16_zp_m48_n128_split_pre_sl,mate_bwg_bf16_zp_m48_n128_sk_pre
MATE_PDL=1 timeout 120 python3 bench/decode.py --library $PWD/target/lab48/libmate.so --arms mate --variants $V2 --dtype bfloat16 --zp \
  --shapes llama8b.qkv,llama8b.gate_up,llama70b.o,llama70b.gate_up,qwen1.5b.down --m 33,48 --orders 2 --json $OUT/r/m48zp-pdl1.json > /dev/null 2> $OUT/r/m48zp.err
echo "zp rc $? ($(( $(date +%s) - t0 )) s)"
cd $OUT && tar czf r.tgz r && rm -rf r
echo "total $(( $(date +%s) - t0 )) s"
