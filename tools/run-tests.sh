#!/usr/bin/env bash
# Installs what is needed, builds everything and runs the whole test suite with ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install-deps.sh
bash tools/build.sh
cd build
ctest --output-on-failure -j"$(nproc)" -LE long
