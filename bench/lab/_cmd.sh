set -u
mkdir -p $OUT/r
# session 31: the merged library (288 / 320 wide tiles routed): the GPU suite, then the routed plans at
# a few points (the 352-token points back on the one-wgmma tiles)
L=$PWD/target/final/libmate.so
MATE_LIBRARY=$L timeout 200 python3 -m pytest -q -m gpu tests/python --ignore=tests/python/test_tp_distributed.py -p no:cacheprovider 2>&1 | tail -3
timeout 200 python3 bench/decode.py --library $L --arms mate,fp16 --shapes llama8b.down,llama70b.gate_up --m 288,340,640,704 --orders 2 --sustain-ms 300 --json $OUT/r/final.json > $OUT/r/final.log 2>&1; echo "final rc=$?"
cd $OUT && tar czf r.tgz r && rm -rf r
