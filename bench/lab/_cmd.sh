set -u
mkdir -p $OUT/r
# session 34: the op's own per-stream workspace (src/device/workspace.rs, target/opws3): its tests
# and the GPU suite, then decode_step.py --op-arm (the functional op without a workspace against
# .out with one), captured on the warm-up stream (bench/timing.py capture).
export MATE_LIBRARY=$PWD/target/opws3/libmate.so
timeout 100 python3 -m pytest -q tests/python/test_op_workspace.py -p no:cacheprovider 2>&1 | grep -E "^E |passed|failed|Error" | head -20
timeout 200 python3 -m pytest -q -m gpu tests/python --ignore=tests/python/test_tp_distributed.py -p no:cacheprovider 2>&1 | tail -2
timeout 150 python3 bench/decode_step.py --library $MATE_LIBRARY --models llama8b,qwen1.5b --m 1,16 --rounds 7 --op-arm --json $OUT/r/step-opws3.json 2>&1 | grep "M=\|Warn" | cut -c1-260
cd $OUT && tar czf r.tgz r && rm -rf r
