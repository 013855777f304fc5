#!/usr/bin/env bash
# The CI checks of the `cuda` build tag, on a machine without a GPU
# (what `make test-cuda` runs):
#   - installs cuda.h, nvrtc.h, the stub libcuda.so and NVRTC into
#     .cache/cuda (scripts/cuda-install.sh; idempotent),
#   - regenerates the PTX from internal/cuda/kernels/*.cu and fails if it differs
#     from the committed PTX or if NVRTC prints anything (a warning),
#   - vets and builds the whole module with -tags cuda against the stub,
#   - compiles the cuda test binary (it cannot run here: gorgonia.org/cu's
#     init needs a driver),
#   - runs the package's tests with -tags cudaemu: the same device forward
#     with the kernels compiled as host C++ on the fiber emulator
#     (internal/cuda/testdata/emu), against the CPU forward (needs g++).
# The default-build tests of ./internal/cuda (stub, planner, gate verdicts, kernel
# unpacking through the host C++ harness) run in `make test-unit`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
cuda_env=$(scripts/cuda-install.sh) # a failed install stops here (set -e)
eval "$cuda_env"
export GOTOOLCHAIN=${GOTOOLCHAIN:-local} CGO_ENABLED=1
scripts/cuda-ptx.sh --check
go vet -tags cuda ./...
go build -tags cuda ./...
go test -c -tags cuda -o /dev/null ./internal/cuda
# The device forward with its kernels on the host emulator: every kernel
# type, the parity gate and greedy equality on small fixtures.
go vet -tags cudaemu ./internal/cuda
go test -count=1 -timeout 30m -tags cudaemu ./internal/cuda
echo "cuda-ci: ok"
