#!/usr/bin/env bash
# Builds the libFuzzer harnesses (fuzz/, docs/fuzzing.md) in build-fuzz with clang, ASan and
# UBSan, makes their seed corpora from the bundled models, runs each harness for the time given,
# then prints per harness the executions, their rate and what was found.
#
#   tools/fuzz/libfuzzer.sh --seconds 25                  # the test run (tools/run-tests.sh)
#   tools/fuzz/libfuzzer.sh --seconds 14400 --parallel    # hours, all harnesses at once
#   tools/fuzz/libfuzzer.sh --seconds 600 check           # one harness
#
# A harness goes on after a finding and saves each in build-fuzz/crashes/<harness>/ (crash-*,
# leak-*, timeout-*, oom-*). Each crash and leak is replayed to find where it happens: one at a
# place fuzz/regressions/open.txt lists is known (its fix is pending) and only reported; any
# other makes the script exit 1. Slow inputs (timeout-*, slow-unit-*) and memory blow-ups (oom-*) are
# reported for a look, without failing. Corpora grow in build-fuzz/corpus/<harness> from run
# to run. A crash worth keeping is copied to fuzz/regressions/<harness>/, where the normal test
# run replays it. ONNX_TV_FUZZ_CMAKE_ARGS adds arguments to the configure step.
set -euo pipefail
cd "$(dirname "$0")/../.."

seconds=3600
parallel=0
harnesses=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --parallel) parallel=1; shift ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    -*) echo "unknown option $1" >&2; exit 2 ;;
    *) harnesses+=("$1"); shift ;;
  esac
done
[ ${#harnesses[@]} -gt 0 ] || harnesses=(load_model plan_json check)

build=build-fuzz
start=$(date +%s)
if [ ! -f "$build/CMakeCache.txt" ]; then
  # A unity build: the instrumented libraries build in 2.5 minutes on two cores instead of 4.
  # shellcheck disable=SC2086
  CXX=clang++ cmake -S . -B "$build" -DONNX_TV_FUZZ=ON -DCMAKE_UNITY_BUILD=ON \
    ${ONNX_TV_FUZZ_CMAKE_ARGS:-} >/dev/null
fi
targets=()
for h in "${harnesses[@]}"; do targets+=(--target "fuzz_$h"); done
cmake --build "$build" -j"$(nproc)" "${targets[@]}" >/dev/null
built=$(date +%s)
echo "harnesses built in $((built - start)) s"
if [ ! -d "$build/seeds" ]; then
  /usr/bin/python3 tools/fuzz/libfuzzer_seeds.py "$build/seeds.tmp"
  mv "$build/seeds.tmp" "$build/seeds"
fi

# Per harness: the longest input tried, and how long one input may take. A check of a tiny
# case takes milliseconds; seconds mean the solver met a blow-up worth a look.
max_len() { case "$1" in plan_json) echo 8192 ;; *) echo 65536 ;; esac; }
per_input_timeout() { case "$1" in check) echo 30 ;; *) echo 10 ;; esac; }

export ASAN_OPTIONS="${ASAN_OPTIONS:-allocator_may_return_null=1:detect_stack_use_after_return=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
# Scratch files of the harnesses go to memory where there is such a folder.
if [ -d /dev/shm ] && [ -w /dev/shm ]; then export TMPDIR=/dev/shm; fi

run_one() {
  local h=$1
  local corpus=$build/corpus/$h crashes=$build/crashes/$h log=$build/logs/$h.log
  mkdir -p "$corpus" "$crashes" "$build/logs"
  # Kept crashers are inputs too, except those whose fix is not in (fuzz/regressions/open.txt).
  local kept=$build/regressions/$h
  rm -rf "$kept" && mkdir -p "$kept"
  for f in fuzz/regressions/"$h"/*; do
    [ -f "$f" ] || continue
    grep -q "^$h/$(basename "$f")[[:space:]]" fuzz/regressions/open.txt || cp "$f" "$kept/"
  done
  # -fork=1: inputs run in a child process, so that the run goes on after a crash.
  "$build/fuzz_$h" "$corpus" "$build/seeds/$h" "$kept" \
    -dict=fuzz/onnx_tv.dict -max_total_time="$seconds" -max_len="$(max_len "$h")" \
    -timeout="$(per_input_timeout "$h")" -rss_limit_mb=3072 -print_final_stats=1 -print_funcs=0 \
    -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
    -artifact_prefix="$crashes/" >"$log" 2>&1 || echo "fuzz_$h exited $?" >>"$log"
}

for h in "${harnesses[@]}"; do
  if [ $parallel = 1 ]; then run_one "$h" & else run_one "$h"; fi
done
wait

# Where a crash happens: the first frame in the sources, or the harness's message for an
# exception ("onnx-tv fuzz: ...").
crash_site() {
  local out
  out=$("$build/fuzz_$1" "$2" 2>&1 || true)
  local frame
  frame=$(grep -oE 'src/[a-z_]+/[a-z_]+\.(cpp|h):[0-9]+' <<<"$out" | head -1 || true)
  if [ -n "$frame" ]; then echo "$frame"; return; fi
  sed -n 's/^onnx-tv fuzz: //p' <<<"$out" | head -1 | cut -c1-120
}

failed=0
echo "libFuzzer, $seconds s per harness:"
for h in "${harnesses[@]}"; do
  log=$build/logs/$h.log
  # The last status line ("#123456 ... exec/s: 789 ...") holds the executions so far.
  execs=$(grep -oE '^#[0-9]+' "$log" | tail -1 | tr -d '#')
  rate=$(( ${execs:-0} / (seconds > 0 ? seconds : 1) ))
  found=$(find "$build/crashes/$h" -type f -newermt "@$built" | sort)
  corpus=$(find "$build/corpus/$h" -type f | wc -l)
  printf '  %-11s %10s execs  %6s/s  %3s findings  corpus %s  (log %s)\n' \
         "$h" "${execs:-0}" "$rate" "$(grep -c . <<<"$found" || true)" "$corpus" "$log"
  for f in $found; do
    case "$(basename "$f")" in
      timeout-*) echo "    slow input (past $(per_input_timeout "$h") s): $f" ;;
      # libFuzzer's note of an input past 10 s that still ended within the timeout: not a
      # crash, and under sanitizers and load often a second or two in the normal build.
      slow-unit-*) echo "    slow input (past 10 s, within the timeout): $f" ;;
      oom-*) echo "    memory past 3 GB: $f" ;;
      *)
        site=$(crash_site "$h" "$f")
        if [ -n "$site" ] && grep -qF -- "$site" fuzz/regressions/open.txt; then
          echo "    known, fix pending (open.txt): $site: $f"
        else
          echo "    NEW CRASH at ${site:-an unknown place}: $f"
          failed=1
        fi ;;
    esac
  done
done
exit $failed
