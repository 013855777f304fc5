package quantize

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/realizar-host/realizar-host/gguf"
	"github.com/realizar-host/realizar-host/internal/arch"
)

// TensorPlan is the decision for one tensor of the source.
type TensorPlan struct {
	// Name is the tensor's name.
	Name string
	// Dims are its dimensions in ggml order (Dims[0] is the row length).
	Dims []int64
	// From is the source type, To the type written.
	From, To gguf.TensorType
	// Fallback is set when To replaces the type the rules chose because the
	// row length is not a multiple of that type's block (llama.cpp's
	// "falling back" warning).
	Fallback bool
}

// category is the role of a tensor in the type rules.
type category int

const (
	catOther category = iota
	catTokenEmbd
	catOutput
	catAttnV // attn_v, attn_qkv (phi3: llama.cpp's attn_v rules catch it first), attn_kv_b
	catAttnK
	catAttnOutput
	catFFNDown
)

// categoryOf classifies a tensor by name, as llama.cpp does.
func categoryOf(name string) category {
	switch {
	case name == "output.weight":
		return catOutput
	case name == "token_embd.weight" || name == "per_layer_token_embd.weight":
		return catTokenEmbd
	case strings.Contains(name, "attn_qkv.weight"), strings.Contains(name, "attn_kv_b.weight"),
		strings.Contains(name, "attn_v.weight"):
		return catAttnV
	case strings.Contains(name, "attn_k.weight"):
		return catAttnK
	case strings.Contains(name, "attn_q.weight"):
		return catOther
	case strings.Contains(name, "attn_output.weight"):
		return catAttnOutput
	case strings.Contains(name, "ffn_up"), strings.Contains(name, "ffn_gate"):
		return catOther
	case strings.Contains(name, "ffn_down"):
		return catFFNDown
	}
	return catOther
}

// keptNames are substrings of the names of weights llama.cpp never
// quantizes (small or positional tables), besides norms.
var keptNames = []string{
	"_norm.weight", "ffn_gate_inp.weight", "ffn_gate_tid2eid.weight", "altup", "laurel",
	"per_layer_model_proj", "ssm_conv1d", "shortconv.conv.weight", "indexer.k_proj.weight",
	"indexer.q_proj.weight", "attn_rel_b.weight", ".position_embd", "sam.pos_embd", "sam.neck.",
	"sam.net_", ".rel_pos", ".patch_embd", ".patch_merger", "a.rvq.codebook", "mm.a.code_embd",
	"time_mix_first.weight", "time_mix_w0.weight", "time_mix_w1.weight", "time_mix_w2.weight",
	"time_mix_v0.weight", "time_mix_v1.weight", "time_mix_v2.weight", "time_mix_a0.weight",
	"time_mix_a1.weight", "time_mix_a2.weight", "time_mix_g1.weight", "time_mix_g2.weight",
	"time_mix_decay_w1.weight", "time_mix_decay_w2.weight", "time_mix_lerp_fused.weight",
}

// nDims is ggml_n_dims: the number of dimensions up to the last one that is
// not 1 (at least 1).
func nDims(dims []int64) int {
	n := len(dims)
	for n > 1 && dims[n-1] == 1 {
		n--
	}
	return n
}

// quantizable reports whether llama.cpp may change a tensor's type.
func quantizable(name string, dims []int64) bool {
	if nDims(dims) < 2 || !strings.HasSuffix(name, "weight") {
		return false
	}
	if name == "position_embd.weight" || name == "token_types.weight" {
		return false
	}
	for _, k := range keptNames {
		if strings.Contains(name, k) {
			return false
		}
	}
	return true
}

// useMoreBits is llama.cpp's choice of the layers that get more bits: the
// first and last eighth, and every third layer in between.
func useMoreBits(i, n int) bool {
	return i < n/8 || i >= 7*n/8 || (i-n/8)%3 == 2
}

// fallback returns the type for rows of ncols values when t does not fit
// them (ncols not a multiple of its block), and whether it changed.
func fallback(t gguf.TensorType, ncols int64) (gguf.TensorType, bool) {
	if ncols%int64(t.BlockSize()) == 0 {
		return t, false
	}
	r := t
	switch t {
	case gguf.TypeQ4_K:
		r = gguf.TypeQ5_0
	case gguf.TypeQ5_K:
		r = gguf.TypeQ5_1
	case gguf.TypeQ6_K:
		r = gguf.TypeQ8_0
	}
	if ncols%int64(r.BlockSize()) != 0 {
		r = gguf.TypeF16
	}
	return r, true
}

// blockLayer returns N for a name "blk.N.…", or -1.
func blockLayer(name string) int {
	rest, ok := strings.CutPrefix(name, "blk.")
	if !ok {
		return -1
	}
	digits, _, ok := strings.Cut(rest, ".")
	if !ok {
		return -1
	}
	n, err := strconv.Atoi(digits)
	if err != nil || n < 0 {
		return -1
	}
	return n
}

// llamaOrder sorts tensors as llama.cpp's loader lists them: by block
// (tensors outside the blocks first), then by name.
func llamaOrder(ts []gguf.TensorInfo) []gguf.TensorInfo {
	out := append([]gguf.TensorInfo(nil), ts...)
	sort.SliceStable(out, func(i, j int) bool {
		li, lj := blockLayer(out[i].Name), blockLayer(out[j].Name)
		if li != lj {
			return li < lj
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// model is what the type rules read from the metadata.
type model struct {
	arch    string
	nLayer  int
	is70B   bool // llama.cpp's LLM_TYPE_70B: attn_v gets Q5_K instead of Q4_K
	tied    bool // no output.weight: token_embd.weight is the output matrix
	experts int  // expert_count (an arch.Arch.MoE architecture), else 0; 8 moves attn_k/attn_v/attn_output up
	nAttnV  int
	ordered []gguf.TensorInfo
}

func readModel(f *gguf.File, tensors []gguf.TensorInfo) (*model, error) {
	name, err := f.String(gguf.KeyArchitecture)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMetadata, err)
	}
	a, ok := arch.Lookup(name)
	if !ok {
		return nil, fmt.Errorf("%w: %q (%s have type rules here)", ErrArchitecture, name, arch.List(arch.Names(), "and"))
	}
	experts, err := f.Uint32(gguf.ArchKey(name, gguf.SuffixExpertCount))
	switch {
	case err != nil && !errors.Is(err, gguf.ErrKeyNotFound):
		return nil, fmt.Errorf("%w: %v", ErrMetadata, err)
	case !a.MoE && experts > 1:
		return nil, fmt.Errorf("%w: %s with %d experts", ErrArchitecture, name, experts)
	case a.MoE && experts == 0:
		return nil, fmt.Errorf("%w: %s = %d (%s needs experts)", ErrMetadata, gguf.ArchKey(name, gguf.SuffixExpertCount), experts, name)
	}
	nLayer, err := f.Uint32(gguf.ArchKey(name, gguf.SuffixBlockCount))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMetadata, err)
	}
	m := &model{arch: name, nLayer: int(nLayer), tied: true, experts: int(experts), ordered: llamaOrder(tensors)}
	if nLayer == 80 {
		switch a.Quant.Size70B {
		case arch.Never:
		case arch.At80Layers:
			m.is70B = true
		case arch.At80LayersGQA:
			heads, err1 := f.Uint32(gguf.ArchKey(name, gguf.SuffixHeadCount))
			kv, err2 := f.Uint32(gguf.ArchKey(name, gguf.SuffixHeadCountKV))
			if err2 != nil {
				kv, err2 = heads, nil // llama.cpp's default: as many KV heads as heads
			}
			if err1 != nil {
				return nil, fmt.Errorf("%w: %v", ErrMetadata, err1)
			}
			m.is70B = heads != kv
		}
	}
	for _, t := range m.ordered {
		switch categoryOf(t.Name) {
		case catAttnV:
			m.nAttnV++
		case catOutput:
			m.tied = false
		}
	}
	return m, nil
}

// Plan returns the type File would give every tensor of src for file type
// ft, in output order. It reads only the metadata and tensor table.
//
// Errors: ErrFileType, ErrArchitecture, ErrMetadata.
func Plan(src *gguf.File, ft FileType) ([]TensorPlan, error) {
	return plan(src, src.Tensors, ft)
}

// PlanSource is Plan for a Source: the type WriteSource would give every
// tensor of src, in output order (the order WriteSource asks src.Data for
// them).
//
// Errors: as Plan.
func PlanSource(src Source, ft FileType) ([]TensorPlan, error) {
	md, err := src.metadata()
	if err != nil {
		return nil, err
	}
	return plan(md, src.Tensors, ft)
}

func plan(md *gguf.File, tensors []gguf.TensorInfo, ft FileType) ([]TensorPlan, error) {
	if !ft.known() {
		return nil, fmt.Errorf("%w: %v", ErrFileType, ft)
	}
	m, err := readModel(md, tensors)
	if err != nil {
		return nil, err
	}
	base := fileTypes[ft].base
	var iAttnV, iFFNDown int
	plans := make([]TensorPlan, 0, len(m.ordered))
	for _, t := range m.ordered {
		p := TensorPlan{Name: t.Name, Dims: t.Dims, From: t.Type, To: t.Type}
		if quantizable(t.Name, t.Dims) {
			p.To = base
			if ft.quantized() {
				p.To = m.mixType(ft, base, t, &iAttnV, &iFFNDown)
				p.To, p.Fallback = fallback(p.To, t.Dims[0])
			}
		}
		plans = append(plans, p)
	}
	return plans, nil
}

// mixType is llama.cpp's choice for one quantizable tensor of a quantized
// file type, before the fallback for its row length. The counters of attn_v
// and ffn_down tensors seen so far advance as llama.cpp's do.
func (m *model) mixType(ft FileType, base gguf.TensorType, t gguf.TensorInfo, iAttnV, iFFNDown *int) gguf.TensorType {
	cat := categoryOf(t.Name)
	switch {
	case cat == catOutput || (m.tied && cat == catTokenEmbd):
		switch {
		case t.Dims[0]%int64(base.BlockSize()) != 0:
			return gguf.TypeQ8_0
		case base != gguf.TypeQ8_0:
			return gguf.TypeQ6_K
		}
		return base
	case cat == catTokenEmbd:
		return base
	case cat == catAttnV:
		typ := base
		switch {
		case ft == Q4_KM && useMoreBits(*iAttnV, m.nAttnV):
			typ = gguf.TypeQ6_K
		case ft == Q4_KS && *iAttnV < 4:
			typ = gguf.TypeQ5_K
		}
		if m.is70B && (typ == gguf.TypeQ3_K || typ == gguf.TypeQ4_K) {
			typ = gguf.TypeQ5_K
		}
		if m.experts == 8 {
			typ = gguf.TypeQ8_0 // llama.cpp: "for the 8-expert model, bumping this to Q8_0 trades just ~128MB"
		}
		*iAttnV++
		return typ
	case cat == catAttnK:
		if m.experts == 8 {
			return gguf.TypeQ8_0
		}
	case cat == catAttnOutput:
		if m.experts == 8 && (ft == Q4_KM || ft == Q4_KS) {
			return gguf.TypeQ5_K
		}
	case cat == catFFNDown:
		i, n := *iFFNDown, m.nLayer
		if m.experts > 1 {
			// llama.cpp reads a MoE file's layer from the name (experts
			// need not be in order); the counter still advances.
			i = blockLayer(t.Name)
		}
		*iFFNDown++
		switch {
		case ft == Q4_KM && useMoreBits(i, n):
			return gguf.TypeQ6_K
		case ft == Q4_KS && i < n/8:
			return gguf.TypeQ5_K
		}
	}
	return base
}
