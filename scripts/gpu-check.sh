#!/usr/bin/env bash
# Runs the GPU checks from the folder scripts/gpu-bundle.sh made, on a CUDA
# host with an NVIDIA driver (no Go toolchain, no network needed):
#
#   1. generates the fixtures with the bundled realizar-host: the
#      TinyLlama-1.1B-shaped model (F16, random weights) and its Q4_K_M,
#      Q4_0 and Q8_0 quantizations by the project's own quantizer, and
#      tiny llama / qwen2 files in every file type the quantizer writes;
#   2. runs cuda.test: every kernel type against the CPU, the parity gate
#      and 64-token greedy equality on every fixture, NewStep through the
#      engine's adapter, and decode/prefill tok/s (GPU and CPU).
#
#   ./gpu-check.sh [WORKDIR]     default WORKDIR: ./work (several GB)
#
# Everything is logged to gpu-check.log next to this script; the exit
# status is the test binary's. Budget: 8 minutes.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
work=${1:-$here/work}
log=$here/gpu-check.log
exec > >(tee "$log") 2>&1
deadline=$((SECONDS + 480))
echo "gpu-check: $(date -u +%FT%TZ), commit $(cat COMMIT 2>/dev/null || echo unknown)"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>/dev/null || echo "gpu-check: nvidia-smi not found"
mkdir -p "$work"
rh=./realizar-host
vocab=./ggml-vocab-llama-spm.gguf

step() { echo "--- $* ($((deadline - SECONDS)) s left)"; "$@" || { echo "gpu-check: FAILED: $*"; exit 1; }; }

step $rh fixture --preset tiny --out "$work/tiny.gguf"
step $rh fixture --preset qwen2-tiny --vocab "$vocab" --out "$work/qwen2-tiny.gguf"
small=()
for base in tiny qwen2-tiny; do
  for ft in Q4_0 Q8_0 Q4_K_S Q4_K_M BF16; do
    step $rh quantize "$work/$base.gguf" "$work/$base-$ft.gguf" "$ft"
    small+=("$work/$base-$ft.gguf")
  done
done
step $rh fixture --preset tinyllama-1b --out "$work/tl1b-f16.gguf"
step $rh quantize "$work/tl1b-f16.gguf" "$work/tl1b-q4km.gguf" Q4_K_M
step $rh quantize "$work/tl1b-f16.gguf" "$work/tl1b-q8_0.gguf" Q8_0
rm -f "$work/tl1b-f16.gguf" # the F16 1.1B is too slow a CPU reference for the budget

fixtures=$(IFS=,; echo "${small[*]},$work/tl1b-q4km.gguf,$work/tl1b-q8_0.gguf")
left=$((deadline - SECONDS))
echo "--- cuda.test ($left s left)"
REALIZAR_GPU_FIXTURES=$fixtures timeout "$left" ./cuda.test -test.v -test.count=1 -test.run 'GPU' -test.timeout "${left}s"
rc=$?
echo "--- summary"
grep -E '^(gate|greedy|speed) |^(--- FAIL|FAIL|ok|PASS)' "$log" || true
if [ $rc -eq 0 ]; then echo "gpu-check: PASS"; else echo "gpu-check: FAIL (status $rc)"; fi
exit $rc
