export MATE_LIBRARY=$PWD/target/release/libmate.so MATE_COMMIT=7ca1c4a
timeout 200 python3 -m pytest -q -m gpu tests/python/test_gpu_matrix.py tests/python/test_launch_log.py tests/python/test_raw.py tests/python/test_op.py 2>&1 | tail -6 | tee $OUT/pytest.txt
timeout 120 python3 bench/decode.py --m 1 --arms read,mate,tinygemm,fp16,bf16 --json $OUT/decode-bulk-m1.json --png $OUT/decode-bulk-m1.png 2>&1 | grep -E "M=  1" 
timeout 120 python3 bench/decode_step.py --m 1 --json $OUT/decode-step-bulk.json 2>&1 | tail -4
B="llama8b.gate_up,llama8b.down,llama70b.o,llama70b.gate_up"
for lib in target/release/libmate.so target/band/libmate.so; do echo "## $lib"; timeout 100 python3 bench/decode.py --library $lib --shapes $B --m 1024,4096 --arms mate,fp16 --json $OUT/band-$(basename $(dirname $lib)).json 2>&1 | grep "M="; done
SYMS=mate_bulk_f16_sym_m1_n32_whole,mate_bulk_f16_sym_m1_n32_split,mate_bulk_bf16_zp_m1_n32_split_pre,mate_bulk_bf16_zp_m1_n32_whole
MATE_SANITIZE_TIMEOUT=40 MATE_SANITIZE_DRIVER_ARGS="--limit 6 --variants $SYMS" timeout 200 scripts/sanitize.sh $OUT/sanitize-bulk.json 2>&1 | tail -8
