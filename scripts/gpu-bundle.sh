#!/usr/bin/env bash
# Builds the GPU bundle: one folder (at most 40 MiB) to copy to a CUDA host
# that has an NVIDIA driver but no Go toolchain and no network, and run
# there with ./gpu-check.sh.
#
#   scripts/gpu-bundle.sh [OUT]      default OUT: dist/gpu-bundle
#
# Contents: cuda.test (go test -c -tags cuda ./cuda), realizar-host (the
# CLI built with -tags cuda, which generates and quantizes the fixtures
# there), the llama vocabulary the qwen2 fixture is written with, and
# gpu-check.sh. Both binaries link the driver's libcuda.so.1 at run time;
# here they link against the stub from scripts/cuda-install.sh.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
out=${1:-dist/gpu-bundle}
eval "$(scripts/cuda-install.sh)"
export GOTOOLCHAIN=${GOTOOLCHAIN:-local} CGO_ENABLED=1
rm -rf "$out"
mkdir -p "$out"
go test -c -tags cuda -trimpath -ldflags '-s -w' -o "$out/cuda.test" ./cuda
go build -tags cuda -trimpath -ldflags '-s -w' -o "$out/realizar-host" ./cmd/realizar-host
cp fixture/testdata/ggml-vocab-llama-spm.gguf "$out/"
cp scripts/gpu-check.sh "$out/"
git rev-parse HEAD >"$out/COMMIT" 2>/dev/null || true
size=$(du -sb "$out" | cut -f1)
limit=$((40 * 1024 * 1024))
echo "gpu-bundle: $out, $((size / 1024)) KiB"
if [ "$size" -gt "$limit" ]; then
  echo "gpu-bundle: $size bytes is over the 40 MiB limit" >&2
  exit 1
fi
