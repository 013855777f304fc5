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
# list of entry points (its first run downloads Debian's CUDA packages,
# 754 MiB, keeping 61 MiB in .cache/cuda). Writes BUNDLE/gpu-check.log, as
# on a GPU host, then its own verdict: OK when every step ran and the GPU
# tests failed only for want of a device (exit 0), else FAIL (exit 1). The
# generated fixtures (~2 GB) are removed unless KEEP_WORK=1.
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
[ "${KEEP_WORK:-0}" = 1 ] || rm -rf "$work"

# The verdict on the script, not on a GPU: the fixture steps all ran, the
# test binary ran its selection, and what failed failed for want of a device.
log=$bundle/gpu-check.log
problems=()
grep -q '^gpu-check: fixtures took' "$log" || problems+=("the fixture steps did not all run")
grep -q '^gpu-check: cuda.test took' "$log" || problems+=("cuda.test did not run")
grep -q '^--- summary' "$log" || problems+=("no summary")
grep -q '0 present' "$log" || problems+=("the GPU tests did not fail for want of a device")
if grep -q '^gpu-check: FAILED:' "$log"; then problems+=("$(grep -m1 '^gpu-check: FAILED:' "$log")"); fi
if [ ${#problems[@]} -eq 0 ]; then
  echo "gpu-dryrun: OK: every step of gpu-check.sh ran; the GPU tests failed only because there is no device (log: $log)"
else
  printf 'gpu-dryrun: FAIL: %s\n' "${problems[@]}"
  exit 1
fi
