//go:build !amd64 || purego

package quant

// fastName names the Fast kernels of this build.
const fastName = "reference"

// quantizeQ8K encodes whole Q8_K blocks: len(x) = 256*nb, len(dst) = 292*nb.
func quantizeQ8K(dst []byte, x []float32) { quantizeQ8KRef(dst, x) }

// dotQ4_K multiplies nb block_q4_K with nb block_q8_K.
func dotQ4_K(w, a []byte, nb int) float32 { return dotQ4_KRef(w, a, nb) }

// dotQ6_K multiplies nb block_q6_K with nb block_q8_K.
func dotQ6_K(w, a []byte, nb int) float32 { return dotQ6_KRef(w, a, nb) }

// dotQ4_0 multiplies nb block_q4_0 with nb block_q8_0.
func dotQ4_0(w, a []byte, nb int) float32 { return dotQ4_0Ref(w, a, nb) }

// dotQ5_0 multiplies nb block_q5_0 with nb block_q8_0.
func dotQ5_0(w, a []byte, nb int) float32 { return dotQ5_0Ref(w, a, nb) }

// dotQ5_K multiplies nb block_q5_K with nb block_q8_K.
func dotQ5_K(w, a []byte, nb int) float32 { return dotQ5_KRef(w, a, nb) }

// dotQ8_0 multiplies nb block_q8_0 with nb block_q8_0.
func dotQ8_0(w, a []byte, nb int) float32 { return dotQ8_0Ref(w, a, nb) }

// dotF32 multiplies n little-endian float32 with n float32.
func dotF32(w, a []byte, n int) float32 { return dotF32Ref(w, a, n) }

// dotF16 multiplies n binary16 with n binary16.
func dotF16(w, a []byte, n int) float32 { return dotF16Ref(w, a, n) }

// dotBF16 multiplies n bfloat16 with n bfloat16.
func dotBF16(w, a []byte, n int) float32 { return dotBF16Ref(w, a, n) }

// dotQ4_1 multiplies nb block_q4_1 with nb block_q8_1.
func dotQ4_1(w, a []byte, nb int) float32 { return dotQ4_1Ref(w, a, nb) }

// dotQ5_1 multiplies nb block_q5_1 with nb block_q8_1.
func dotQ5_1(w, a []byte, nb int) float32 { return dotQ5_1Ref(w, a, nb) }

// dotQ8_0AMX multiplies nb block_q8_0 with nb block_q8_0 in ggml's AMX order.
func dotQ8_0AMX(w, a []byte, nb int) float32 { return dotQ8_0AMXRef(w, a, nb) }

// dotQ4_KAMX multiplies nb block_Q4_K with nb block_q8_K in ggml's AMX order.
func dotQ4_KAMX(w, a []byte, nb int) float32 { return dotQ4_KAMXRef(w, a, nb) }

// dotQ5_KAMX multiplies nb block_Q5_K with nb block_q8_K in ggml's AMX order.
func dotQ5_KAMX(w, a []byte, nb int) float32 { return dotQ5_KAMXRef(w, a, nb) }

// dotQ6_KAMX multiplies nb block_Q6_K with nb block_q8_K in ggml's AMX order.
func dotQ6_KAMX(w, a []byte, nb int) float32 { return dotQ6_KAMXRef(w, a, nb) }

// dotQ4_0AMX multiplies nb block_q4_0 with nb block_q8_0 in ggml's AMX order.
func dotQ4_0AMX(w, a []byte, nb int) float32 { return dotQ4_0AMXRef(w, a, nb) }

// dotQ4_KRepack multiplies nb block_q4_K with nb block_q8_K in ggml's
// CPU_REPACK order.
func dotQ4_KRepack(w, a []byte, nb int) float32 { return dotQ4_KRepackRef(w, a, nb) }

// hasFour reports whether dotFour has a kernel for t: never in this build,
// so the batched kernels run the row kernels once per vector.
func hasFour(Type, order, bool) bool { return false }

// dotFour is never called in this build (hasFour is false).
func dotFour(t Type, _ order, _ bool, _ *[4]float32, _, _ []byte, _, _ int) {
	panic("quant: no four-vector kernel for " + t.String())
}

// hasFourVNNI reports whether dotFour has an AVX-512 VNNI kernel for t:
// never in this build.
func hasFourVNNI(Type, order) bool { return false }

// useVNNI is false in this build: no eight-vector kernels.
const useVNNI = false

// hasEight reports whether dotEight has a kernel for t: never in this
// build.
func hasEight(Type, order) bool { return false }

// dotEight is never called in this build (hasEight is false).
func dotEight(t Type, _ order, _ *[8]float32, _, _ []byte, _, _ int) {
	panic("quant: no eight-vector kernel for " + t.String())
}

// avx2Blocks and avx2AMXBlocks are the fast blocks: no AVX2 path here.
var (
	avx2Blocks    = fastBlocks
	avx2AMXBlocks = fastAMXBlocks
)

// hasPanelFour: the reference panel kernel takes vectors one at a time.
const hasPanelFour = false

// panelBlocksFast is the reference panel kernel in this build.
func panelBlocksFast(out *[4][8]float32, panel, a []byte, as, nb, cols int) {
	panelBlocksRef(out, panel, a, as, nb, cols)
}

// panelBlocksAVX2 is the reference panel kernel in this build.
func panelBlocksAVX2(out *[4][8]float32, panel, a []byte, as, nb, cols int) {
	panelBlocksRef(out, panel, a, as, nb, cols)
}

// f32ToF16Vec converts nothing in this build: F32ToF16Slice's loop runs.
func f32ToF16Vec(dst []byte, src []float32) int { return 0 }

// fastDotColsBatch is the reference kernel in llamafile's order in this
// build.
func fastDotColsBatch(t Type) DotColsFunc { return refDotColsBatch(t) }
