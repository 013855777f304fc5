#!/usr/bin/env bash
# Dry-runs the GPU bundle on a machine without a GPU: builds a stand-in
# libcuda.so.1 whose every driver entry point succeeds and reports no
# device (so gorgonia.org/cu's init passes and the binaries start), then
# runs the bundle's gpu-check.sh with it. Everything but the GPU runs for
# real: the preflight, the fixture generation and quantization (timed), the
# test selection and its environment, the sync rerun, the CLI step and the
# summary; the GPU tests fail with "device 0 requested, 0 present".
#
#   scripts/gpu-dryrun.sh [BUNDLE [WORKDIR]]   defaults: dist/gpu-bundle, BUNDLE/work
#
# Needs gcc, and the stub libcuda.so of scripts/cuda-install.sh for the
# list of entry points. Writes BUNDLE/gpu-check.log, as on a GPU host.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bundle=$(cd "${1:-$root/dist/gpu-bundle}" && pwd)
work=${2:-$bundle/work}
eval "$("$root"/scripts/cuda-install.sh)"
stub=${CGO_LDFLAGS#-L}/libcuda.so
shim=$(mktemp -d)
trap 'rm -rf "$shim"' EXIT
{
  echo '/* every driver entry point: success, nothing written */'
  nm -D --defined-only "$stub" | awk '$2 == "T" { sub(/@.*/, "", $3); print "int " $3 "(void) { return 0; }" }' | sort -u
} >"$shim/shim.c"
gcc -shared -fPIC -Wl,-soname,libcuda.so.1 -o "$shim/libcuda.so.1" "$shim/shim.c"
cd "$bundle"
LD_LIBRARY_PATH=$shim ./gpu-check.sh "$work" || true
