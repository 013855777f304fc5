#!/usr/bin/env bash
# Runs the GPU checks from the folder scripts/gpu-bundle.sh made, on a CUDA
# host with an NVIDIA driver (no Go toolchain, no network needed):
#
#   0. preflight: the GPU (nvidia-smi), the driver library libcuda.so.1 the
#      binaries link (found through ld.so, or searched for and put on
#      LD_LIBRARY_PATH) and the driver's PTX JIT library;
#   1. generates the fixtures with the bundled realizar-host: the
#      TinyLlama-1.1B-shaped model (F16, random weights) and its Q4_K_M
#      and Q8_0 quantizations by the project's own quantizer, and tiny
#      llama / qwen2 files in every file type the quantizer writes;
#   2. runs cuda.test: the device and its kernels' JIT ("device:" lines),
#      every kernel type against the CPU ("kernel" lines), the parity gate
#      ("gate") and 64-token greedy equality ("greedy") on every fixture,
#      the KV cache growing while positions are held ("growth"), NewStep
#      through the engine's adapter ("newstep"), and decode/prefill
#      tok/s, GPU and CPU ("speed");
#   3. when cuda.test failed and time is left, runs the device, kernel and
#      gate tests again on the tiny fixtures only with REALIZAR_CUDA_SYNC=1
#      (every launch waits for its kernel), so the failing kernel is named;
#   4. when time is left, `realizar-host bench --gpu` on the 1.1B Q4_K_M
#      fixture: the CLI's path (gate, verdict cache, engine) end to end
#      ("cli:" lines; reported, not part of the exit status).
#
#   ./gpu-check.sh [WORKDIR]     default WORKDIR: ./work (about 4 GB)
#
# Everything is logged to gpu-check.log next to this script, ending with a
# summary; the exit status is the first cuda.test run's. Budget: 8 minutes
# in all (the test gets what the fixtures leave).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
work=${1:-$here/work}
log=$here/gpu-check.log
exec > >(tee "$log") 2>&1
deadline=$((SECONDS + 480))
echo "gpu-check: $(date -u +%FT%TZ), commit $(cat COMMIT 2>/dev/null || echo unknown), $(nproc) cores, $(uname -sr)"

# --- 0. preflight
echo "--- preflight"
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=name,driver_version,compute_cap,memory.total,memory.used --format=csv ||
    echo "gpu-check: nvidia-smi failed (status $?)"
else
  echo "gpu-check: nvidia-smi not found"
fi
for lib in libcuda.so.1 libnvidia-ptxjitcompiler.so.1; do
  where=$(ldconfig -p 2>/dev/null | grep -F "$lib" | head -n 1 | sed 's/.*=> //')
  echo "gpu-check: $lib in the ld.so cache: ${where:-no}"
done
linked() { ldd ./cuda.test 2>&1 | grep -F libcuda.so.1 | tr -s ' \t' ' '; }
if command -v ldd >/dev/null; then
  if linked | grep -q 'not found'; then
    for dir in /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/local/nvidia/lib64 /usr/local/nvidia/lib \
      /usr/local/cuda/compat /usr/local/cuda/lib64 /usr/lib/wsl/lib /lib/x86_64-linux-gnu; do
      if [ -e "$dir/libcuda.so.1" ]; then
        export LD_LIBRARY_PATH=$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
        echo "gpu-check: libcuda.so.1 is not in the ld.so cache; using $dir"
        break
      fi
    done
  fi
  echo "gpu-check: cuda.test links$(linked)"
  if linked | grep -q 'not found'; then
    echo "gpu-check: FAILED: no libcuda.so.1 (the NVIDIA driver library) for the binaries"
    exit 1
  fi
fi

mkdir -p "$work"
# The driver's JIT cache in a folder known to be writable: every test opens
# the device anew, and only the first open should JIT-compile the PTX.
export CUDA_CACHE_PATH=${CUDA_CACHE_PATH:-$work/cuda-jit-cache}
echo "gpu-check: CUDA_CACHE_PATH=$CUDA_CACHE_PATH"
rh=./realizar-host
vocab=./ggml-vocab-llama-spm.gguf

# step runs a command, timed; a failure ends the run.
step() {
  local t0=$SECONDS
  echo "--- $* ($((deadline - SECONDS)) s left)"
  "$@" || { echo "gpu-check: FAILED: $* (status $?)"; exit 1; }
  echo "    $((SECONDS - t0)) s"
}

# --- 1. fixtures
fixtures_t0=$SECONDS
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
echo "gpu-check: fixtures took $((SECONDS - fixtures_t0)) s"

# --- 2. the tests
fixtures=$(IFS=,; echo "${small[*]},$work/tl1b-q4km.gguf,$work/tl1b-q8_0.gguf")
left=$((deadline - SECONDS))
if [ $left -lt 180 ]; then
  # Slow fixtures must not cost the GPU verdict: the tests get 3 minutes.
  echo "gpu-check: over budget: $left s left, giving cuda.test 180 s"
  left=180
fi
echo "--- cuda.test ($left s left)"
t0=$SECONDS
REALIZAR_GPU_FIXTURES=$fixtures timeout "$left" ./cuda.test -test.v -test.count=1 -test.run 'GPU' -test.timeout "${left}s"
rc=$?
echo "gpu-check: cuda.test took $((SECONDS - t0)) s, status $rc"

# --- 3. a failure again, kernel by kernel
left=$((deadline - SECONDS))
if [ $rc -ne 0 ] && [ $left -ge 60 ]; then
  echo "--- cuda.test again, REALIZAR_CUDA_SYNC=1, tiny fixtures only ($left s left)"
  REALIZAR_CUDA_SYNC=1 REALIZAR_GPU_FIXTURES= timeout "$left" ./cuda.test -test.v -test.count=1 \
    -test.run 'GPUDevice|GPUKernelTypes|GPUParityGate' -test.timeout "${left}s" 2>&1 | sed 's/^/sync: /'
fi

# --- 4. the CLI's own --gpu path on the 1.1B (reported, not part of the status)
left=$((deadline - SECONDS))
if [ $left -ge 45 ]; then
  echo "--- realizar-host bench --gpu ($left s left)"
  timeout $((left - 15)) $rh bench --gpu -m "$work/tl1b-q4km.gguf" --prompt-tokens 128 --gen-tokens 64 \
    --repetitions 2 2>&1 | sed 's/^/cli: /'
  echo "cli: status ${PIPESTATUS[0]}"
fi

echo "--- summary"
snapshot=$(cat "$log") # not the log itself: the summary goes to it too
grep -E '^(device:|kernel |gate |greedy |growth |newstep |speed |cli: )|^(--- FAIL|FAIL|ok|PASS)|^sync: (device:|kernel |gate )|^gpu-check: ' <<<"$snapshot" || true
if [ $rc -eq 0 ]; then echo "gpu-check: PASS"; else echo "gpu-check: FAIL (status $rc)"; fi
exit $rc
