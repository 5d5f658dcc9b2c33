#!/usr/bin/env bash
# Runs scripts/sanitize_driver.py (a sweep of small problems through torch.ops.mate.w4a16_gemm,
# every result checked) under compute-sanitizer, once per tool: memcheck, racecheck, initcheck,
# synccheck. Prints one summary line per tool and writes a JSON summary; exits 0 only when every
# tool ran to the end with 0 errors reported and the driver found every result right.
#
# On the GPU machine (compute-sanitizer, python3 with torch; no Rust needed), from the repo root:
#   MATE_LIBRARY=$PWD/target/release/libmate.so scripts/sanitize.sh [REPORT.json]
# REPORT.json defaults to $OUT/sanitize.json when $OUT is set, else target/sanitize/sanitize.json.
# Per-tool logs go to sanitize-logs/ beside it (TOOL.log: the sanitizer's; TOOL.stdout: the driver's).
#
# Environment:
#   MATE_LIBRARY               the library (default target/release/libmate.so)
#   PYTHON                     python with torch (default python3)
#   COMPUTE_SANITIZER          the sanitizer binary (default: on PATH, else /usr/local/cuda/bin)
#   MATE_SANITIZE_TOOLS        tools to run (default "memcheck racecheck initcheck synccheck")
#   MATE_SANITIZE_TIMEOUT      seconds per tool run, 0 = none (default 0); a run cut off fails
#   MATE_SANITIZE_DRIVER_ARGS  extra driver arguments, e.g. "--limit 30"
#   MATE_SANITIZE_EXTRA        extra sanitizer arguments for every tool
#
# Why PYTORCH_NO_CUDA_MEMORY_CACHING=1: torch's caching allocator carves tensors out of large
# cudaMalloc'd segments and reuses freed blocks. To the sanitizer a segment is one allocation, so
# memcheck would not see a read past the end of a tensor that stays inside its segment, and
# initcheck would take memory written by an earlier, freed tensor as initialised (and can report
# torch's own reuse patterns). With caching off every tensor is its own cudaMalloc of its exact
# size, so both tools judge mate's accesses against the tensors mate was given.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${PYTHON:-python3}"
export MATE_LIBRARY="${MATE_LIBRARY:-$ROOT/target/release/libmate.so}"
REPORT="${1:-}"
if [[ -z "$REPORT" ]]; then
  if [[ -n "${OUT:-}" ]]; then REPORT="$OUT/sanitize.json"; else REPORT="$ROOT/target/sanitize/sanitize.json"; fi
fi
LOGS="$(dirname "$REPORT")/sanitize-logs"
TOOLS="${MATE_SANITIZE_TOOLS:-memcheck racecheck initcheck synccheck}"
TIMEOUT="${MATE_SANITIZE_TIMEOUT:-0}"
ERROR_RC=86  # the sanitizer's exit code when it reported errors (--error-exitcode)

SAN="${COMPUTE_SANITIZER:-}"
if [[ -z "$SAN" ]]; then
  SAN="$(command -v compute-sanitizer || true)"
  [[ -z "$SAN" && -x /usr/local/cuda/bin/compute-sanitizer ]] && SAN=/usr/local/cuda/bin/compute-sanitizer
fi
if [[ -z "$SAN" || ! -x "$SAN" ]]; then
  echo "sanitize.sh: compute-sanitizer not found (set COMPUTE_SANITIZER)" >&2
  exit 2
fi
if [[ ! -f "$MATE_LIBRARY" ]]; then
  echo "sanitize.sh: library not found: $MATE_LIBRARY (build it, or set MATE_LIBRARY)" >&2
  exit 2
fi
mkdir -p "$LOGS"
export PYTORCH_NO_CUDA_MEMORY_CACHING=1

# memcheck: pad every allocation, so an overrun lands in padding rather than in a neighbour
# tensor (only where this sanitizer version has the option).
MEMCHECK_EXTRA=()
if "$SAN" --help 2>&1 | grep -q -- '--padding'; then MEMCHECK_EXTRA=(--padding 512); fi

echo "sanitize.sh: $("$SAN" --version 2>&1 | tail -n 1); library $MATE_LIBRARY; logs in $LOGS"
for tool in $TOOLS; do
  case "$tool" in
    memcheck) extra=(--leak-check no "${MEMCHECK_EXTRA[@]}") ;;
    racecheck | initcheck | synccheck) extra=() ;;
    *) echo "sanitize.sh: unknown tool '$tool'" >&2; exit 2 ;;
  esac
  rm -f "$LOGS/$tool.log" "$LOGS/$tool.driver.json" "$LOGS/$tool.rc"
  cmd=("$SAN" --tool "$tool" --error-exitcode "$ERROR_RC" --print-limit 100 --log-file "$LOGS/$tool.log"
       "${extra[@]}")
  # shellcheck disable=SC2206  # word splitting of the user's extra arguments is intended
  cmd+=(${MATE_SANITIZE_EXTRA:-})
  # shellcheck disable=SC2206
  cmd+=("$PYTHON" "$ROOT/scripts/sanitize_driver.py" --json "$LOGS/$tool.driver.json" ${MATE_SANITIZE_DRIVER_ARGS:-})
  if [[ "$TIMEOUT" != 0 ]]; then cmd=(timeout -k 10 "$TIMEOUT" "${cmd[@]}"); fi
  echo "sanitize.sh: running $tool ..."
  start=$(date +%s)
  "${cmd[@]}" >"$LOGS/$tool.stdout" 2>&1
  rc=$?
  echo "$rc $(($(date +%s) - start))" >"$LOGS/$tool.rc"
  tail -n 1 "$LOGS/$tool.stdout"
done

# Summary: one line per tool, and the JSON report.
# shellcheck disable=SC2086  # TOOLS is a word list
"$PYTHON" - "$LOGS" "$REPORT" "$ERROR_RC" $TOOLS <<'PY'
import json, re, sys
from pathlib import Path

logs, report, error_rc, tools = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
summary, all_ok = {"tools": {}, "logs": str(logs)}, True
for tool in tools:
    rc, secs = (logs / f"{tool}.rc").read_text().split()
    rc, secs = int(rc), int(secs)
    log = (logs / f"{tool}.log").read_text(errors="replace") if (logs / f"{tool}.log").exists() else ""
    m = re.findall(r"ERROR SUMMARY: (\d+) errors?", log)
    errors = int(m[-1]) if m else None
    hazards = re.findall(r"RACECHECK SUMMARY: (\d+) hazards? displayed \((\d+) errors?, (\d+) warnings?\)", log)
    if errors is None and hazards:  # racecheck ends with its own summary line, not ERROR SUMMARY
        errors = int(hazards[-1][1]) + int(hazards[-1][2])
    headlines = [ln.strip("= ").strip() for ln in log.splitlines()
                 if re.match(r"=+ (Invalid|Program hit|Uninitialized|Barrier|Error|Race|Warning|Malloc|Cuda|.*[Hh]azard)", ln)]
    api_errors = sum("Program hit" in h for h in headlines)
    dj = logs / f"{tool}.driver.json"
    driver = json.loads(dj.read_text()) if dj.exists() else None
    problems = []
    if errors is None:
        problems.append("the sanitizer did not finish (no ERROR/RACECHECK SUMMARY in its log)")
    elif errors:
        problems.append(f"{errors} errors reported")
    if rc in (124, 137):
        problems.append("timed out (MATE_SANITIZE_TIMEOUT)")
    elif rc == error_rc:
        pass  # counted above
    elif rc != 0:
        problems.append(f"exit status {rc}")
    if driver is None:
        problems.append("the driver wrote no summary (crashed or was stopped)")
    elif not driver["ok"]:
        problems.append(f"driver: {driver['wrong_results']} wrong results, {driver['exceptions']} exceptions")
    ok = not problems
    all_ok &= ok
    entry = {
        "runs": 1, "ok": ok, "errors_reported": errors, "api_errors_reported": api_errors,
        "exit_status": rc, "seconds": secs, "problems": problems,
        "first_reports": headlines[:20], "driver": driver,
    }
    if hazards:
        entry["racecheck"] = {"hazards": int(hazards[-1][0]), "errors": int(hazards[-1][1]), "warnings": int(hazards[-1][2])}
    if not ok:
        entry["log_tail"] = log.splitlines()[-40:]
    summary["tools"][tool] = entry
    d = f"{driver['cases']} cases, {driver['op_calls']} op calls, {driver['wrong_results']} wrong" if driver else "no driver summary"
    print(f"{tool:10s} runs 1  errors reported {errors if errors is not None else 'n/a'}"
          f"  ({d}; exit {rc}; {secs} s)  {'OK' if ok else 'FAIL: ' + '; '.join(problems)}")
summary["ok"] = all_ok
summary["runs"] = len(tools)
summary["errors_reported"] = sum((t["errors_reported"] or 0) for t in summary["tools"].values())
report.parent.mkdir(parents=True, exist_ok=True)
report.write_text(json.dumps(summary, indent=1))
print(f"sanitize.sh: {len(tools)} runs, {summary['errors_reported']} errors reported, "
      f"{'all OK' if all_ok else 'FAILED'}; report {report}")
sys.exit(0 if all_ok else 1)
PY
