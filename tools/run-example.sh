#!/usr/bin/env bash
# Installs what is needed, builds onnx-tv and checks a bundled plan: a correct one, then one
# with a seeded bug. Exit status: that of the first check (0 when it is EQUIVALENT).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install-deps.sh
bash tools/build.sh onnx-tv
ex=models/examples/mlp_tp2
echo "== onnx-tv check $ex/spec.onnx $ex/shards"
./build/onnx-tv check "$ex/spec.onnx" "$ex/shards"
echo
echo "== onnx-tv check $ex/spec.onnx $ex/shards_bug (a seeded bug: the all-reduce is missing)"
./build/onnx-tv check "$ex/spec.onnx" "$ex/shards_bug" || true
