# Library A/B on the GPU machine, as sessions 41-42 ran them: libraries A B B A (one process
# each, both arm orders in each run) in each launch context (MATE_PDL=1, then 0), decode.py's JSON
# per run under $OUT/r (read them back with bench/lab/ab_report.py). From the repo root:
#   A=head B=new SHAPES=1536x17920,llama8b.o M=33,48,64 TAG=ab EXTRA="--dtype bfloat16 --zp" bash bench/lab/ab.sh
# A / B name folders target/<name>/libmate.so (carried); SHAPES / M / EXTRA go to bench/decode.py.
set -u
: "${A:?A=<library folder under target/>}" "${B:?B=<library folder under target/>}" "${SHAPES:?}" "${M:?}"
TAG=${TAG:-ab}; EXTRA=${EXTRA:-}; PDLS=${PDLS:-1 0}
mkdir -p "$OUT/r"
t0=$(date +%s)
for pdl in $PDLS; do
  i=0
  for lib in "$A" "$B" "$B" "$A"; do
    i=$((i+1))
    # shellcheck disable=SC2086  # EXTRA holds several decode.py arguments
    MATE_PDL=$pdl timeout 120 python3 bench/decode.py --library "$PWD/target/$lib/libmate.so" --arms mate,read $EXTRA \
      --shapes "$SHAPES" --m "$M" --orders 2 --json "$OUT/r/$TAG-pdl$pdl-$lib-$i.json" > /dev/null 2> "$OUT/r/$TAG-pdl$pdl-$i.err"
    echo "$TAG pdl$pdl $lib $i rc $? ($(( $(date +%s) - t0 )) s)"
  done
done
