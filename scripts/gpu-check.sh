#!/usr/bin/env bash
# Runs the GPU checks from the folder scripts/gpu-bundle.sh made, on a CUDA
# host with an NVIDIA driver (no Go toolchain, no network needed), in about
# 4 minutes (GPU_CHECK_BUDGET seconds, default 270; every step has a hard
# timeout inside it):
#
#   0. preflight ("device:" lines, the log's first): the host, the GPU
#      (nvidia-smi), the bundle's two binaries unpacked (gzip -d) into
#      WORKDIR/bin, the driver library libcuda.so.1 the binaries link
#      (found through ld.so, or searched for and put on LD_LIBRARY_PATH)
#      and the driver's PTX JIT library;
#   1. fixtures, written by the bundled realizar-host straight in their
#      quantized types (`fixture --type`, no float file): tiny llama and
#      qwen2 in every file type the quantizer writes, the
#      TinyLlama-1.1B-shaped model in Q4_K_M and Q8_0, and, in the
#      background at a lower priority while the tests run, the
#      Llama-2-7B-shaped Q4_K_M (GPU_CHECK_BIG, default llama2-7b; 3.9 GB);
#   2. cuda.test, correctness: the device and its kernels' JIT
#      ("device:"), every kernel type against the CPU ("kernel"), the
#      parity gate ("gate") and 64-token greedy equality ("greedy") on
#      every fixture but the 7B, the KV cache growing ("growth"), NewSequence
#      ("newstep"), batched sequences ("batch"); on a failure, when time is
#      left, the device, kernel and gate tests again with
#      REALIZAR_CUDA_SYNC=1 (every launch waits), so the failing kernel is
#      named ("sync:");
#   3. cuda.test, speed, once the 7B is written: the device-to-device copy
#      bandwidth ("bandwidth:"), then on the 1.1B fixtures and the 7B
#      prefill at 512 tokens, decode tok/s and decode's achieved weight
#      bandwidth as a share of the copy bandwidth ("speed");
#   4. `realizar-host bench --gpu --parallel 32` on the 1.1B Q4_K_M: the
#      CLI's path (gate, verdict cache, engine) end to end, and batched
#      decode's aggregate tok/s at B = 1, 2, 4, 8, 16, 32 ("cli:").
#
#   ./gpu-check.sh [WORKDIR]     default WORKDIR: ./work (about 6 GB)
#
# Everything is logged to gpu-check.log next to this script (or to
# $GPU_CHECK_LOG: the device tool's $OUT/gpu-check.log comes back even when
# the run is cut off, docs/gpu-run.md): "device:"
# lines first, then each step, then a summary of the result lines, then
# the verdict as the last line: "gpu-check: PASS", or "gpu-check: FAIL"
# and the steps that failed or ran out of time. The exit status is 0 on
# PASS, 1 on FAIL.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
work=${1:-$here/work}
log=${GPU_CHECK_LOG:-$here/gpu-check.log}
exec > >(tee "$log") 2>&1
# GPU_CHECK_SCALE multiplies the budget and every step's timeout (the dry
# run's 2-core machine is some 8 times slower than a 16-core GPU host).
scale=${GPU_CHECK_SCALE:-1}
budget=$((${GPU_CHECK_BUDGET:-270} * scale))
big=${GPU_CHECK_BIG:-llama2-7b}
start=$SECONDS
deadline=$((SECONDS + budget))
failed=()

# --- 0. preflight
echo "device: gpu-check $(date -u +%FT%TZ), commit $(cat COMMIT 2>/dev/null || echo unknown), budget ${budget} s, big fixture $big"
echo "device: host $(uname -sr), $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo 2>/dev/null) memory"
if command -v nvidia-smi >/dev/null; then
  smi=$(timeout 20 nvidia-smi --query-gpu=name,driver_version,compute_cap,memory.total,memory.used,clocks.max.memory \
    --format=csv,noheader 2>&1) || smi="nvidia-smi failed (status $?): $smi"
  while IFS= read -r line; do echo "device: nvidia-smi: $line"; done <<<"$smi"
else
  echo "device: nvidia-smi not found"
fi
for lib in libcuda.so.1 libnvidia-ptxjitcompiler.so.1; do
  where=$(ldconfig -p 2>/dev/null | grep -F "$lib" | head -n 1 | sed 's/.*=> //')
  echo "device: $lib in the ld.so cache: ${where:-no}"
done
# The binaries travel gzipped (scripts/gpu-bundle.sh); they run from the
# work folder, writable wherever the bundle is.
mkdir -p "$work/bin"
work=$(cd "$work" && pwd)
for b in cuda.test realizar-host; do
  if ! gzip -dc "$b.gz" >"$work/bin/$b"; then
    echo "gpu-check: FAILED: could not unpack $b.gz into $work/bin (gzip $(command -v gzip || echo 'not found'))"
    echo "gpu-check: FAIL preflight (unpack $b)"
    exit 1
  fi
  chmod +x "$work/bin/$b"
done
echo "device: unpacked cuda.test and realizar-host into $work/bin"
ct=$work/bin/cuda.test
rh=$work/bin/realizar-host
linked() { ldd "$ct" 2>&1 | grep -F libcuda.so.1 | tr -s ' \t' ' '; }
if command -v ldd >/dev/null; then
  if linked | grep -q 'not found'; then
    for dir in /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/local/nvidia/lib64 /usr/local/nvidia/lib \
      /usr/local/cuda/compat /usr/local/cuda/lib64 /usr/lib/wsl/lib /lib/x86_64-linux-gnu; do
      if [ -e "$dir/libcuda.so.1" ]; then
        export LD_LIBRARY_PATH=$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
        echo "device: libcuda.so.1 is not in the ld.so cache; using $dir"
        break
      fi
    done
  fi
  echo "device: cuda.test links$(linked)"
  if linked | grep -q 'not found'; then
    echo "gpu-check: FAILED: no libcuda.so.1 (the NVIDIA driver library) for the binaries"
    echo "gpu-check: FAIL preflight (no libcuda.so.1)"
    exit 1
  fi
fi

# The driver's JIT cache in a folder known to be writable: every test opens
# the device anew, and only the first open should JIT-compile the PTX.
export CUDA_CACHE_PATH=${CUDA_CACHE_PATH:-$work/cuda-jit-cache}
echo "gpu-check: CUDA_CACHE_PATH=$CUDA_CACHE_PATH"
vocab=./ggml-vocab-llama-spm.gguf

# left prints the seconds left before the deadline (at least 1).
left() { local l=$((deadline - SECONDS)); echo $((l > 1 ? l : 1)); }

# step NAME CAP [PREFIX] -- CMD...: runs CMD, timed, under a timeout of CAP
# seconds or what is left of the budget, whichever is less, with PREFIX
# before each line of its output; a failure or a timeout adds NAME to the
# failures. Returns CMD's status.
step() {
  local name=$1 cap=$2 prefix="" t0=$SECONDS rc
  shift 2
  if [ "$1" != -- ]; then prefix=$1; shift; fi
  shift
  cap=$((cap * scale))
  local limit=$(($(left) < cap ? $(left) : cap))
  echo "--- $name: $* (timeout ${limit} s, $(left) s left)"
  timeout --kill-after=2 "$limit" "$@" 2>&1 | tee "$work/step.out" | sed -u "s/^/$prefix/"
  rc=${PIPESTATUS[0]}
  # The failing tests of a test binary, by top-level name.
  local tests
  tests=$(grep -oE '^--- FAIL: Test[A-Za-z0-9_]+' "$work/step.out" | sed 's/^--- FAIL: Test//' | sort -u | paste -sd' ' -)
  if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    echo "gpu-check: FAILED: $name: timed out after ${limit} s"
    failed+=("$name (timeout${tests:+; failed before: $tests})")
  elif [ $rc -ne 0 ]; then
    echo "gpu-check: FAILED: $name (status $rc)"
    failed+=("$name${tests:+ ($tests)}")
  fi
  echo "    $name: $((SECONDS - t0)) s"
  return $rc
}

# --- 1. fixtures
fixtures_t0=$SECONDS
bigfile=$work/$big-q4km.gguf
echo "--- $big Q4_K_M in the background, nice 10 ($(left) s left)"
big_t0=$SECONDS
big_limit=$(($(left) > 80 * scale ? $(left) - 80 * scale : 1))
(
  timeout --kill-after=2 $big_limit nice -n 10 $rh fixture --preset "$big" --type Q4_K_M --out "$bigfile"
  rc=$?
  echo "gpu-check: $big Q4_K_M: status $rc after $((SECONDS - big_t0)) s$( ((rc == 124 || rc == 137)) && echo ", timed out at $big_limit s")"
  exit $rc
) >"$work/big.out" 2>&1 &
big_pid=$!

small=()
pids=()
for base in tiny qwen2-tiny; do
  for ft in Q4_0 Q8_0 Q4_K_S Q4_K_M BF16; do
    out=$work/$base-$ft.gguf
    small+=("$out")
    extra=()
    [ "$base" = qwen2-tiny ] && extra=(--vocab "$vocab")
    timeout --kill-after=2 $(($(left) < 60 * scale ? $(left) : 60 * scale)) $rh fixture --preset $base "${extra[@]}" --type $ft --out "$out" --threads 4 >"$out.out" 2>&1 &
    pids+=($!)
  done
done
echo "--- small fixtures: ${#pids[@]} at once ($(left) s left)"
small_rc=0
for p in "${pids[@]}"; do wait "$p" || small_rc=1; done
cat "$work"/*.gguf.out 2>/dev/null
if [ $small_rc -ne 0 ]; then
  echo "gpu-check: FAILED: small fixtures"
  failed+=("small fixtures")
fi
echo "    small fixtures: $((SECONDS - fixtures_t0)) s"
step "tinyllama-1b Q4_K_M" 90 -- $rh fixture --preset tinyllama-1b --type Q4_K_M --out "$work/tl1b-q4km.gguf"
step "tinyllama-1b Q8_0" 60 -- $rh fixture --preset tinyllama-1b --type Q8_0 --out "$work/tl1b-q8_0.gguf"
echo "gpu-check: fixtures took $((SECONDS - fixtures_t0)) s (the $big goes on in the background)"

# --- 2. correctness
fixtures=$(IFS=,; echo "${small[*]},$work/tl1b-q4km.gguf,$work/tl1b-q8_0.gguf")
# Kept for what follows: the 7B's wait, the speed runs and the CLI.
reserve=$((120 * scale))
t_left=$(($(left) - reserve))
t_cap=$(((t_left > 60 * scale ? t_left : 60 * scale) / scale))
REALIZAR_GPU_FIXTURES=$fixtures step "cuda.test" $t_cap -- "$ct" -test.v -test.count=1 -test.run 'GPU' \
  -test.skip 'GPUSpeed|GPUCopyBandwidth' -test.timeout "$((t_cap * scale))s"
rc=$?
if [ $rc -ne 0 ] && [ "$(left)" -ge $((reserve + 30 * scale)) ]; then
  REALIZAR_CUDA_SYNC=1 REALIZAR_GPU_FIXTURES= step "sync rerun" 30 "sync: " -- "$ct" -test.v -test.count=1 \
    -test.run 'GPUDevice|GPUKernelTypes|GPUParityGate'
fi

# --- 3. speed
echo "--- waiting for the $big ($(left) s left)"
wait "$big_pid"
big_rc=$?
cat "$work/big.out"
speed=$work/tl1b-q4km.gguf,$work/tl1b-q8_0.gguf
if [ $big_rc -eq 0 ]; then
  speed=$speed,$bigfile
else
  echo "gpu-check: FAILED: $big fixture (status $big_rc)"
  failed+=("$big fixture$( ((big_rc == 124 || big_rc == 137)) && echo ' (timeout)')")
fi
REALIZAR_GPU_SPEED_FIXTURES=$speed step "speed" 75 -- "$ct" -test.v -test.count=1 \
  -test.run 'GPUCopyBandwidth|GPUSpeed'

# --- 4. the CLI's --gpu path, batched decode
# A verdict cache of the run's own: the CLI's gate runs here.
# Not when the gate rejected the 1.1B: the CLI would run it on the CPU.
if grep -q '^gate tl1b-q4km.gguf on .*: reject' "$log"; then
  echo "gpu-check: FAILED: cli: skipped, the parity gate rejected tl1b-q4km.gguf (the CLI would fall back to the CPU)"
  failed+=("cli (skipped: the gate rejected the 1.1B)")
else
  XDG_CACHE_HOME=$work/xdg step "cli" 60 "cli: " -- $rh bench --gpu -m "$work/tl1b-q4km.gguf" --prompt-tokens 16 \
    --gen-tokens 33 --repetitions 1 --parallel 32
fi

echo "--- summary ($((SECONDS - start)) s in all)"
snapshot=$(cat "$log") # not the log itself: the summary goes to it too
grep -E '^(device:|kernel |gate |greedy |growth |newstep |batch |batched |bandwidth:|speed |cli: )|^(--- FAIL|FAIL|ok|PASS)|^sync: (device:|kernel |gate )|^gpu-check: ' <<<"$snapshot" || true
if [ ${#failed[@]} -eq 0 ]; then
  echo "gpu-check: PASS"
  exit 0
fi
printf -v what '%s; ' "${failed[@]}"
echo "gpu-check: FAIL ${what%; }"
exit 1
