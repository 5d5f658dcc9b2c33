export MATE_LIBRARY=$PWD/target/release/libmate.so MATE_COMMIT=c0f8892
timeout 200 python3 -m pytest -q -m gpu tests/python/test_gpu_matrix.py tests/python/test_launch_log.py tests/python/test_raw.py tests/python/test_op.py 2>&1 | tail -3
timeout 120 python3 bench/decode.py --m 1 --arms read,mate,tinygemm,fp16,bf16 --json $OUT/decode-m1-persistent.json --png $OUT/decode-m1-persistent.png 2>&1 | grep -E "M=  1"
timeout 100 python3 bench/decode_step.py --m 1 --json $OUT/decode-step-persistent.json 2>&1 | grep "step us"
SYMS=mate_bulk_f16_sym_m1_n32_whole,mate_bulk_f16_sym_m1_n32_split,mate_bulk_bf16_zp_m1_n32_split_pre,mate_bulk_bf16_zp_m1_n32_whole
MATE_SANITIZE_TIMEOUT=40 MATE_SANITIZE_DRIVER_ARGS="--limit 8 --variants $SYMS" timeout 200 scripts/sanitize.sh $OUT/sanitize-bulk-persistent.json 2>&1 | tail -5
