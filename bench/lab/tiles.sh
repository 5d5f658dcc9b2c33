# Sourced by the lab scripts: `tiles SPEC...` prints bench/decode.py's --variants for bwg's f16
# symmetric 128-feature tiles. SPEC: 192 = the 192-token split tile at the planner's split,
# 192w = its whole-K tile, 272@2 = the split tile in two parts, 272@2/n = the same unpaired,
# nopairs = the routed plan unpaired.
tiles() {
  local s="" t
  for t in "$@"; do
    case $t in
      nopairs) s="$s,/nopairs" ;;
      *w) s="$s,mate_bwg_f16_sym_m${t%w}_n128_whole_pre" ;;
      *@*/n) t=${t%/n}; s="$s,mate_bwg_f16_sym_m${t%%@*}_n128_split_pre@${t#*@}/nopairs" ;;
      *@*) s="$s,mate_bwg_f16_sym_m${t%%@*}_n128_split_pre@${t#*@}" ;;
      *) s="$s,mate_bwg_f16_sym_m${t}_n128_split_pre" ;;
    esac
  done
  echo "${s#,}"
}

# `forced_arms LIB DIR T0` reads lines "shape M SPEC..." from stdin and times each shape at M with
# the routed mate arm, cuBLAS fp16 and the forced arms `tiles SPEC...` (one process a line,
# 1000 ms sustain), writing DIR/f-shape-M.json / .log; T0 is the script's start (for the timing).
forced_arms() {
  local lib=$1 dir=$2 t0=$3 shape m specs
  while read -r shape m specs; do
    [ -z "$shape" ] && continue
    # shellcheck disable=SC2086  # specs holds several tile specs
    timeout 120 python3 bench/decode.py --library "$lib" --arms mate,fp16 --variants "$(tiles $specs)" --shapes "$shape" \
      --m "$m" --orders 2 --sustain-ms 1000 --json "$dir/f-$shape-$m.json" > "$dir/f-$shape-$m.log" 2>&1
    echo "forced $shape $m rc $? ($(( $(date +%s) - t0 )) s)"; grep -E "M=" "$dir/f-$shape-$m.log" | head -1 | cut -c1-420
  done
}
