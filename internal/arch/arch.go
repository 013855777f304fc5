// Package arch is the architecture registry: one file per GGUF
// general.architecture (llama.go, qwen2.go, …) registers, in an init
// function, everything the rest of the tree asks of that architecture —
// the features of its transformer block that fix how its {arch}.* keys
// decode and which tensors it loads (model), its RoPE pairing, the
// llama.cpp quantization rules that depend on it (quantize), its fixture
// presets and vocabulary (fixture), whether the GPU forward runs it (cuda),
// and what inspect notes about it. Nothing outside this package lists
// architectures: consumers ask Lookup or Names (a test checks it).
//
// The anchor is ollama's model/models/<arch> with model.Register; here the
// registrations are data, not constructors, because the forward is one
// block parameterized by these features.
package arch

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Rope is how an architecture pairs the rotated values of a head, as
// llama.cpp's llama_model_rope_type.
type Rope uint8

const (
	// RopeNorm rotates adjacent pairs (x[2i], x[2i+1]).
	RopeNorm Rope = iota
	// RopeNeox rotates pairs half a rotation apart (x[i], x[i+dims/2]).
	RopeNeox
)

// Block is the family of transformer block an architecture uses beyond the
// shared llama block (pre-RMSNorm, grouped-query attention, SwiGLU).
type Block uint8

const (
	// BlockLlama is the llama block; Q/K/V biases load when present
	// (qwen2).
	BlockLlama Block = iota
	// BlockPhi3 is Phi-3's: fused attn_qkv (or separate attn_q/k/v), the
	// fused gate-up ffn_up, LongRoPE's rope_factors_long/short, the query
	// scaled before attention, partial rotary (rope.dimension_count below
	// key_length), attention.sliding_window read but not applied, and no
	// attn_output or FFN biases.
	BlockPhi3
	// BlockGemma3 is Gemma 3's: the embedding scaled by sqrt(n_embd), the
	// query scaled before attention, a GELU-gated FFN, post-attention and
	// post-FFN norms, interleaved sliding-window and global layers with
	// their own RoPE, an optional logit softcap, and no attn_output or FFN
	// biases.
	BlockGemma3
)

// Sliding is what an architecture does with attention.sliding_window.
type Sliding uint8

const (
	// SlidingNone: the key is not read.
	SlidingNone Sliding = iota
	// SlidingIgnored: the key is read and reported but every layer attends
	// to the whole context, as llama.cpp (phi3).
	SlidingIgnored
	// SlidingLayers: the layers attention.sliding_window_pattern marks
	// attend to the last sliding_window positions (gemma3).
	SlidingLayers
)

// Size70B is how llama.cpp's quantization rules recognize a 70B-class
// model of an architecture (LLM_TYPE_70B: attn_v takes Q5_K instead of
// Q3_K/Q4_K).
type Size70B uint8

const (
	// Never: the architecture has no 70B type in llama.cpp's rules.
	Never Size70B = iota
	// At80Layers: any 80-layer file (qwen2).
	At80Layers
	// At80LayersGQA: an 80-layer file with fewer KV heads than heads
	// (llama: Llama 2 70B; the 65B has as many).
	At80LayersGQA
)

// Quant is what llama.cpp's quantization type rules ask of an
// architecture. A registered architecture has type rules in package
// quantize; MoE (expert_count required, 8 experts move attn_k, attn_v and
// attn_output up) comes from Arch.MoE.
type Quant struct {
	Size70B Size70B
}

// Arch is one architecture's registration.
type Arch struct {
	// Name is general.architecture, the prefix of its {arch}.* keys.
	Name string
	// Family names the models in prose ("Phi-3"), for messages.
	Family string
	// Models lists the model families whose GGUF files carry Name, for the
	// README's table ("Phi-3, Phi-3.5, Phi-4-mini").
	Models string
	// Rope is the RoPE pairing, fixed by the architecture.
	Rope Rope
	// Block is the transformer block's family.
	Block Block
	// QKNorm: per-head RMSNorm of Q and K before RoPE
	// (blk.N.attn_q_norm/attn_k_norm, required).
	QKNorm bool
	// MoE: routed expert FFNs (ffn_gate_inp, ffn_{gate,up,down}_exps);
	// expert_count and expert_used_count required.
	MoE bool
	// Sliding is what attention.sliding_window does.
	Sliding Sliding
	// Quant is its quantization rules.
	Quant Quant
	// GPU reports whether the GPU forward (package cuda) computes the
	// architecture; the CPU forward computes every registered one.
	GPU bool
	// Vocab is the llama.cpp vocab-only GGUF (in the reference's vocab
	// folder) whose tokenizer its fixture presets carry; "" for the
	// LLaMA SentencePiece vocabulary embedded in package fixture.
	Vocab string
	// Presets are its fixture presets; Register sets each one's Arch. A
	// preset's name for fixture.Preset is its Name without "fixture-".
	Presets []Fixture
}

// Features describes a's block in words, for the README's table: the
// block family, then what its flags add.
func (a Arch) Features() []string {
	var out []string
	switch a.Block {
	case BlockLlama:
		out = append(out, "llama block (Q/K/V biases when present)")
	case BlockPhi3:
		out = append(out, "Phi-3 block: fused attn_qkv and gate-up ffn_up, LongRoPE, partial rotary, query scaled before attention")
	case BlockGemma3:
		out = append(out, "Gemma 3 block: embeddings scaled by sqrt(n_embd), GELU-gated FFN, post-attention and post-FFN norms, query scaled before attention, logit softcap")
	}
	if a.QKNorm {
		out = append(out, "per-head Q/K RMSNorm")
	}
	if a.MoE {
		out = append(out, "mixture of experts")
	}
	switch a.Sliding {
	case SlidingIgnored:
		out = append(out, "sliding_window read, not applied")
	case SlidingLayers:
		out = append(out, "sliding-window and global layers")
	}
	return out
}

// ErrRegistration is wrapped by the panic of a malformed registration (a
// programming error caught when the package initializes).
var ErrRegistration = errors.New("arch: bad registration")

var (
	mu       sync.RWMutex
	registry = map[string]Arch{}
)

// Register adds a; each architecture's file calls it from init. It panics
// (wrapping ErrRegistration) on an empty or repeated name or a preset that
// does not validate, so a malformed registration fails every test.
func Register(a Arch) {
	if a.Name == "" || a.Family == "" || a.Models == "" {
		panic(fmt.Errorf("%w: name %q, family %q, models %q", ErrRegistration, a.Name, a.Family, a.Models))
	}
	a.Presets = slices.Clone(a.Presets)
	for i := range a.Presets {
		p := &a.Presets[i]
		if p.Arch != "" && p.Arch != a.Name {
			panic(fmt.Errorf("%w: %s preset %q has arch %q", ErrRegistration, a.Name, p.Name, p.Arch))
		}
		p.Arch = a.Name
		if !strings.HasPrefix(p.Name, presetPrefix) {
			panic(fmt.Errorf("%w: %s preset %q: want a name starting %q", ErrRegistration, a.Name, p.Name, presetPrefix))
		}
		if err := p.validate(a); err != nil {
			panic(fmt.Errorf("%w: %s preset %q: %v", ErrRegistration, a.Name, p.Name, err))
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if _, dup := registry[a.Name]; dup {
		panic(fmt.Errorf("%w: %q registered twice", ErrRegistration, a.Name))
	}
	registry[a.Name] = a
}

// Lookup returns the registration of general.architecture name.
func Lookup(name string) (Arch, bool) {
	mu.RLock()
	defer mu.RUnlock()
	a, ok := registry[name]
	return a, ok
}

// Names lists the registered architectures, sorted.
func Names() []string {
	mu.RLock()
	defer mu.RUnlock()
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// List is Names joined for prose: "a, b and c" (or with conj for "and").
func List(names []string, conj string) string {
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " " + conj + " " + names[len(names)-1]
}

// Where lists the registered architectures for which keep is true,
// sorted.
func Where(keep func(Arch) bool) []string {
	var out []string
	for _, n := range Names() {
		if a, _ := Lookup(n); keep(a) {
			out = append(out, n)
		}
	}
	return out
}

// presetPrefix starts every preset's general.name; the rest is its preset
// name.
const presetPrefix = "fixture-"

// PresetName is the name fixture.Preset takes for p: its Name without
// "fixture-".
func (p Fixture) PresetName() string { return strings.TrimPrefix(p.Name, presetPrefix) }

// Presets returns every registered preset by its preset name.
func Presets() map[string]Fixture {
	out := map[string]Fixture{}
	for _, n := range Names() {
		a, _ := Lookup(n)
		for _, p := range a.Presets {
			out[p.PresetName()] = p
		}
	}
	return out
}
