#!/usr/bin/env bash
# Builds everything and runs the long tests: the model zoo's larger configurations (two layers,
# DP2 x TP2 x PP2 and the like), minutes each.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install-deps.sh
bash tools/build.sh
cd build
ctest --output-on-failure -j"$(nproc)" -L long
