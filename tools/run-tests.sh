#!/usr/bin/env bash
# Installs what is needed, builds everything and runs the whole test suite with ctest, then
# builds the libFuzzer harnesses (build-fuzz, clang with ASan and UBSan) and runs each briefly
# (docs/fuzzing.md): a crash fails the run like a failing test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install-deps.sh --fuzz
bash tools/build.sh
(cd build && ctest --output-on-failure -j"$(nproc)" -LE long)
bash tools/fuzz/libfuzzer.sh --seconds "${ONNX_TV_FUZZ_SECONDS:-25}"
