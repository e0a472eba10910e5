#!/usr/bin/env bash
# Installs onnx-tv's build and test dependencies from Debian's packages (needs root).
# Does nothing when they are all present already. With --fuzz, also what the libFuzzer
# harnesses need (docs/fuzzing.md): clang, its runtimes (libFuzzer, ASan, UBSan) and the
# symbolizer for their stack traces.
set -euo pipefail
pkgs=(cmake g++ make libonnx-dev libprotobuf-dev protobuf-compiler libtbb-dev libcadical-dev
      libgmp-dev libmpfr-dev libgtest-dev nlohmann-json3-dev python3-onnx python3-numpy
      libjemalloc-dev  # the executables' allocator (CMakeLists.txt says why)
      pybind11-dev python3-dev  # the Python package onnx_tv (docs/python.md)
      python3-torch  # onnx_tv.torch, the PyTorch exporter (docs/pytorch.md)
      libonnx-testdata  # ONNX's backend tests, for the conformance suite (tests/conformance)
      libopenmpi-dev openmpi-bin)  # several processes proving one check (docs/distributed.md)
if [ "${1:-}" = "--fuzz" ]; then
  pkgs+=(clang libclang-rt-14-dev llvm)
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
