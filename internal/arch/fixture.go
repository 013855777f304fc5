package arch

import (
	"errors"
	"fmt"

	"github.com/realizar-host/realizar-host/gguf"
)

// ErrFixture is wrapped by every error Fixture.Validate returns
// (fixture.ErrConfig is this value).
var ErrFixture = errors.New("fixture: invalid config")

// Fixture describes a model for package fixture to generate (fixture.Config
// is this type). Build one from a registered preset (fixture.Preset) and
// adjust fields as needed.
type Fixture struct {
	// Name is written as general.name.
	Name string
	// Arch is a registered architecture (Names); its registration fixes
	// the tensors written (QKNorm, MoE, Block).
	Arch string
	// Embd is n_embd, the width of the residual stream.
	Embd int
	// FF is n_ff, the hidden width of the feed-forward block.
	FF int
	// Experts, ExpertsUsed and ExpertFF shape a MoE architecture's feed-forward:
	// Experts experts of hidden width ExpertFF, ExpertsUsed of them routed
	// per token (expert_count, expert_used_count,
	// expert_feed_forward_length). MoE architectures only, where all three are
	// required; FF is then only written as feed_forward_length.
	Experts, ExpertsUsed, ExpertFF int
	// Layers is the number of transformer blocks.
	Layers int
	// Heads is the number of query heads; it divides Embd unless KeyLength
	// is set (head_dim = Embd/Heads).
	Heads int
	// HeadsKV is the number of key/value heads; it divides Heads.
	HeadsKV int
	// KeyLength, when nonzero, is head_dim, written as
	// attention.key_length and value_length: Q is Heads·KeyLength wide,
	// which may differ from Embd (as in Qwen3). 0 means Embd/Heads.
	KeyLength int
	// Context is the context length in positions.
	Context int
	// RopeBase is the RoPE frequency base (theta).
	RopeBase float32
	// RMSEps is the RMSNorm epsilon.
	RMSEps float32
	// RopeScaling, when set ("linear" or "yarn"), is written as
	// rope.scaling.type with RopeScaleFactor as rope.scaling.factor and,
	// for yarn, RopeOrigContext as rope.scaling.original_context_length.
	RopeScaling     string
	RopeScaleFactor float32
	RopeOrigContext int
	// RopeDims, when nonzero, is rope.dimension_count: the values of each
	// head RoPE rotates, fewer than head_dim (partial rotary, as in
	// Phi-4-mini). BlockPhi3 only; 0 means head_dim.
	RopeDims int
	// LongRoPE writes BlockPhi3's rope_factors_long.weight and
	// rope_factors_short.weight ([rope dims/2] each) with RopeOrigContext as
	// rope.scaling.original_context_length, which chooses between them.
	// BlockPhi3 only.
	LongRoPE bool
	// RopeAttnFactor, when nonzero, is rope.scaling.attn_factor (Phi-3's
	// long-context files carry one).
	RopeAttnFactor float32
	// SlidingWindow, when nonzero, is BlockGemma3's attention.sliding_window:
	// the positions a sliding layer attends to (at most Context).
	// SlidingPattern, when nonzero, is attention.sliding_window_pattern as
	// a count n (layer l slides unless l%n == n-1); 0 leaves the key out,
	// for llama.cpp's default of 6. RopeBaseSWA, when nonzero, is
	// rope.freq_base_swa, the sliding layers' RoPE base (llama.cpp's
	// default 10000 when absent). BlockGemma3 only.
	SlidingWindow  int
	SlidingPattern int
	RopeBaseSWA    float32
	// LogitSoftcap, when nonzero, is final_logit_softcapping. BlockGemma3 only.
	LogitSoftcap float32
	// QKVBias adds attn_q/k/v.bias tensors (as Qwen2 has).
	QKVBias bool
	// TiedOutput omits output.weight: the logits reuse token_embd.weight.
	TiedOutput bool
	// Seed selects the weights; the same Fixture always gives the same file.
	Seed uint64
	// Type is the type of the 2-D weights: gguf.TypeF32 or gguf.TypeF16.
	Type gguf.TensorType
}

// HeadDim is KeyLength when set, else Embd/Heads.
func (c Fixture) HeadDim() int {
	if c.KeyLength != 0 {
		return c.KeyLength
	}
	return c.Embd / c.Heads
}

// Block is the transformer block of c.Arch's registration (BlockLlama for
// an unregistered one, which Validate refuses).
func (c Fixture) Block() Block { a, _ := Lookup(c.Arch); return a.Block }

// QKNorm reports whether the architecture has per-head Q and K norms.
func (c Fixture) QKNorm() bool { a, _ := Lookup(c.Arch); return a.QKNorm }

// PostNorms reports whether each sublayer's output has its own norm
// (Gemma 3's post_attention_norm and post_ffw_norm).
func (c Fixture) PostNorms() bool { return c.Block() == BlockGemma3 }

// MoE reports whether the feed-forward blocks are mixtures of experts.
func (c Fixture) MoE() bool { a, _ := Lookup(c.Arch); return a.MoE }

// RotatedDims is RopeDims when set, else HeadDim.
func (c Fixture) RotatedDims() int {
	if c.RopeDims != 0 {
		return c.RopeDims
	}
	return c.HeadDim()
}

// Validate reports the first invalid field, wrapping ErrFixture.
func (c Fixture) Validate() error {
	a, ok := Lookup(c.Arch)
	if !ok {
		return fmt.Errorf("%w: arch %q, want %s", ErrFixture, c.Arch, List(Names(), "or"))
	}
	return c.validate(a)
}

// validate is Validate for c.Arch's registration a (Register validates its
// presets before a is in the registry).
func (c Fixture) validate(a Arch) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrFixture}, args...)...)
	}
	phi3 := a.Block == BlockPhi3
	gemma3 := a.Block == BlockGemma3
	switch {
	case a.MoE && (c.Experts <= 0 || c.ExpertsUsed <= 0 || c.ExpertsUsed > c.Experts || c.ExpertFF <= 0):
		return bad("experts %d, used %d, expert ff %d: want 1 <= used <= experts and a positive width", c.Experts, c.ExpertsUsed, c.ExpertFF)
	case !a.MoE && (c.Experts != 0 || c.ExpertsUsed != 0 || c.ExpertFF != 0):
		return bad("experts are for %s, not %s", List(Where(func(a Arch) bool { return a.MoE }), "and"), c.Arch)
	case c.Embd <= 0 || c.FF <= 0 || c.Layers <= 0 || c.Heads <= 0 || c.HeadsKV <= 0 || c.Context <= 0 || c.KeyLength < 0:
		return bad("sizes must be positive: embd %d, ff %d, layers %d, heads %d, heads_kv %d, context %d, key_length %d",
			c.Embd, c.FF, c.Layers, c.Heads, c.HeadsKV, c.Context, c.KeyLength)
	case c.KeyLength == 0 && c.Embd%c.Heads != 0:
		return bad("heads %d do not divide embd %d", c.Heads, c.Embd)
	case c.Heads%c.HeadsKV != 0:
		return bad("heads_kv %d do not divide heads %d", c.HeadsKV, c.Heads)
	case c.HeadDim()%2 != 0:
		return bad("head_dim %d is odd; RoPE rotates pairs", c.HeadDim())
	case !(c.RopeBase > 0) || !(c.RMSEps > 0):
		return bad("rope base %v and rms eps %v must be positive", c.RopeBase, c.RMSEps)
	case c.RopeScaling != "" && c.RopeScaling != "linear" && c.RopeScaling != "yarn":
		return bad("rope scaling %q, want linear or yarn", c.RopeScaling)
	case c.RopeScaling != "" && !(c.RopeScaleFactor > 0):
		return bad("rope scaling factor %v must be positive", c.RopeScaleFactor)
	case c.RopeScaling != "yarn" && !c.LongRoPE && c.RopeOrigContext != 0, c.RopeOrigContext < 0:
		return bad("rope original context %d: for yarn or LongRoPE only, and not negative", c.RopeOrigContext)
	case !phi3 && (c.LongRoPE || c.RopeDims != 0):
		return bad("LongRoPE and partial rotary are for %s, not %s", List(Where(func(a Arch) bool { return a.Block == BlockPhi3 }), "and"), c.Arch)
	case c.RopeDims < 0 || c.RopeDims > c.HeadDim() || c.RopeDims%2 != 0:
		return bad("rope dims %d: want an even count up to head_dim %d", c.RopeDims, c.HeadDim())
	case c.LongRoPE && c.RopeOrigContext == 0:
		return bad("LongRoPE needs the original context that chooses its factors")
	case !gemma3 && (c.SlidingWindow != 0 || c.SlidingPattern != 0 || c.RopeBaseSWA != 0 || c.LogitSoftcap != 0):
		return bad("sliding windows and the logit softcap are for %s, not %s", List(Where(func(a Arch) bool { return a.Block == BlockGemma3 }), "and"), c.Arch)
	case c.SlidingWindow < 0 || c.SlidingWindow > c.Context || c.SlidingPattern < 0:
		return bad("sliding window %d (want 0 to context %d), pattern %d", c.SlidingWindow, c.Context, c.SlidingPattern)
	case c.RopeBaseSWA < 0 || c.LogitSoftcap < 0:
		return bad("swa rope base %v and logit softcap %v must not be negative", c.RopeBaseSWA, c.LogitSoftcap)
	case c.RopeAttnFactor < 0:
		return bad("rope attn_factor %v is negative", c.RopeAttnFactor)
	case c.Type != gguf.TypeF32 && c.Type != gguf.TypeF16:
		return bad("type %v, want F32 or F16", c.Type)
	}
	return nil
}
