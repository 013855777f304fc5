package tokenizer

import (
	"errors"
	"fmt"
)

// Absent marks a special-token id the GGUF file does not set.
const Absent int32 = -1

// TokenType is a token's tokenizer.ggml.token_type value.
type TokenType int32

// Token types as GGUF stores them.
const (
	TypeUndefined   TokenType = 0
	TypeNormal      TokenType = 1
	TypeUnknown     TokenType = 2
	TypeControl     TokenType = 3
	TypeUserDefined TokenType = 4
	TypeUnused      TokenType = 5
	TypeByte        TokenType = 6
)

// Sentinel errors; New wraps them with the offending field.
var (
	// ErrUnsupported: the model or pre-tokenizer is not one this package
	// implements.
	ErrUnsupported = errors.New("tokenizer: unsupported")
	// ErrInvalidSpec: the metadata is inconsistent (lengths differ, no tokens).
	ErrInvalidSpec = errors.New("tokenizer: invalid spec")
)

// Spec is the tokenizer metadata of a GGUF file, as plain values. Each field
// names the GGUF key it comes from; FromGGUF fills it.
//
// The special ids are token ids, or Absent when the file lacks the key (the
// zero value 0 is a real id). AddBOS, AddEOS and AddSpacePrefix are nil
// when the file lacks the key. New applies llama.cpp's defaults to what is
// absent.
type Spec struct {
	Model  string    // tokenizer.ggml.model: "llama" (SentencePiece) or "gpt2" (byte-level BPE)
	Pre    string    // tokenizer.ggml.pre; "" for none
	Tokens []string  // tokenizer.ggml.tokens, [n_vocab]
	Scores []float32 // tokenizer.ggml.scores, [n_vocab] or nil (all 0)
	Types  []int32   // tokenizer.ggml.token_type, [n_vocab] or nil (all normal)
	Merges []string  // tokenizer.ggml.merges, "left right" in rank order (gpt2 only)

	BOS int32 // tokenizer.ggml.bos_token_id
	EOS int32 // tokenizer.ggml.eos_token_id
	EOT int32 // tokenizer.ggml.eot_token_id
	EOM int32 // tokenizer.ggml.eom_token_id
	UNK int32 // tokenizer.ggml.unknown_token_id
	PAD int32 // tokenizer.ggml.padding_token_id

	FIMPre int32 // tokenizer.ggml.fim_pre_token_id
	FIMSuf int32 // tokenizer.ggml.fim_suf_token_id
	FIMMid int32 // tokenizer.ggml.fim_mid_token_id
	FIMPad int32 // tokenizer.ggml.fim_pad_token_id
	FIMRep int32 // tokenizer.ggml.fim_rep_token_id
	FIMSep int32 // tokenizer.ggml.fim_sep_token_id

	AddBOS         *bool // tokenizer.ggml.add_bos_token
	AddEOS         *bool // tokenizer.ggml.add_eos_token
	AddSpacePrefix *bool // tokenizer.ggml.add_space_prefix

	ChatTemplate string // tokenizer.chat_template; "" for none

	// Name is general.name. llama.cpp keys a few per-model token attributes
	// on it (phi-3: special tokens swallow the whitespace after them).
	Name string
}

// NewSpec returns a Spec for model and tokens with every special id Absent
// and every flag unset; set the fields the file has.
func NewSpec(model string, tokens []string) Spec {
	return Spec{
		Model: model, Tokens: tokens,
		BOS: Absent, EOS: Absent, EOT: Absent, EOM: Absent, UNK: Absent, PAD: Absent,
		FIMPre: Absent, FIMSuf: Absent, FIMMid: Absent, FIMPad: Absent, FIMRep: Absent, FIMSep: Absent,
	}
}

// validate checks the lengths that New relies on.
func (s *Spec) validate() error {
	n := len(s.Tokens)
	if n == 0 {
		return fmt.Errorf("%w: tokenizer.ggml.tokens is empty", ErrInvalidSpec)
	}
	if s.Scores != nil && len(s.Scores) < n {
		return fmt.Errorf("%w: tokenizer.ggml.scores has %d entries for %d tokens", ErrInvalidSpec, len(s.Scores), n)
	}
	if s.Types != nil && len(s.Types) < n {
		return fmt.Errorf("%w: tokenizer.ggml.token_type has %d entries for %d tokens", ErrInvalidSpec, len(s.Types), n)
	}
	return nil
}
