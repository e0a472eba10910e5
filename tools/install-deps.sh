#!/usr/bin/env bash
# Installs onnx-tv's build and test dependencies from Debian's packages (needs root).
# Does nothing when they are all present already.
set -euo pipefail
pkgs=(cmake g++ make libonnx-dev libprotobuf-dev protobuf-compiler libtbb-dev libcadical-dev
      libgmp-dev libmpfr-dev libgtest-dev nlohmann-json3-dev python3-onnx python3-numpy
      libonnx-testdata)  # ONNX's backend tests, for the conformance suite (tests/conformance)
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
