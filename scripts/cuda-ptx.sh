#!/usr/bin/env bash
# Regenerates internal/cuda/ptx/<family>.sm<arch>.ptx from internal/cuda/kernels/<family>.cu for
# compute_80 and compute_90 with NVRTC (CUDA 11.8, from scripts/cuda-install.sh;
# no GPU needed), and internal/cuda/ptx/<family>.sm<arch>.cubin, the same kernels as
# machine code for sm_80 and sm_90: the fallback when the driver cannot
# JIT-compile the PTX (no libnvidia-ptxjitcompiler, say). Any compiler
# message (a warning included) fails the run. With --check, the committed
# files must equal the regenerated ones (NVRTC's output is deterministic).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
cache=$root/.cache/cuda
[ -f "$cache/include/nvrtc.h" ] || { echo "cuda-ptx: run scripts/cuda-install.sh first" >&2; exit 2; }
tool=$cache/bin/nvrtc-ptx
if [ ! -x "$tool" ] || [ scripts/ptxgen/nvrtc-ptx.c -nt "$tool" ]; then
  mkdir -p "$cache/bin"
  gcc -O2 -Wall -Werror -I"$cache/include" -o "$tool" scripts/ptxgen/nvrtc-ptx.c \
    -L"$cache/lib" -lnvrtc -Wl,--disable-new-dtags,-rpath,"$cache/lib"
fi
out=internal/cuda/ptx
check=0
if [ "${1:-}" = --check ]; then
  check=1
  out=$(mktemp -d)
  trap 'rm -rf "$out"' EXIT
fi
mkdir -p "$out"
for src in internal/cuda/kernels/*.cu; do
  fam=$(basename "$src" .cu)
  for arch in 80 90; do
    "$tool" "compute_$arch" "$src" "$out/$fam.sm$arch.ptx"
    "$tool" "sm_$arch" "$src" "$out/$fam.sm$arch.cubin"
  done
done
if [ $check = 1 ]; then
  if ! diff -r "$out" internal/cuda/ptx >/dev/null; then
    echo "cuda-ptx: committed PTX/CUBIN differs from internal/cuda/kernels/*.cu; run scripts/cuda-ptx.sh" >&2
    diff -r "$out" internal/cuda/ptx | head -n 20 >&2
    exit 1
  fi
  echo "cuda-ptx: committed PTX and CUBIN are current"
fi
