#!/usr/bin/env bash
# Builds the GPU bundle: one folder (at most 40 MiB) to copy to a CUDA host
# that has an NVIDIA driver but no Go toolchain and no network, and run
# there with ./gpu-check.sh.
#
#   scripts/gpu-bundle.sh [OUT]      default OUT: dist/gpu-bundle
#
# Contents: cuda.test.gz (go test -c -tags cuda ./internal/cuda),
# realizar-host.gz (the CLI built with -tags cuda, which generates and
# quantizes the fixtures there), the llama vocabulary the qwen2 fixture is
# written with, and gpu-check.sh, which unpacks the two binaries into its
# work folder. Gzipped, the two binaries take 13.7 MB instead of 37.2
# (commit 66d4a11): the room the working tree needs as it grows. Both link
# the driver's libcuda.so.1 at run time; here they link against the stub
# from scripts/cuda-install.sh.
#
# The device tool (docs/gpu-run.md) sends the working tree and the carried
# bundle, 64 MiB in all: the bundle is checked against 40 MiB and against
# what the tracked and untracked files leave of the 64.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
out=${1:-dist/gpu-bundle}
eval "$(scripts/cuda-install.sh)"
export GOTOOLCHAIN=${GOTOOLCHAIN:-local} CGO_ENABLED=1
rm -rf "$out"
mkdir -p "$out"
go test -c -tags cuda -trimpath -ldflags '-s -w' -o "$out/cuda.test" ./internal/cuda
go build -tags cuda -trimpath -ldflags '-s -w' -o "$out/realizar-host" ./cmd/realizar-host
gzip -9n "$out/cuda.test" "$out/realizar-host"
cp internal/fixture/testdata/ggml-vocab-llama-spm.gguf "$out/"
cp scripts/gpu-check.sh "$out/"
{ git rev-parse HEAD && git status --porcelain --untracked-files=no | sed -n '1s/.*/(with uncommitted changes)/p'; } 2>/dev/null |
  paste -sd' ' - >"$out/COMMIT" || true
size=$(du -sb "$out" | cut -f1)
limit=$((40 * 1024 * 1024))
# What else travels with a device run: tracked and untracked, not ignored, files.
tree=$({ git ls-files -z; git ls-files -z --others --exclude-standard; } 2>/dev/null | xargs -0 -r du -cb 2>/dev/null | awk '$2 == "total" { n += $1 } END { print n + 0 }')
carry=$((64 * 1024 * 1024))
echo "gpu-bundle: $out, $((size / 1024)) KiB; with the working tree ($((tree / 1024)) KiB) $(((size + tree) / 1024)) KiB of the 65536 KiB a device run carries"
if [ "$size" -gt "$limit" ]; then
  echo "gpu-bundle: $size bytes is over the 40 MiB limit" >&2
  exit 1
fi
if [ $((size + tree)) -gt "$carry" ]; then
  echo "gpu-bundle: the bundle and the working tree, $((size + tree)) bytes, are over the 64 MiB a device run carries" >&2
  exit 1
fi
