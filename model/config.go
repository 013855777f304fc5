package model

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/realizar-host/realizar-host/gguf"
)

// Config is the shape of a model, decoded once from GGUF metadata.
type Config struct {
	Arch          string   // general.architecture: "llama", "qwen2", "qwen3", "qwen3moe" or "phi3"
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
	QKNorm         bool    // per-head RMSNorm of Q and K before RoPE (qwen3), fixed by Arch
	// ScaleQ is phi3's query scaling: Q is multiplied by 1/sqrt(HeadDim)
	// after RoPE and the scores are not scaled, instead of the scores being
	// scaled (which rounds differently). Fixed by Arch.
	ScaleQ bool
	// FusedFFN is phi3's feed-forward: one ffn_up of 2·FFN rows, the gate's
	// rows first and the up projection's after them, and no ffn_gate.
	// Fixed by Arch.
	FusedFFN bool
	// SlidingWindow is attention.sliding_window as the file says (0 when
	// absent). llama.cpp disables Phi-3's sliding window (every layer
	// attends to the whole context), and so does this package: it is
	// reported, not applied.
	SlidingWindow int
	ContextLength int // trained context length in positions (n_ctx_train)
	Vocab         int // n_vocab: rows of token_embd.weight

	// Mixture of experts (qwen3moe); all 0 for dense architectures.
	Experts     int // expert_count: experts per layer (n_expert)
	ExpertsUsed int // expert_used_count: experts each token is routed to, <= Experts
	ExpertFFN   int // expert_feed_forward_length: one expert's hidden width; default FFN/ExpertsUsed
}

// MoE reports whether the feed-forward blocks are mixtures of experts.
func (c Config) MoE() bool { return c.Experts > 0 }

// QDim is the width of all query heads together (Heads*HeadDim).
func (c Config) QDim() int { return c.Heads * c.HeadDim }

// KVDim is the width of all key (or value) heads together (KVHeads*HeadDim).
func (c Config) KVDim() int { return c.KVHeads * c.HeadDim }

// archInfo is what an architecture fixes beyond its metadata.
type archInfo struct {
	rope   RopeType // pairing of rotated values, as llama.cpp's llama_model_rope_type
	qkNorm bool     // blk.N.attn_q_norm/attn_k_norm gains, required
	moe    bool     // routed expert FFNs (ffn_gate_inp, ffn_*_exps), expert_count required
	// phi3 is Phi-3's block: attn_qkv (or attn_q/k/v), the fused gate-up
	// ffn_up, LongRoPE's rope_factors_long/short, the query scaled before
	// attention, partial rotary (rope.dimension_count < key_length), and
	// attention.sliding_window read but not applied.
	phi3 bool
}

// architectures maps each supported general.architecture to its fixed
// features.
var architectures = map[string]archInfo{
	"llama":    {rope: RopeNorm},
	"qwen2":    {rope: RopeNeox},
	"qwen3":    {rope: RopeNeox, qkNorm: true},
	"qwen3moe": {rope: RopeNeox, qkNorm: true, moe: true},
	"phi3":     {rope: RopeNeox, phi3: true},
}

// phi3 reports whether c is Phi-3's block (see archInfo.phi3).
func (c *Config) phi3() bool { return architectures[c.Arch].phi3 }

// maxExperts is llama.cpp's LLAMA_MAX_EXPERTS.
const maxExperts = 512

// Architectures lists the supported general.architecture values, sorted.
func Architectures() []string {
	names := make([]string, 0, len(architectures))
	for n := range architectures {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// metadata is what decodeConfig reads of a GGUF file. A missing key is an
// error for which isNotFound reports true.
type metadata interface {
	String(key string) (string, error)
	Uint32(key string) (uint32, error)
	Float32(key string) (float32, error)
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
// attention.sliding_window is read (0 when absent) but not applied.
//
// Errors: ErrUnsupportedArch naming the architecture; a *ConfigError
// (wrapping ErrConfig) naming the key for a missing required key or an
// inconsistent value.
func decodeConfig(md metadata) (Config, error) {
	arch, err := md.String(gguf.KeyArchitecture)
	if err != nil {
		return Config{}, &ConfigError{Key: gguf.KeyArchitecture, Err: err}
	}
	info, ok := architectures[arch]
	if !ok {
		return Config{}, fmt.Errorf("%w %q (supported: %s)", ErrUnsupportedArch, arch, strings.Join(Architectures(), ", "))
	}
	c := Config{Arch: arch, RopeType: info.rope, QKNorm: info.qkNorm, ScaleQ: info.phi3, FusedFFN: info.phi3,
		RopeBase: 10000, RopeFreqScale: 1, RopeAttnFactor: 1}
	d := configDecoder{md: md, arch: arch}
	key := func(suffix string) string { return gguf.ArchKey(arch, suffix) }

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
	return c, nil
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
