#!/usr/bin/env bash
# Dry-runs the GPU bundle on a machine without a GPU: builds a stand-in
# libcuda.so.1 whose every driver entry point succeeds and reports no
# device (so gorgonia.org/cu's init passes and the binaries start), then
# runs the bundle's gpu-check.sh with it. Everything but the GPU runs for
# real: the preflight, the fixture generation (timed), the test selection
# and its environment, the sync rerun, the speed step, the CLI step, the
# summary and the verdict; the GPU tests fail with "device 0 requested, 0
# present".
#
#   scripts/gpu-dryrun.sh [BUNDLE [WORKDIR]]   defaults: dist/gpu-bundle, BUNDLE/work
#
# The big fixture is m110 (GPU_CHECK_BIG; llama2-7b, as on a GPU host,
# takes some 10 minutes of this 2-core machine), and the budget and every
# timeout are 8 times the GPU host's (GPU_CHECK_SCALE).
#
# Needs gcc, and the stub libcuda.so of scripts/cuda-install.sh for the
# list of entry points (its first run downloads Debian's CUDA packages,
# 754 MiB, keeping 61 MiB in .cache/cuda). Writes BUNDLE/gpu-check.log, as
# on a GPU host, then its own verdict: OK when every step ran, the log
# starts with "device:" lines and ends with the verdict line, and what
# failed failed only for want of a device (exit 0), else FAIL (exit 1). The
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
GPU_CHECK_BIG=${GPU_CHECK_BIG:-m110} GPU_CHECK_SCALE=${GPU_CHECK_SCALE:-8} LD_LIBRARY_PATH=$shim ./gpu-check.sh "$work" || true
[ "${KEEP_WORK:-0}" = 1 ] || rm -rf "$work"

# The verdict on the script, not on a GPU: every fixture was written, every
# step ran, and what failed (the GPU steps) failed for want of a device.
log=$bundle/gpu-check.log
problems=()
[ "$(head -c 8 "$log")" = "device: " ] || problems+=("the log does not start with a device: line")
tail -n 1 "$log" | grep -qE '^gpu-check: (PASS|FAIL .+)$' || problems+=("the log does not end with the verdict")
grep -q '^gpu-check: fixtures took' "$log" || problems+=("the fixture steps did not all run")
grep -qE '^gpu-check: [a-z0-9-]+ Q4_K_M: status 0 after' "$log" || problems+=("the big fixture was not written")
for s in cuda.test speed cli; do
  grep -q "^--- $s: " "$log" || problems+=("step $s did not run")
done
grep -q '0 present' "$log" || problems+=("the GPU tests did not fail for want of a device")
if grep -q 'timed out' "$log"; then problems+=("$(grep -m1 'timed out' "$log")"); fi
# Only the steps that need a device may fail.
if grep '^gpu-check: FAILED:' "$log" | grep -vqE '^gpu-check: FAILED: (cuda.test|sync rerun|speed|cli) \(status'; then
  problems+=("$(grep '^gpu-check: FAILED:' "$log" | grep -vE '^gpu-check: FAILED: (cuda.test|sync rerun|speed|cli) \(status' | head -n 1)")
fi
if [ ${#problems[@]} -eq 0 ]; then
  echo "gpu-dryrun: OK: every step of gpu-check.sh ran; the GPU steps failed only because there is no device (log: $log)"
else
  printf 'gpu-dryrun: FAIL: %s\n' "${problems[@]}"
  exit 1
fi
