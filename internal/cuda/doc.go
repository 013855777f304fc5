// Package cuda runs the quantized forward of package model on an NVIDIA GPU
// through the CUDA driver API (gorgonia.org/cu), held to the CPU forward by
// a parity gate.
//
// # Builds
//
// Everything that touches the driver is built only with the `cuda` build
// tag (a `cudaemu` build, for tests, runs the same forward on a host
// emulator of the kernels instead, NewSequence and the gate included). Without
// either tag NewSequence and Available return ErrUnavailable; the package's
// pure parts (the pool planner, the parity judge, the verdict cache, the
// embedded kernels) build in every configuration, but what it exports is
// only NewSequence and its Step (with the gate's Verdict), Options, Available,
// the verdict cache (OpenVerdictCache, FileSHA256) and the errors. A `cuda`
// build links libcuda and needs an NVIDIA driver just to start:
// gorgonia.org/cu initializes the driver in its package init and exits the
// process when there is none. The default artifact is therefore the CPU
// build.
//
// # Device layout
//
// All weights of a model are uploaded once into one pooled device
// allocation, each tensor at a 256-byte aligned offset (planPool), in its
// recorded ggml type; norm gains and biases are f32 tensors in the same
// pool. Kernels exist for exactly the types of the CPU path (kernelTypes);
// any other type is a load-time *TensorError naming the tensor. The KV cache
// is one more device allocation: per layer, keys and values as f16
// [capacity][KVDim], sized by Reserve.
//
// # Kernels
//
// The kernels are CUDA C in kernels/*.cu, one file per family (gemv,
// norm, rope, attention, elementwise), compiled ahead of time by
// scripts/cuda-ptx.sh (NVRTC) to PTX for compute_80 and compute_90,
// committed under ptx/ and embedded; the driver JIT-compiles the PTX for the
// card at load. The same kernels are also committed as CUBIN machine code
// for sm_80 and sm_90, loaded when the JIT fails (a driver without its PTX
// JIT library, say); after both, the compute_80 PTX is tried. Every kernel
// the forward launches is resolved at load, so a missing one is a load
// error. kernelHash identifies the set.
//
// The kernels compute what the CPU forward computes, rounding where it
// rounds: activations are encoded as package quant encodes them for the
// weight's type (Q8_K per 256 values for the K-quants, Q8_0 with an f16
// scale for the legacy types, f16 or bf16 for those float weights),
// attention rounds the query and the probabilities to f16 like the f16 KV
// cache, and RoPE angles come from repeated multiplication. GPU and CPU
// logits then differ by the order of float sums only (Q4_1 and Q5_1 aside,
// whose Q8_1 sum term is not reproduced), which keeps greedy decoding
// token for token equal on random-weight fixtures whose top two logits can
// be 0.007 apart.
//
// A CUDA context is current per OS thread and goroutines move between
// threads, so every driver call is made from a goroutine pinned to its
// thread with the device's context made current there first; callers need
// not care which goroutine they are on (one at a time: a step is not safe
// for concurrent use; the sequences of one upload, Step.NewSequence,
// take turns on the device under one lock). Options.SyncEachLaunch makes
// every launch wait for its kernel, so that a kernel fault is reported
// with the kernel's name.
//
// # Passes
//
// The forward runs in passes of up to Options.BatchSize rows, a row being
// one token of one sequence at one position: a decode step is one row, a
// prefill span a run of consecutive positions of one sequence, and a
// Batch pass the rows of several sequences of one upload, each with
// its own KV cache. A pass table (the rows' tokens, and per row its
// sequence's cache, capacity and position) goes to the device in one
// copy; RoPE, the KV-cache write and attention read each row's position
// and cache from it, the weight products read each weight row once for
// up to 8 activation rows (GEMV_ROWS), and the output head runs only on
// the rows whose logits are wanted. Every kernel computes a row the same
// way whatever else is in its pass, so a row's logits are bit for bit
// those of its sequence alone.
//
// A pass runs on one stream with no synchronization between kernels: one
// host→device copy of the pass table, then embedding (gemma3: scaled), per
// layer RMSNorm, Q8 activation encoding, the Q/K/V products (dp4a for the
// integer types; phi3's fused attn_qkv as three row views of one tensor),
// qwen3's and gemma3's per-head Q/K RMSNorm, RoPE (NORM for llama, NEOX for
// the others; linear or YaRN scaling, an attn_factor, rope_freqs or
// LongRoPE factors, partial rotary; gemma3's sliding layers with their own
// base), the f16 KV-cache write, attention over the cache with
// grouped-query heads (gemma3's sliding layers over their window), the
// output product (gemma3: RMS-normalized) and residual add, RMSNorm,
// gate/up products (phi3: row views of the fused ffn_up), SwiGLU (gemma3:
// GELU), the down product (gemma3: normalized) and residual add; then, for
// the rows whose logits are wanted, the final norm, the output head
// (gemma3: soft-capped), and one device→host copy of each row's logits.
// A qwen3moe layer's feed-forward is the exception to "no synchronization":
// the router's outputs are copied back and routed on the host (as the CPU
// forward routes), then each chosen expert's rows are gathered, multiplied
// by row views of the merged expert tensors and added back weighted
// (moe_add); such a model's passes are therefore never recorded as graphs.
//
// A decode pass (every row wants logits) is recorded as a CUDA graph at
// its first use per row count, and later passes of that many rows replay
// the recording in one cuGraphLaunch instead of some 15 launches a layer:
// what changes between such passes (tokens, positions, caches) is in the
// pass table on the device, not in the launches' arguments. A recording
// is dropped when attention's scratch moves (a sequence's cache grew);
// Options.NoGraphs, or SyncEachLaunch, launches kernel by kernel, and so
// does every pass once a recording fails (DeviceInfo's last line says
// why). The bindings (cuStreamBeginCapture .. cuGraphLaunch) are this
// package's own, gorgonia.org/cu having none.
//
// # Parity gate and fallback
//
// NewSequence runs a 64-token probe on the GPU and on the CPU forward and
// judges the logits (judge): the GPU is rejected when the cosine similarity
// falls below 0.95 at any position, or the argmax differs at a position
// whose cosine is below 0.98. The verdict is cached per (GGUF file sha256,
// device name, kernelHash) in a VerdictCache. A rejected GPU, an
// out-of-memory or a kernel error after start switches the Step to the CPU
// forward loudly: a line on stderr, a notice line (OnFallback, wired to
// forward.SequenceForward.AddNotice), Backend reporting onGPU false, and the
// whole held span replayed on the CPU.
//
// # Status
//
// Unverified on GPU hardware: the device path has been compiled (PTX for
// compute_80 and compute_90 by NVRTC, vetted and linked against the
// driver stub) but has not yet run on a GPU, so neither the driver's JIT of
// the PTX nor any speed has been observed. What is checked without one:
// every kernel, compiled from the same sources as host C++ on the fiber
// emulator of testdata/emu, against host references (emu_test.go); the
// block unpacking of every weight type against package quant
// (unpack_test.go); and, in a `cudaemu` build, the whole device forward
// (pooled upload, launch sequence, KV cache, batched prefill) passing the
// parity gate and greedy equality against the CPU forward on small llama,
// qwen2, tied-output, qwen3, qwen3moe, YaRN-scaled llama, phi3 and gemma3
// fixtures
// in F32, F16, Q4_K_M, Q8_0 and Q4_0.
// scripts/gpu-bundle.sh and scripts/gpu-check.sh carry the device tests to
// a CUDA host (docs/gpu-run.md); gpu-check.log then starts with "device:"
// lines (driver, compute capability, memory, how each kernel family
// loaded, registers per kernel), has one verdict line per kernel type and
// per fixture, the speed runs' "bandwidth:" and "speed" lines (decode's
// achieved weight bandwidth against the device's copy bandwidth), and
// ends with "gpu-check: PASS" or "gpu-check: FAIL" and what failed.
package cuda
