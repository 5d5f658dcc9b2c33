#!/usr/bin/env bash
# Builds the libraries bench/lab/_s65a.sh / _s65b.sh / _s65c.sh carry, on a fresh checkout of main
# (session 64's branches were lost with its checkout: the drafts travel as patches on main now):
#   target/main65    main's library code
#   target/round65   + s65_round_tile.patch      (plan only)
#   target/pairwide  + s65_pair_wide.patch       (kernels/bwg.cuh and the plan)
#   target/pairrule  + s65_pair_wide_rule.patch  (on pair-wide; plan only)
#   target/widesum   + s65_wide_sum.patch        (kernels/bwg.cuh only)
# Each branch is built in this tree (same path: cmake rebuilds only what changed; a worktree
# elsewhere rebuilds every kernel, ~6 min on 2 cores), then main is checked out again. ~25 min.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ -z "$(git status --porcelain --untracked-files=no)" ] || { echo "build_s65.sh: commit or stash first (tracked changes)"; exit 1; }
base=$(git rev-parse --abbrev-ref HEAD)
bash scripts/setup.sh > /dev/null
source scripts/env.sh
lib() { mkdir -p "target/$1" && cp target/release/libmate.so "target/$1/" && echo "target/$1 $(md5sum < "target/$1/libmate.so" | cut -c1-8)"; }
lib main65
branch() {  # branch NAME FROM PATCH...
  local name=$1 from=$2; shift 2
  git branch -f "$name" "$from"
  git checkout -q "$name"
  git am -q "$@"
  cargo build --release 2>&1 | tail -1
}
branch round-tile "$base" bench/lab/s65_round_tile.patch && lib round65
branch pair-wide "$base" bench/lab/s65_pair_wide.patch && lib pairwide
branch pair-wide-rule pair-wide bench/lab/s65_pair_wide_rule.patch && lib pairrule
branch wide-sum "$base" bench/lab/s65_wide_sum.patch && lib widesum
git checkout -q "$base"
