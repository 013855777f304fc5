# realizar-host — build, test, benchmark, demo.
# `make test` is what CI runs (through .ci/run); `make demo` is the main job.

GO       ?= go
PKGS     := ./...
BIN      := bin/realizar-host
# staticcheck, pinned, installed into the repo's ignored .cache by make staticcheck-install.
STATICCHECK_VERSION := v0.8.2
STATICCHECK         := .cache/bin/staticcheck
# Packages free of numeric hot loops run under the race detector.
RACE_PKGS := ./engine/... ./forward/... ./internal/serving/... ./abi/... ./host/... ./tokenizer/... ./gguf/... ./internal/plugins/sampler/standard/... ./internal/plugins/sampling/... ./internal/plugins/chain/... ./internal/server/... ./internal/tenancy/...
FUZZTIME ?= 10s
# Compiled wasm shared by the test binaries of one run (internal/testenv).
export REALIZAR_TEST_COMPILE_CACHE ?= $(CURDIR)/.cache/test-compiled

.PHONY: all staticcheck-install ref-install guests-install sdk-install build test test-deps test-purego test-guests test-plugins plugins test-cuda gpu-bundle gpu-dryrun test-unit test-race test-fuzz test-cross test-ref test-deploy test-demo lint bench llama-native demo clean

all: build

## build: bin/realizar-host and bin/wasmmeta (the metadata tool "Writing a plugin" calls by name).
build:
	$(GO) build -o $(BIN) ./cmd/realizar-host
	$(GO) build -o $(dir $(BIN))wasmmeta ./abi/cmd/wasmmeta

## test: everything CI checks (installing first, idempotently, what the tests read).
test: test-deps lint test-unit test-purego test-race test-cross test-guests test-plugins test-cuda test-fuzz test-ref test-deploy test-demo

## test-deps: the llama.cpp reference and vocabularies, the Rust/AssemblyScript toolchains, the npm API clients and staticcheck.
test-deps: ref-install guests-install sdk-install staticcheck-install

test-unit:
	$(GO) test -count=1 $(PKGS)

# The portable kernels (no assembly) against the same conformance suite.
test-purego:
	$(GO) test -count=1 -tags purego ./internal/quant/...

# The committed test plugins and the chat template guest must rebuild byte
# for byte from their sources.
test-guests:
	host/testdata/build.sh
	internal/chatsandbox/build.sh
	git diff --exit-code -- host/testdata internal/chatsandbox/wasm

# The committed plugin modules must rebuild byte for byte (clang-14/lld-14, wabt, pinned Go,
# Debian rustc 1.63, AssemblyScript 0.27.37: make guests-install).
test-plugins: plugins
	git diff --exit-code -- internal/plugins/wasm

# The cuda build tag: compiles and vets against Debian's CUDA headers and stub
# libcuda.so (no GPU needed), regenerates the PTX and diffs it, and runs the
# device forward on the host emulator (-tags cudaemu).
test-cuda:
	scripts/cuda-ci.sh

## gpu-bundle: the cuda test binary, the CLI and small inputs for a CUDA host (scripts/gpu-check.sh).
gpu-bundle:
	scripts/gpu-bundle.sh

## plugins: rebuild the policy plugins in internal/plugins/wasm from source.
plugins:
	internal/plugins/build.sh all

test-race:
	$(GO) test -count=1 -race $(RACE_PKGS)
	# the grammar's masks shared by concurrent matchers (the rest of ./internal/grammar walks tries: slow under -race)
	$(GO) test -count=1 -race -run 'TestSharedMasks' ./internal/grammar
	# the CPU forward's thread pool (the rest of ./model is numeric hot loops: slow under -race)
	$(GO) test -count=1 -race -run 'TestPool' ./model

# The portable build must cross-compile (mmap differs per OS).
test-cross:
	GOOS=darwin GOARCH=arm64 $(GO) build $(PKGS)
	GOOS=windows GOARCH=amd64 $(GO) build $(PKGS)
	$(GO) build -tags purego $(PKGS)

# Each fuzz target runs for FUZZTIME (CI: at most 30 s each).
test-fuzz:
	@scripts/fuzz-all.sh $(FUZZTIME)

# The Kubernetes manifests decode strictly into k8s.io/api types (deploy/,
# its own module, so the main one does not depend on k8s.io/api).
test-deploy:
	cd deploy && $(GO) test -count=1 ./...

# Parity against the llama.cpp reference (its own module, tools/llamaref).
# The parity suite took about 12 minutes on 2 cores at load 25, past go
# test's default -timeout of 10; parity's TestSuiteTimeout refuses less than
# 30m.
REF_TIMEOUT ?= 40m

test-ref:
	@if [ -f tools/llamaref/go.mod ]; then cd tools/llamaref && $(GO) test -count=1 -timeout $(REF_TIMEOUT) ./...; else echo "tools/llamaref not present"; fi

lint: staticcheck-install
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	@if [ -f tools/llamaref/go.mod ]; then cd tools/llamaref && $(GO) vet ./...; fi
	GOOS=wasip1 GOARCH=wasm $(GO) vet ./abi/guest ./internal/plugins/sampler/standard/wasm ./internal/plugins/stop/strings/wasm ./internal/plugins/stop/regex ./internal/plugins/processor/allow/wasm ./internal/plugins/processor/grammar/wasm ./internal/chatsandbox/guest
	$(STATICCHECK) $(PKGS)
	$(STATICCHECK) -tags cudaemu ./internal/cuda/...

## staticcheck-install: honnef.co/go/tools' staticcheck $(STATICCHECK_VERSION) into .cache/bin (idempotent).
staticcheck-install:
	@if ! $(STATICCHECK) -version 2>/dev/null | grep -q '$(STATICCHECK_VERSION)'; then \
		GOBIN=$(CURDIR)/.cache/bin $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION); fi

## guests-install: Debian rustc + wasm32 std, and the pinned AssemblyScript in .cache/asc (idempotent).
guests-install:
	scripts/guests-install.sh

## gpu-dryrun: gpu-check.sh from the bundle against a stand-in libcuda (no GPU): checks the script.
gpu-dryrun: gpu-bundle
	scripts/gpu-dryrun.sh

## sdk-install: the official npm API clients the server's real-client tests run, into .cache/sdk (idempotent).
sdk-install:
	scripts/sdk-install.sh

## ref-install: the llama.cpp reference into .cache/llamaref (idempotent).
ref-install:
	tools/llamaref/install.sh

## llama-native: llama.cpp v0.5.0's llama-bench, llama-batched-bench, llama-server and
## llama-completion, built -DGGML_NATIVE=ON from node-llama-cpp@3.22.1's source bundle into
## .cache/llama-native/bin (idempotent; ~25 min on 2 cores at nice 19; not part of CI).
llama-native:
	scripts/llama-native.sh

## bench: Go benchmarks, then our forward against llama.cpp in the same run, same file and
## thread counts (the 110M and 1.1B fixtures, built on demand into .cache/bench; needs the
## reference: make ref-install): against the npm prebuilt (forwardbench), then, where
## make llama-native has built it, against the native llama-bench, alternating rounds at
## pp128 and pp512 (scripts/speed-vs-llama.py).
bench: build
	$(GO) test -run '^$$' -bench . -benchmem ./internal/quant/ ./model/ ./host/ ./internal/plugins/ ./tokenizer/
	cd tools/llamaref && $(GO) run ./cmd/forwardbench -sleep -n 3 -t 1,2 m110 tinyllama-1b
	@if [ -x .cache/llama-native/bin/llama-bench ]; then \
		scripts/speed-vs-llama.py --rounds 3 --threads 1,2 -p 128,512 -n 64 \
			.cache/bench/fixture-m110-Q4_K_M.gguf .cache/bench/fixture-tinyllama-1b-Q4_K_M.gguf; \
	else echo "bench: no native llama.cpp (make llama-native) for the native comparison"; fi

demo:
	@scripts/demo.sh

# make demo on a fresh clone of HEAD with no ../shared beside it (scripts/demo-clone.sh).
test-demo:
	scripts/demo-clone.sh

clean:
	rm -rf bin
