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
