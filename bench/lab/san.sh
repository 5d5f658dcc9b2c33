# compute-sanitizer racecheck, then synccheck, over bench/lab/racecheck_wrap.py's forced calls (one
# sanitizer start per tool for all of them). From the repo root on the GPU machine:
#   bash bench/lab/san.sh <library folder under target/> <log dir> SYMBOL[@K[@SMS[@SPLIT[@N[@M]]]]] ...
# Prints each tool's summary line; the logs (with each call's error against float64) stay in <log dir>.
set -u
lib=$1 dir=$2; shift 2
t0=$(date +%s)
for tool in racecheck synccheck; do
  MATE_LIBRARY=$PWD/target/$lib/libmate.so PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 150 compute-sanitizer --tool $tool \
    python3 bench/lab/racecheck_wrap.py "$@" > "$dir/san-$tool.log" 2>&1
  echo "$tool rc $? ($(( $(date +%s) - t0 )) s): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|hazard' "$dir/san-$tool.log" | tail -2 | tr '\n' ' ')"
done
