#!/usr/bin/env bash
# Builds the libFuzzer harnesses (fuzz/, docs/fuzzing.md) in build-fuzz with clang, ASan and
# UBSan, makes their seed corpora from the bundled models, and runs each harness, then prints
# per harness the executions, their rate and the crashes found.
#
#   tools/fuzz/libfuzzer.sh --seconds 25             # CI: 25 s each; exit 1 on any crash
#   tools/fuzz/libfuzzer.sh --seconds 14400 --keep-going --parallel
#                                                    # hours: all harnesses at once, going on
#                                                    # after crashes, each one saved
#   tools/fuzz/libfuzzer.sh --seconds 600 check      # one harness
#
# Corpora grow in build-fuzz/corpus/<harness> from run to run; crashes are written to
# build-fuzz/crashes/<harness>/ (crash-*, timeout-*, oom-*, leak-*). A crash worth keeping is
# copied to fuzz/regressions/<harness>/, where the normal test run replays it.
# ONNX_TV_FUZZ_CMAKE_ARGS adds arguments to the configure step (a compiler launcher, say).
set -euo pipefail
cd "$(dirname "$0")/../.."

seconds=3600
keep_going=0
parallel=0
harnesses=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --keep-going) keep_going=1; shift ;;
    --parallel) parallel=1; shift ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    -*) echo "unknown option $1" >&2; exit 2 ;;
    *) harnesses+=("$1"); shift ;;
  esac
done
[ ${#harnesses[@]} -gt 0 ] || harnesses=(load_model plan_json check)

build=build-fuzz
start=$(date +%s)
if [ ! -f "$build/CMakeCache.txt" ]; then
  # shellcheck disable=SC2086
  CXX=clang++ cmake -S . -B "$build" -DONNX_TV_FUZZ=ON ${ONNX_TV_FUZZ_CMAKE_ARGS:-} >/dev/null
fi
targets=()
for h in "${harnesses[@]}"; do targets+=(--target "fuzz_$h"); done
cmake --build "$build" -j"$(nproc)" "${targets[@]}" >/dev/null
echo "harnesses built in $(( $(date +%s) - start )) s"
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
    grep -q "^$h/$(basename "$f")\b" fuzz/regressions/open.txt || cp "$f" "$kept/"
  done
  local extra=()
  [ $keep_going = 1 ] && extra=(-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)
  set +e
  "$build/fuzz_$h" "$corpus" "$build/seeds/$h" "$kept" \
    -dict=fuzz/onnx_tv.dict -max_total_time="$seconds" -max_len="$(max_len "$h")" \
    -timeout="$(per_input_timeout "$h")" -rss_limit_mb=3072 -print_final_stats=1 \
    -artifact_prefix="$crashes/" "${extra[@]}" >"$log" 2>&1
  local rc=$?
  set -e
  echo "$rc" >"$build/logs/$h.rc"
}

for h in "${harnesses[@]}"; do
  if [ $parallel = 1 ]; then run_one "$h" & else run_one "$h"; fi
done
wait

failed=0
echo "libFuzzer, $seconds s per harness:"
for h in "${harnesses[@]}"; do
  log=$build/logs/$h.log
  # The last status line ("#123456 ... exec/s: 789 ...") holds the executions so far.
  execs=$(grep -oE '^#[0-9]+' "$log" | tail -1 | tr -d '#')
  stat_execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  [ -n "$stat_execs" ] && execs=$stat_execs
  rate=$(( ${execs:-0} / (seconds > 0 ? seconds : 1) ))
  crashes=$(find "$build/crashes/$h" -type f -newermt "@$start" | wc -l)
  corpus=$(find "$build/corpus/$h" -type f | wc -l)
  printf '  %-11s %10s execs  %6s/s  %3s crashes  corpus %s  (log %s)\n' \
         "$h" "${execs:-0}" "$rate" "$crashes" "$corpus" "$log"
  if [ "$(cat "$build/logs/$h.rc")" != 0 ] || [ "$crashes" != 0 ]; then
    failed=1
    find "$build/crashes/$h" -type f -newermt "@$start" | sed 's/^/    /'
    grep -m1 -E 'ERROR: (AddressSanitizer|UndefinedBehaviorSanitizer|libFuzzer)|runtime error|onnx-tv fuzz:' "$log" | sed 's/^/    /' || true
  fi
done
exit $failed
