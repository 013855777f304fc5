package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/realizar-host/realizar-host/gguf"
	"github.com/realizar-host/realizar-host/internal/arch"
	"github.com/realizar-host/realizar-host/model"
	"github.com/realizar-host/realizar-host/tokenizer"
	"github.com/spf13/cobra"
)

func newInspectCmd() *cobra.Command {
	var asJSON bool
	var tokens, flagPath string
	cmd := &cobra.Command{
		Use:   "inspect [MODEL.gguf | --model M.gguf] [--tokens TEXT] [--json]",
		Short: "Print a model's architecture, hyperparameters, tokenizer and tensor types",
		Long: "Print a model's architecture, hyperparameters, tokenizer and tensor types; with --tokens,\n" +
			"the token ids and pieces of TEXT as run would feed them to the model (BOS added, control\n" +
			"tokens in the text matched).",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := flagPath
			if len(args) == 1 {
				if path != "" {
					return usage(errors.New("give the model as an argument or as --model, not both"))
				}
				path = args[0]
			}
			path, err := modelPath(path)
			if err != nil {
				return err
			}
			if cmd.Flags().Changed("tokens") {
				return inspectTokens(cmd, path, tokens, asJSON)
			}
			rep, err := inspect(path)
			if err != nil {
				return badFile(err)
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				err = enc.Encode(rep)
			} else {
				err = rep.writeText(cmd.OutOrStdout())
			}
			if err != nil {
				return failure(err)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	cmd.Flags().StringVar(&tokens, "tokens", "", "print the tokens of TEXT instead of the report")
	cmd.Flags().StringVarP(&flagPath, "model", "m", "", "GGUF model file, instead of the argument (default: $"+envModel+")")
	return cmd
}

// tokenJSON is one token of inspect --tokens.
type tokenJSON struct {
	ID    int32  `json:"id"`
	Piece string `json:"piece"`
}

// inspectTokens prints the tokens of text under the model's tokenizer: one
// "id<TAB>quoted piece" line each, or {"tokens": [...]} with asJSON.
func inspectTokens(cmd *cobra.Command, path, text string, asJSON bool) error {
	if err := notDir(path); err != nil {
		return err
	}
	tok, err := tokenizer.Open(path)
	if err != nil {
		return badFile(err)
	}
	ids := encodePrompt(tok, text)
	list := make([]tokenJSON, len(ids))
	for i, id := range ids {
		list[i] = tokenJSON{ID: id, Piece: string(tok.Piece(id))}
	}
	if asJSON {
		return encodeJSON(cmd, map[string][]tokenJSON{"tokens": list})
	}
	w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', tabwriter.AlignRight)
	for _, t := range list {
		fmt.Fprintf(w, "%d\t %q\n", t.ID, t.Piece)
	}
	if err := w.Flush(); err != nil {
		return failure(err)
	}
	return nil
}

// report is what inspect prints. Hyperparameters absent from the file are
// omitted.
type report struct {
	Path            string          `json:"path"`
	FileSize        int64           `json:"file_size"`
	Shards          int             `json:"shards"`
	Version         uint32          `json:"version"`
	Architecture    string          `json:"architecture"`
	Name            string          `json:"name,omitempty"`
	Hyperparameters hyperparameters `json:"hyperparameters"`
	Tokenizer       tokenizerInfo   `json:"tokenizer"`
	TensorCount     int             `json:"tensor_count"`
	TensorBytes     int64           `json:"tensor_bytes"`
	Types           []typeCount     `json:"types"`
}

type hyperparameters struct {
	ContextLength     *uint32  `json:"context_length,omitempty"`
	EmbeddingLength   *uint32  `json:"embedding_length,omitempty"`
	BlockCount        *uint32  `json:"block_count,omitempty"`
	FeedForwardLength *uint32  `json:"feed_forward_length,omitempty"`
	HeadCount         *uint32  `json:"head_count,omitempty"`
	HeadCountKV       *uint32  `json:"head_count_kv,omitempty"`
	KeyLength         *uint32  `json:"key_length,omitempty"`                 // head_dim when not embedding_length/head_count (qwen3)
	ExpertCount       *uint32  `json:"expert_count,omitempty"`               // mixture of experts (qwen3moe)
	ExpertUsedCount   *uint32  `json:"expert_used_count,omitempty"`          // experts routed per token
	ExpertFFNLength   *uint32  `json:"expert_feed_forward_length,omitempty"` // one expert's hidden width
	RopeFreqBase      *float32 `json:"rope_freq_base,omitempty"`
	// RopeFreqBaseDefault: the file has no rope.freq_base key, and
	// RopeFreqBase is the default the forward applies, as llama.cpp does.
	RopeFreqBaseDefault bool     `json:"rope_freq_base_default,omitempty"`
	RopeScalingType     *string  `json:"rope_scaling_type,omitempty"`   // "linear", "yarn" (only when the file sets it)
	RopeScalingFactor   *float32 `json:"rope_scaling_factor,omitempty"` // context extension factor
	RopeOrigContext     *uint32  `json:"rope_original_context_length,omitempty"`
	RopeAttnFactor      *float32 `json:"rope_attn_factor,omitempty"`     // multiplies RoPE's cos and sin (Phi-3's long-context files)
	RopeDimensions      *uint32  `json:"rope_dimension_count,omitempty"` // only when fewer than head_dim rotate (partial rotary: phi3)
	RopeFactors         []string `json:"rope_factors,omitempty"`         // rope_freqs / LongRoPE's rope_factors_long and _short tensors present
	FusedQKV            bool     `json:"fused_qkv,omitempty"`            // blk.0.attn_qkv.weight: Q, K and V in one matrix (phi3)
	SlidingWindow       *uint32  `json:"sliding_window,omitempty"`       // as the file says; phi3's is not applied (nor by llama.cpp)
	// gemma3: the pattern as the file writes it (a count or one bool per
	// layer), the layers that slide as the model runs them, their RoPE
	// base, the logit softcap, and the block's fixed features.
	SlidingWindowPattern any      `json:"sliding_window_pattern,omitempty"`
	SlidingLayers        []int    `json:"sliding_layers,omitempty"`
	RopeFreqBaseSWA      *float32 `json:"rope_freq_base_swa,omitempty"` // the file's, or llama.cpp's 10000 when a window is set
	LogitSoftcap         *float32 `json:"final_logit_softcapping,omitempty"`
	Features             []string `json:"features,omitempty"`
	RMSEpsilon           *float32 `json:"rms_epsilon,omitempty"`
	VocabSize            *uint32  `json:"vocab_size,omitempty"`
}

type tokenizerInfo struct {
	Model  string `json:"model,omitempty"`
	Tokens int    `json:"tokens"`
}

// typeCount is one row of the tensor type histogram.
type typeCount struct {
	Type    string `json:"type"`
	Tensors int    `json:"tensors"`
	Bytes   int64  `json:"bytes"`
}

// inspect opens the model at path and builds its report.
func inspect(path string) (*report, error) {
	f, err := openGGUF(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rep := &report{Path: path, FileSize: f.Size(), Shards: f.Shards(), Version: f.Version}
	if rep.Architecture, err = f.String(gguf.KeyArchitecture); err != nil {
		return nil, err
	}
	if rep.Name, err = optional(f.String(gguf.KeyName)); err != nil {
		return nil, err
	}
	name := rep.Architecture
	hp := &rep.Hyperparameters
	for _, u := range []struct {
		suffix string
		dst    **uint32
	}{
		{gguf.SuffixContextLength, &hp.ContextLength},
		{gguf.SuffixEmbeddingLength, &hp.EmbeddingLength},
		{gguf.SuffixBlockCount, &hp.BlockCount},
		{gguf.SuffixFeedForwardLength, &hp.FeedForwardLength},
		{gguf.SuffixHeadCount, &hp.HeadCount},
		{gguf.SuffixHeadCountKV, &hp.HeadCountKV},
		{gguf.SuffixKeyLength, &hp.KeyLength},
		{gguf.SuffixExpertCount, &hp.ExpertCount},
		{gguf.SuffixExpertUsedCount, &hp.ExpertUsedCount},
		{gguf.SuffixExpertFeedForward, &hp.ExpertFFNLength},
		{gguf.SuffixVocabSize, &hp.VocabSize},
	} {
		if *u.dst, err = optionalPtr(f.Uint32(gguf.ArchKey(name, u.suffix))); err != nil {
			return nil, err
		}
	}
	if hp.RopeFreqBase, err = optionalPtr(f.Float32(gguf.ArchKey(name, gguf.SuffixRopeFreqBase))); err != nil {
		return nil, err
	}
	if hp.RopeFreqBase == nil {
		// Absent, the base the forward uses (llama.cpp's default), said to be a default.
		if c, err := model.ReadConfig(f); err == nil {
			base := c.RopeBase
			hp.RopeFreqBase, hp.RopeFreqBaseDefault = &base, true
		}
	}
	if hp.RMSEpsilon, err = optionalPtr(f.Float32(gguf.ArchKey(name, gguf.SuffixRMSEpsilon))); err != nil {
		return nil, err
	}
	if hp.RopeScalingType, err = optionalPtr(f.String(gguf.ArchKey(name, gguf.SuffixRopeScalingType))); err != nil {
		return nil, err
	}
	if hp.RopeScalingFactor, err = optionalPtr(f.Float32(gguf.ArchKey(name, gguf.SuffixRopeScalingFactor))); err != nil {
		return nil, err
	}
	if hp.RopeOrigContext, err = optionalPtr(f.Uint32(gguf.ArchKey(name, gguf.SuffixRopeScalingOrigCtx))); err != nil {
		return nil, err
	}
	if hp.RopeAttnFactor, err = optionalPtr(f.Float32(gguf.ArchKey(name, gguf.SuffixRopeScalingAttnFactor))); err != nil {
		return nil, err
	}
	if hp.SlidingWindow, err = optionalPtr(f.Uint32(gguf.ArchKey(name, gguf.SuffixSlidingWindow))); err != nil {
		return nil, err
	}
	rd, err := optionalPtr(f.Uint32(gguf.ArchKey(name, gguf.SuffixRopeDimension)))
	if err != nil {
		return nil, err
	}
	if rd != nil && hp.EmbeddingLength != nil && hp.HeadCount != nil && *hp.HeadCount != 0 {
		headDim := *hp.EmbeddingLength / *hp.HeadCount
		if hp.KeyLength != nil {
			headDim = *hp.KeyLength
		}
		if *rd != headDim {
			hp.RopeDimensions = rd
		}
	}
	for _, name := range []string{"rope_freqs.weight", "rope_factors_long.weight", "rope_factors_short.weight"} {
		if _, ok := f.Tensor(name); ok {
			hp.RopeFactors = append(hp.RopeFactors, name)
		}
	}
	_, hp.FusedQKV = f.Tensor("blk.0.attn_qkv.weight")
	if a, _ := arch.Lookup(name); a.Sliding == arch.SlidingLayers {
		if err := hp.slidingLayers(f, name); err != nil {
			return nil, err
		}
	}
	if rep.Tokenizer.Model, err = optional(f.String(gguf.KeyTokenizerModel)); err != nil {
		return nil, err
	}
	tokens, err := optional(f.Strings(gguf.KeyTokens))
	if err != nil {
		return nil, err
	}
	rep.Tokenizer.Tokens = len(tokens)
	if hp.VocabSize == nil && len(tokens) > 0 {
		n := uint32(len(tokens))
		hp.VocabSize = &n
	}

	rep.TensorCount = len(f.Tensors)
	byType := map[gguf.TensorType]*typeCount{}
	for _, t := range f.Tensors {
		c := byType[t.Type]
		if c == nil {
			c = &typeCount{Type: t.Type.String()}
			byType[t.Type] = c
		}
		c.Tensors++
		c.Bytes += t.Size
		rep.TensorBytes += t.Size
	}
	for _, c := range byType {
		rep.Types = append(rep.Types, *c)
	}
	slices.SortFunc(rep.Types, func(a, b typeCount) int { return cmp.Compare(a.Type, b.Type) })
	return rep, nil
}

// slidingLayers fills the rows of an architecture with sliding-window
// layers (arch.SlidingLayers: gemma3): the pattern as written, and from
// the config the model would run (when it decodes; a bad one leaves them
// out, as run reports it) the sliding layers, their RoPE base and the
// fixed features.
func (hp *hyperparameters) slidingLayers(f *gguf.File, name string) error {
	hp.SlidingWindowPattern, _ = f.Lookup(gguf.ArchKey(name, gguf.SuffixSlidingWindowPattern))
	if a, ok := hp.SlidingWindowPattern.(gguf.Array); ok {
		hp.SlidingWindowPattern = a.Values
	}
	var err error
	if hp.LogitSoftcap, err = optionalPtr(f.Float32(gguf.ArchKey(name, gguf.SuffixFinalLogitSoftcap))); err != nil {
		return err
	}
	c, err := model.ReadConfig(f)
	if err != nil {
		return nil
	}
	for l := range c.Layers {
		if c.Sliding(l) {
			hp.SlidingLayers = append(hp.SlidingLayers, l)
		}
	}
	if c.SlidingLayers != nil {
		base := c.RopeBaseSWA
		hp.RopeFreqBaseSWA = &base
	}
	hp.Features = []string{"embeddings scaled by sqrt(n_embd)", "per-head Q/K norms",
		fmt.Sprintf("query scaled by %g", c.QueryScale), "GELU-gated FFN", "post-attention and post-FFN norms"}
	return nil
}

// ignoresSliding reports whether the registered architecture name reads
// attention.sliding_window without applying it (arch.SlidingIgnored: phi3).
func ignoresSliding(name string) bool {
	a, ok := arch.Lookup(name)
	return ok && a.Sliding == arch.SlidingIgnored
}

// layerRanges writes sorted layer indices as ranges: "0-4, 6-10, 12".
func layerRanges(layers []int) string {
	var parts []string
	for i := 0; i < len(layers); {
		j := i
		for j+1 < len(layers) && layers[j+1] == layers[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, fmt.Sprint(layers[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", layers[i], layers[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

// writeRopeExtras prints the RoPE rows a file has only when it sets them:
// partial rotary, attn_factor and the factor tensors.
func (hp *hyperparameters) writeRopeExtras(w io.Writer) {
	if hp.RopeDimensions != nil {
		fmt.Fprintf(w, "rope_dimension_count:\t%d (partial rotary)\n", *hp.RopeDimensions)
	}
	if hp.RopeAttnFactor != nil {
		fmt.Fprintf(w, "rope_attn_factor:\t%g\n", *hp.RopeAttnFactor)
	}
	if len(hp.RopeFactors) > 0 {
		fmt.Fprintf(w, "rope_factors:\t%s", strings.Join(hp.RopeFactors, ", "))
		if slices.Contains(hp.RopeFactors, "rope_factors_long.weight") {
			fmt.Fprintf(w, " (LongRoPE: the long factors when the context exceeds ")
			if hp.RopeOrigContext != nil {
				fmt.Fprintf(w, "%d)", *hp.RopeOrigContext)
			} else {
				fmt.Fprintf(w, "context_length)")
			}
		}
		fmt.Fprintln(w)
	}
}

// optional turns a missing key into the zero value.
func optional[T any](v T, err error) (T, error) {
	if errors.Is(err, gguf.ErrKeyNotFound) {
		return v, nil
	}
	return v, err
}

// optionalPtr turns a missing key into nil.
func optionalPtr[T any](v T, err error) (*T, error) {
	if errors.Is(err, gguf.ErrKeyNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &v, nil
}

func (r *report) writeText(out io.Writer) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "file:\t%s\n", r.Path)
	fmt.Fprintf(w, "size:\t%d bytes (GGUF v%d, %d shard(s))\n", r.FileSize, r.Version, r.Shards)
	fmt.Fprintf(w, "architecture:\t%s\n", r.Architecture)
	if r.Name != "" {
		fmt.Fprintf(w, "name:\t%s\n", r.Name)
	}
	hp := r.Hyperparameters
	for _, row := range []struct {
		name string
		v    any
	}{
		{"context_length", hp.ContextLength},
		{"embedding_length", hp.EmbeddingLength},
		{"block_count", hp.BlockCount},
		{"feed_forward_length", hp.FeedForwardLength},
		{"head_count", hp.HeadCount},
		{"head_count_kv", hp.HeadCountKV},
		{"rope_freq_base", hp.RopeFreqBase},
		{"rms_epsilon", hp.RMSEpsilon},
		{"vocab_size", hp.VocabSize},
	} {
		fmt.Fprintf(w, "%s:\t%s", row.name, deref(row.v))
		if row.name == "rope_freq_base" && hp.RopeFreqBaseDefault {
			fmt.Fprintf(w, " (default: the file has no %s.rope.freq_base; llama.cpp's default applies)", r.Architecture)
		}
		fmt.Fprintln(w)
		if row.name == "rope_freq_base" && hp.RopeScalingType != nil {
			// Only when the file scales RoPE.
			fmt.Fprintf(w, "rope_scaling:\t%s, factor %s", *hp.RopeScalingType, deref(hp.RopeScalingFactor))
			if hp.RopeOrigContext != nil {
				fmt.Fprintf(w, ", original context %d", *hp.RopeOrigContext)
			}
			if len(hp.SlidingLayers) > 0 {
				fmt.Fprintf(w, " (global layers only)")
			}
			fmt.Fprintln(w)
		}
		if row.name == "rope_freq_base" {
			hp.writeRopeExtras(w)
		}
		if row.name == "head_count_kv" && hp.FusedQKV {
			fmt.Fprintf(w, "attention:\tfused attn_qkv\n")
		}
		if row.name == "head_count_kv" && hp.SlidingWindow != nil {
			fmt.Fprintf(w, "sliding_window:\t%d", *hp.SlidingWindow)
			switch {
			case ignoresSliding(r.Architecture):
				a, _ := arch.Lookup(r.Architecture)
				fmt.Fprintf(w, " (not applied: llama.cpp disables %s's)", a.Family)
			case len(hp.SlidingLayers) > 0 && hp.BlockCount != nil:
				fmt.Fprintf(w, " (sliding layers %s of %d; the others global)", layerRanges(hp.SlidingLayers), *hp.BlockCount)
			}
			fmt.Fprintln(w)
		}
		if row.name == "head_count_kv" && hp.SlidingWindowPattern != nil {
			fmt.Fprintf(w, "sliding_window_pattern:\t%v\n", hp.SlidingWindowPattern)
		}
		if row.name == "rope_freq_base" && hp.RopeFreqBaseSWA != nil {
			fmt.Fprintf(w, "rope_freq_base_swa:\t%g (sliding layers, unscaled)\n", *hp.RopeFreqBaseSWA)
		}
		if row.name == "vocab_size" && hp.LogitSoftcap != nil {
			fmt.Fprintf(w, "final_logit_softcapping:\t%g\n", *hp.LogitSoftcap)
		}
		if row.name == "vocab_size" && len(hp.Features) > 0 {
			fmt.Fprintf(w, "features:\t%s\n", strings.Join(hp.Features, "; "))
		}
		if row.name == "head_count_kv" && hp.KeyLength != nil {
			fmt.Fprintf(w, "key_length:\t%d\n", *hp.KeyLength) // only when the file sets it
		}
		if row.name == "feed_forward_length" && hp.ExpertCount != nil {
			// Only for a mixture of experts.
			fmt.Fprintf(w, "expert_count:\t%s\n", deref(hp.ExpertCount))
			fmt.Fprintf(w, "expert_used_count:\t%s\n", deref(hp.ExpertUsedCount))
			fmt.Fprintf(w, "expert_feed_forward_length:\t%s\n", deref(hp.ExpertFFNLength))
		}
	}
	model := r.Tokenizer.Model
	if model == "" {
		model = "-"
	}
	fmt.Fprintf(w, "tokenizer:\t%s (%d tokens)\n", model, r.Tokenizer.Tokens)
	fmt.Fprintf(w, "tensors:\t%d (%d bytes)\n", r.TensorCount, r.TensorBytes)
	for _, c := range r.Types {
		fmt.Fprintf(w, "  %s\t%d tensors\t%d bytes\n", c.Type, c.Tensors, c.Bytes)
	}
	return w.Flush()
}

// deref formats a *uint32 or *float32, "-" when nil.
func deref(v any) string {
	switch p := v.(type) {
	case *uint32:
		if p != nil {
			return fmt.Sprint(*p)
		}
	case *float32:
		if p != nil {
			return fmt.Sprint(*p)
		}
	}
	return "-"
}
