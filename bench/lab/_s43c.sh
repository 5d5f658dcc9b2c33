set -u
# session 43, device call 3: the M = 1-8 bulk rules (target/s43: dect -> bulk at M = 1 where dect's
# 32-feature CTAs exceed one wave; bulk_m1_narrow_whole; bulk_narrow_multi at M = 5-8) against
# main (target/main), libraries A B B A per launch context, both arm orders; then the GPU suite on s43.
t0=$(date +%s)
A=main B=s43 TAG=f16 M=1,6,8 SHAPES=3584x4608,4096x14336,5120x7168,8192x14336,8192x1536,8192x2560,2048x8192,7168x4096,llama8b.qkv,llama8b.down,llama70b.qkv,4096x3072 \
  bash bench/lab/ab.sh
A=main B=s43 TAG=zp M=1,8 EXTRA="--dtype bfloat16 --zp" SHAPES=3584x4608,8192x1536,llama8b.qkv,8192x2560,2048x8192,7168x4096 bash bench/lab/ab.sh
A=main B=s43 TAG=g32 M=1 EXTRA="--group 32" SHAPES=3584x4608,8192x1536,4096x14336 bash bench/lab/ab.sh
echo "ab done ($(( $(date +%s) - t0 )) s)"
MATE_LIBRARY=$PWD/target/s43/libmate.so timeout 200 python3 -m pytest -q -m gpu tests/python --ignore=tests/python/test_tp_distributed.py \
  -p no:cacheprovider -x 2>&1 | tail -4
echo "total ($(( $(date +%s) - t0 )) s)"
cd $OUT && tar czf r.tgz r && rm -rf r
