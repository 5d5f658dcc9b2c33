export MATE_LIBRARY=$PWD/target/release/libmate.so MATE_COMMIT=fedddb4
timeout 200 python3 -m pytest -q -m gpu tests/python/test_gpu_matrix.py tests/python/test_launch_log.py tests/python/test_raw.py tests/python/test_op.py 2>&1 | tail -3 | tee $OUT/pytest.txt
for S in 2 3 4 6 8; do echo "## split $S"; MATE_BULK_SPLIT=$S timeout 60 python3 bench/decode.py --m 1 --arms read,mate --shapes llama8b.qkv,llama8b.o,llama8b.down,llama70b.qkv,llama70b.o,qwen1.5b.down --variants mate_bulk_f16_sym_m1_n32_split --json $OUT/bulk-split-$S.json 2>&1 | grep "M=  1"; done
timeout 120 python3 bench/decode.py --m 1 --arms read,mate,tinygemm,fp16,bf16 --json $OUT/decode-m1-final.json --png $OUT/decode-m1-final.png 2>&1 | grep -E "M=  1"
timeout 100 python3 bench/decode_step.py --m 1 --json $OUT/decode-step-final.json 2>&1 | grep "step us"
timeout 200 python3 bench/decode.py --shapes llama8b.qkv,llama8b.o,llama8b.gate_up,llama8b.down,llama70b.qkv,llama70b.o,llama70b.gate_up,llama70b.down --m 128,256,1024,4096 --arms mate,fp16 --json $OUT/prefill-band.json 2>&1 | grep "M="
