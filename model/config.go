package model

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/realizar-host/realizar-host/gguf"
	"github.com/realizar-host/realizar-host/internal/arch"
)

// Config is the shape of a model, decoded once from GGUF metadata.
type Config struct {
	Arch          string   // general.architecture, one registered in package arch (Architectures)
	Layers        int      // transformer blocks (n_layer)
	Embd          int      // model width (n_embd)
	FFN           int      // feed-forward width (n_ff); 0 when a MoE file omits it
	Heads         int      // query heads (n_head)
	KVHeads       int      // key/value heads (n_head_kv); Heads is a multiple
	HeadDim       int      // values per head, for keys and values alike
	RopeDims      int      // rotated values per head (n_rot): HeadDim, or fewer in phi3 (partial rotary)
	RopeType      RopeType // pairing of rotated values, fixed by Arch
	RopeBase      float32  // rope.freq_base; default 10000
	RopeFreqScale float32  // 1/rope.scaling.factor; 1 when unscaled
	// RopeYaRN is rope.scaling.type = yarn: each pair's angle mixes the
	// interpolated (RopeFreqScale) and the original angle by YaRN's ramp
	// over the correction dims of RopeOrigCtx, and cos and sin take YaRN's
	// magnitude correction (as ggml's rope with ext_factor 1).
	RopeYaRN bool
	// RopeOrigCtx is rope.scaling.original_context_length, the context the
	// model was trained at before YaRN; ContextLength when absent.
	RopeOrigCtx int
	// RopeAttnFactor multiplies every cos and sin of RoPE: llama.cpp's
	// yarn_attn_factor, rope.scaling.attn_factor (default 1) times, under
	// YaRN, get_mscale(factor)/(1+0.1·ln factor). 1 for most models.
	RopeAttnFactor float32
	RMSEps         float32 // RMSNorm epsilon
	QKNorm         bool    // per-head RMSNorm of Q and K before RoPE (qwen3, gemma3), fixed by Arch
	// ScaleQ is phi3's and gemma3's query scaling: Q is multiplied by
	// QueryScale after RoPE and the scores are not scaled, instead of the
	// scores being scaled by 1/sqrt(HeadDim) (which rounds differently).
	// Fixed by Arch.
	ScaleQ bool
	// QueryScale is the factor ScaleQ multiplies Q by, as llama.cpp
	// computes it in f32: 1/sqrt(HeadDim), or for a 62-layer gemma3 (Gemma 3
	// 27B) 1/sqrt(Embd/Heads). 0 without ScaleQ.
	QueryScale float32
	// FusedFFN is phi3's feed-forward: one ffn_up of 2·FFN rows, the gate's
	// rows first and the up projection's after them, and no ffn_gate.
	// Fixed by Arch.
	FusedFFN bool
	// SlidingWindow is attention.sliding_window as the file says (0 when
	// absent). In gemma3 the layers SlidingLayers marks attend to the last
	// SlidingWindow positions only (their own included), as llama.cpp's
	// standard SWA mask. llama.cpp disables Phi-3's sliding window (every
	// layer attends to the whole context), and so does this package: it is
	// reported, not applied.
	SlidingWindow int
	// SlidingLayers marks, per layer, the sliding-window layers of gemma3
	// (attention.sliding_window_pattern: a count n, layer l sliding unless
	// l%n == n-1, 6 when absent; or one bool per layer). nil when no layer
	// slides (phi3, or a gemma3 file without a window).
	SlidingLayers []bool
	// RopeBaseSWA is the sliding layers' RoPE base (rope.freq_base_swa,
	// default 10000, as llama.cpp); their RoPE is never scaled, while the
	// global layers take RopeBase and RopeFreqScale.
	RopeBaseSWA float32

	// gemma3's block; zero elsewhere. Fixed by Arch unless said otherwise.
	//
	// EmbdScale multiplies every token embedding: sqrt(Embd) in f32 (0
	// when there is no scaling).
	EmbdScale float32
	// PostNorms RMS-normalizes each sublayer's output (post_attention_norm,
	// post_ffw_norm gains) before it is added to the residual stream.
	PostNorms bool
	// GELU gates the feed-forward with ggml's tanh-approximated GELU (its
	// f16 table) instead of SiLU.
	GELU bool
	// LogitSoftcap is final_logit_softcapping from the file: the logits
	// become cap·tanh(logits/cap); 0 when absent (Gemma 3 files have none).
	LogitSoftcap  float32
	ContextLength int // trained context length in positions (n_ctx_train)
	Vocab         int // n_vocab: rows of token_embd.weight

	// Mixture of experts (qwen3moe); all 0 for dense architectures.
	Experts     int // expert_count: experts per layer (n_expert)
	ExpertsUsed int // expert_used_count: experts each token is routed to, <= Experts
	ExpertFFN   int // expert_feed_forward_length: one expert's hidden width; default FFN/ExpertsUsed
}

// MoE reports whether the feed-forward blocks are mixtures of experts.
func (c Config) MoE() bool { return c.Experts > 0 }

// Sliding reports whether layer l attends only to the last SlidingWindow
// positions (gemma3's sliding-window layers).
func (c Config) Sliding(l int) bool { return l >= 0 && l < len(c.SlidingLayers) && c.SlidingLayers[l] }

// QDim is the width of all query heads together (Heads*HeadDim).
func (c Config) QDim() int { return c.Heads * c.HeadDim }

// KVDim is the width of all key (or value) heads together (KVHeads*HeadDim).
func (c Config) KVDim() int { return c.KVHeads * c.HeadDim }

// archInfo is what an architecture fixes beyond its metadata, from its
// registration in package arch.
type archInfo struct {
	rope   RopeType // pairing of rotated values, as llama.cpp's llama_model_rope_type
	qkNorm bool     // blk.N.attn_q_norm/attn_k_norm gains, required
	moe    bool     // routed expert FFNs (ffn_gate_inp, ffn_*_exps), expert_count required
	phi3   bool     // arch.BlockPhi3
	gemma3 bool     // arch.BlockGemma3
}

// lookupArch returns what the registered architecture name fixes.
func lookupArch(name string) (archInfo, bool) {
	a, ok := arch.Lookup(name)
	if !ok {
		return archInfo{}, false
	}
	rope := RopeNorm
	if a.Rope == arch.RopeNeox {
		rope = RopeNeox
	}
	return archInfo{rope: rope, qkNorm: a.QKNorm, moe: a.MoE, phi3: a.Block == arch.BlockPhi3, gemma3: a.Block == arch.BlockGemma3}, true
}

// phi3 reports whether c is Phi-3's block (arch.BlockPhi3).
func (c *Config) phi3() bool { a, _ := lookupArch(c.Arch); return a.phi3 }

// gemma3 reports whether c is Gemma 3's block (arch.BlockGemma3).
func (c *Config) gemma3() bool { a, _ := lookupArch(c.Arch); return a.gemma3 }

// gemma3SWAPattern is llama.cpp's default sliding_window_pattern for
// gemma3: five sliding layers, then a global one.
const gemma3SWAPattern = 6

// maxExperts is llama.cpp's LLAMA_MAX_EXPERTS.
const maxExperts = 512

// Architectures lists the supported general.architecture values, sorted:
// those registered in package arch.
func Architectures() []string { return arch.Names() }

// metadata is what decodeConfig reads of a GGUF file. A missing key is an
// error for which isNotFound reports true.
type metadata interface {
	String(key string) (string, error)
	Uint32(key string) (uint32, error)
	Float32(key string) (float32, error)
	// Lookup returns the raw value under key (gguf.File's types).
	Lookup(key string) (any, bool)
}

// decodeConfig reads the hyperparameters of the file's architecture.
// Defaults follow llama.cpp: head_count_kv = head_count, key_length =
// embedding_length/head_count, rope.dimension_count = key_length,
// rope.freq_base = 10000, no RoPE scaling. Vocab is left 0 (Load sets it
// from token_embd.weight). A MoE architecture requires expert_count and
// expert_used_count; feed_forward_length is optional there and
// expert_feed_forward_length defaults to feed_forward_length/expert_used_count,
// as in llama.cpp. phi3 may rotate fewer values than a head holds
// (rope.dimension_count, even, at most key_length); its
// attention.sliding_window is read (0 when absent) but not applied. gemma3
// applies it (see gemma3Config).
//
// Errors: ErrUnsupportedArch naming the architecture; a *ConfigError
// (wrapping ErrConfig) naming the key for a missing required key or an
// inconsistent value.
func decodeConfig(md metadata) (Config, error) {
	name, err := md.String(gguf.KeyArchitecture)
	if err != nil {
		return Config{}, &ConfigError{Key: gguf.KeyArchitecture, Err: err}
	}
	info, ok := lookupArch(name)
	if !ok {
		return Config{}, fmt.Errorf("%w %q (supported: %s)", ErrUnsupportedArch, name, strings.Join(Architectures(), ", "))
	}
	c := Config{Arch: name, RopeType: info.rope, QKNorm: info.qkNorm, ScaleQ: info.phi3 || info.gemma3, FusedFFN: info.phi3,
		PostNorms: info.gemma3, GELU: info.gemma3, RopeBase: 10000, RopeFreqScale: 1, RopeAttnFactor: 1}
	d := configDecoder{md: md, arch: name}
	key := func(suffix string) string { return gguf.ArchKey(name, suffix) }

	c.Layers = d.count(gguf.SuffixBlockCount, nil)
	c.Embd = d.count(gguf.SuffixEmbeddingLength, nil)
	var ffnDef *int
	if info.moe {
		ffnDef = new(int) // unused by the expert blocks
	}
	c.FFN = d.count(gguf.SuffixFeedForwardLength, ffnDef)
	c.ContextLength = d.count(gguf.SuffixContextLength, nil)
	c.Heads = d.count(gguf.SuffixHeadCount, nil)
	c.KVHeads = d.count(gguf.SuffixHeadCountKV, &c.Heads)
	c.RMSEps = d.float(gguf.SuffixRMSEpsilon, nil)
	if d.err != nil {
		return Config{}, d.err
	}
	headDim := c.Embd / c.Heads
	c.HeadDim = d.count(gguf.SuffixKeyLength, &headDim)
	valueDim := d.count(gguf.SuffixValueLength, &c.HeadDim)
	c.RopeDims = d.count(gguf.SuffixRopeDimension, &c.HeadDim)
	if info.moe {
		d.experts(&c)
	}
	if info.phi3 {
		var none int
		c.SlidingWindow = d.count0(gguf.SuffixSlidingWindow, &none)
	}
	if info.gemma3 {
		d.gemma3(&c, valueDim)
	}
	c.RopeBase = d.float(gguf.SuffixRopeFreqBase, &c.RopeBase)
	scaling := d.str(gguf.SuffixRopeScalingType, "linear")
	var none float32
	factor := d.float(gguf.SuffixRopeScalingFactor, &none)
	if factor == 0 {
		factor = d.float(gguf.SuffixRopeScaleLinear, &none)
	}
	one := float32(1)
	attnFactor := d.float(gguf.SuffixRopeScalingAttnFactor, &one)
	c.RopeOrigCtx = d.count(gguf.SuffixRopeScalingOrigCtx, &c.ContextLength)
	if d.err != nil {
		return Config{}, d.err
	}

	if factor != 0 {
		c.RopeFreqScale = 1 / factor
	}
	switch scaling {
	case "linear":
	case "none":
		c.RopeFreqScale = 1 // llama.cpp: never scale when the type is none
	case "yarn":
		c.RopeYaRN = true
		c.RopeAttnFactor = yarnAttnFactor(c.RopeFreqScale)
	default:
		return Config{}, configErr(key(gguf.SuffixRopeScalingType), "%s = %q: only none, linear and yarn RoPE scaling are supported", key(gguf.SuffixRopeScalingType), scaling)
	}
	c.RopeAttnFactor = float32(c.RopeAttnFactor * attnFactor)
	if !(attnFactor > 0) {
		return Config{}, configErr(key(gguf.SuffixRopeScalingAttnFactor), "%s = %g out of range", key(gguf.SuffixRopeScalingAttnFactor), attnFactor)
	}
	ranges := func(suffix string) error {
		return configErr(key(suffix), "rms epsilon %g, rope base %g, rope scale %g out of range", c.RMSEps, c.RopeBase, c.RopeFreqScale)
	}
	switch {
	case c.KVHeads > c.Heads || c.Heads%c.KVHeads != 0:
		return Config{}, configErr(key(gguf.SuffixHeadCountKV), "head_count %d is not a multiple of head_count_kv %d", c.Heads, c.KVHeads)
	case valueDim != c.HeadDim:
		return Config{}, configErr(key(gguf.SuffixValueLength), "value_length %d differs from key_length %d", valueDim, c.HeadDim)
	case c.HeadDim%2 != 0:
		return Config{}, configErr(key(gguf.SuffixKeyLength), "key_length %d is odd (RoPE needs pairs)", c.HeadDim)
	case c.RopeDims != c.HeadDim && !info.phi3:
		return Config{}, configErr(key(gguf.SuffixRopeDimension), "%s = %d differs from key_length %d", key(gguf.SuffixRopeDimension), c.RopeDims, c.HeadDim)
	case c.RopeDims > c.HeadDim || c.RopeDims%2 != 0:
		return Config{}, configErr(key(gguf.SuffixRopeDimension), "%s = %d: want an even count up to key_length %d", key(gguf.SuffixRopeDimension), c.RopeDims, c.HeadDim)
	case !(c.RMSEps >= 0):
		return Config{}, ranges(gguf.SuffixRMSEpsilon)
	case !(c.RopeBase > 0):
		return Config{}, ranges(gguf.SuffixRopeFreqBase)
	case !(c.RopeFreqScale > 0):
		return Config{}, ranges(gguf.SuffixRopeScalingFactor)
	}
	if info.phi3 {
		c.QueryScale = 1 / float32(math.Sqrt(float64(c.HeadDim)))
	}
	return c, nil
}

// gemma3 reads Gemma 3's keys into c (after the heads and before RoPE's
// base), as llama.cpp's gemma3 loader: the sliding window (absent: no layer
// slides, as llama.cpp, which also takes 0 so; here 0 and a window past the
// context are errors), which layers slide (sliding_window_pattern, read
// only with a window: a count, or one bool or 0/1 per layer), the sliding
// layers' RoPE base (default 10000), the logit softcap (default none), the
// query scale, and the embedding scale. The _swa head shapes llama.cpp
// reads for every architecture must equal the global ones: its gemma3
// graph takes every layer's from layer 0.
func (d *configDecoder) gemma3(c *Config, valueDim int) {
	var none int
	c.SlidingWindow = d.count0(gguf.SuffixSlidingWindow, &none)
	window := gguf.ArchKey(d.arch, gguf.SuffixSlidingWindow)
	c.RopeBaseSWA = 10000
	switch {
	case d.err != nil:
		return
	case c.SlidingWindow > c.ContextLength:
		d.err = configErr(window, "%s = %d exceeds the context length %d", window, c.SlidingWindow, c.ContextLength)
		return
	case c.SlidingWindow == 0 && d.has(gguf.SuffixSlidingWindow):
		d.err = configErr(window, "%s = 0: want a window of at least 1 position (omit the key for none)", window)
		return
	case c.SlidingWindow > 0:
		c.SlidingLayers = d.slidingPattern(c.Layers)
		c.RopeBaseSWA = d.float(gguf.SuffixRopeFreqBaseSWA, &c.RopeBaseSWA)
		if d.err == nil && !(c.RopeBaseSWA > 0 && c.RopeBaseSWA <= math.MaxFloat32) {
			d.err = configErr(gguf.ArchKey(d.arch, gguf.SuffixRopeFreqBaseSWA), "%s = %g out of range", gguf.ArchKey(d.arch, gguf.SuffixRopeFreqBaseSWA), c.RopeBaseSWA)
			return
		}
	}
	var zero float32
	c.LogitSoftcap = d.float(gguf.SuffixFinalLogitSoftcap, &zero)
	if d.err == nil && !(c.LogitSoftcap >= 0 && c.LogitSoftcap <= math.MaxFloat32) {
		d.err = configErr(gguf.ArchKey(d.arch, gguf.SuffixFinalLogitSoftcap), "%s = %g: want 0 (none) or a positive cap", gguf.ArchKey(d.arch, gguf.SuffixFinalLogitSoftcap), c.LogitSoftcap)
		return
	}
	for _, k := range []struct {
		suffix string
		full   int
	}{{gguf.SuffixKeyLengthSWA, c.HeadDim}, {gguf.SuffixValueLengthSWA, valueDim}, {gguf.SuffixRopeDimensionSWA, c.RopeDims}} {
		full := k.full
		if v := d.count(k.suffix, &full); d.err == nil && v != full {
			d.err = configErr(gguf.ArchKey(d.arch, k.suffix), "%s = %d differs from the global layers' %d (not supported for gemma3)", gguf.ArchKey(d.arch, k.suffix), v, full)
		}
	}
	if d.err != nil {
		return
	}
	// llama.cpp: Gemma 3 27B (62 layers) scales the query by
	// 1/sqrt(n_embd/n_head), the others by 1/sqrt(head_dim).
	qdim := c.HeadDim
	if c.Layers == 62 {
		qdim = c.Embd / c.Heads
	}
	c.QueryScale = 1 / float32(math.Sqrt(float64(float32(qdim))))
	c.EmbdScale = float32(math.Sqrt(float64(float32(c.Embd))))
}

// slidingPattern reads which of layers layers slide: sliding_window_pattern
// as a count n (0: all slide; else layer l slides unless l%n == n-1, as
// llama.cpp's set_swa_pattern), or as an array of one bool (or 0/1 integer)
// per layer; gemma3SWAPattern when absent.
func (d *configDecoder) slidingPattern(layers int) []bool {
	key := gguf.ArchKey(d.arch, gguf.SuffixSlidingWindowPattern)
	v, ok := d.md.Lookup(key)
	if arr, isArr := v.(gguf.Array); ok && isArr {
		if arr.Len() != layers {
			d.err = configErr(key, "%s has %d entries for %d layers", key, arr.Len(), layers)
			return nil
		}
		out := make([]bool, layers)
		for l := range out {
			var flag int64
			switch s := arr.Values.(type) {
			case []bool:
				out[l] = s[l]
				continue
			case []uint8, []int8, []uint16, []int16, []uint32, []int32, []uint64, []int64:
				flag = arrayInt(arr, l)
			default:
				d.err = configErr(key, "%s holds %v, want one bool or 0/1 per layer", key, arr.Elem)
				return nil
			}
			if flag != 0 && flag != 1 {
				d.err = configErr(key, "%s[%d] = %d, want 0 (global) or 1 (sliding)", key, l, flag)
				return nil
			}
			out[l] = flag == 1
		}
		return out
	}
	def := gemma3SWAPattern
	n := d.count0(gguf.SuffixSlidingWindowPattern, &def)
	if d.err != nil {
		return nil
	}
	out := make([]bool, layers)
	for l := range out {
		out[l] = n == 0 || l%n < n-1
	}
	return out
}

// arrayInt is element i of an integer array, widened (values past int64
// saturate, which no 0/1 check passes).
func arrayInt(a gguf.Array, i int) int64 {
	switch s := a.Values.(type) {
	case []uint8:
		return int64(s[i])
	case []int8:
		return int64(s[i])
	case []uint16:
		return int64(s[i])
	case []int16:
		return int64(s[i])
	case []uint32:
		return int64(s[i])
	case []int32:
		return int64(s[i])
	case []uint64:
		return int64(min(s[i], math.MaxInt64))
	case []int64:
		return s[i]
	}
	return -1
}

// has reports whether the file has the per-architecture key suffix.
func (d *configDecoder) has(suffix string) bool {
	_, ok := d.md.Lookup(gguf.ArchKey(d.arch, suffix))
	return ok
}

// yarnAttnFactor is llama.cpp's yarn_attn_factor under YaRN before
// rope.scaling.attn_factor: get_mscale(factor, 1) = 1 + 0.1·ln(factor) (1
// for factor <= 1), divided by the 1 + 0.1·ln(factor) ggml's rope
// multiplies in again. Each float32 step rounds on its own, as libllama's
// generic x86-64 build computes it (no FMA).
func yarnAttnFactor(freqScale float32) float32 {
	factor := 1 / freqScale
	ms := float32(1)
	if factor > 1 {
		ms = float32(float32(0.1)*logf(factor)) + 1
	}
	cancel := 1 / (float32(float32(0.1)*logf(factor)) + 1)
	return float32(ms * cancel)
}

// logf is glibc's logf for the arguments RoPE scaling takes (scaling
// factors, bases, n_ctx_orig/(beta·2π)): float64's log rounded once to
// float32, which testdata/logf_glibc.txt checks against glibc.
func logf(x float32) float32 { return float32(math.Log(float64(x))) }

// configDecoder reads per-architecture keys, remembering the first error.
type configDecoder struct {
	md   metadata
	arch string
	err  error
}

// count reads a positive count. def is the value when the key is absent;
// nil makes the key required.
func (d *configDecoder) count(suffix string, def *int) int { return d.countFrom(suffix, def, 1) }

// count0 is count for a key whose value may be 0 (as the file's "no
// window").
func (d *configDecoder) count0(suffix string, def *int) int { return d.countFrom(suffix, def, 0) }

// countFrom reads a count in [lo, 1<<24].
func (d *configDecoder) countFrom(suffix string, def *int, lo uint32) int {
	if d.err != nil {
		return 0
	}
	key := gguf.ArchKey(d.arch, suffix)
	v, err := d.md.Uint32(key)
	switch {
	case err != nil && def != nil && isNotFound(err):
		return *def
	case err != nil:
		d.err = &ConfigError{Key: key, Err: err}
		return 0
	case v < lo || v > 1<<24:
		d.err = configErr(key, "%s = %d out of range [%d, %d]", key, v, lo, 1<<24)
		return 0
	}
	return int(v)
}

// experts reads a MoE architecture's expert counts into c (after FFN).
func (d *configDecoder) experts(c *Config) {
	c.Experts = d.count(gguf.SuffixExpertCount, nil)
	c.ExpertsUsed = d.count(gguf.SuffixExpertUsedCount, nil)
	if d.err != nil {
		return
	}
	count, used := gguf.ArchKey(d.arch, gguf.SuffixExpertCount), gguf.ArchKey(d.arch, gguf.SuffixExpertUsedCount)
	switch {
	case c.Experts > maxExperts:
		d.err = configErr(count, "%s = %d: at most %d experts", count, c.Experts, maxExperts)
		return
	case c.ExpertsUsed > c.Experts:
		d.err = configErr(used, "%s = %d exceeds %s = %d", used, c.ExpertsUsed, count, c.Experts)
		return
	}
	def := c.FFN / c.ExpertsUsed
	var missing *int
	if def > 0 {
		missing = &def
	}
	c.ExpertFFN = d.count(gguf.SuffixExpertFeedForward, missing)
}

// float reads an f32 value; def as for count.
func (d *configDecoder) float(suffix string, def *float32) float32 {
	if d.err != nil {
		return 0
	}
	v, err := d.md.Float32(gguf.ArchKey(d.arch, suffix))
	switch {
	case err != nil && def != nil && isNotFound(err):
		return *def
	case err != nil:
		d.err = &ConfigError{Key: gguf.ArchKey(d.arch, suffix), Err: err}
		return 0
	}
	return v
}

// str reads an optional string value.
func (d *configDecoder) str(suffix, def string) string {
	if d.err != nil {
		return ""
	}
	v, err := d.md.String(gguf.ArchKey(d.arch, suffix))
	switch {
	case err != nil && isNotFound(err):
		return def
	case err != nil:
		d.err = &ConfigError{Key: gguf.ArchKey(d.arch, suffix), Err: err}
		return ""
	}
	return v
}

func isNotFound(err error) bool { return errors.Is(err, gguf.ErrKeyNotFound) }
