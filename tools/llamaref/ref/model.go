package ref

import (
	"errors"
	"fmt"
	"os"

	"github.com/hybridgroup/yzma/pkg/llama"
)

// ErrModel reports that llama.cpp could not load a model file.
var ErrModel = errors.New("llama.cpp cannot load the model")

// ErrBadToken reports a token id outside [0, n_vocab).
var ErrBadToken = errors.New("token id out of range")

// Model is a GGUF model loaded by llama.cpp on the CPU (memory-mapped).
// Close releases it. A Model may be shared by several [Context]s.
type Model struct {
	lib    *Lib
	path   string
	model  llama.Model
	vocab  llama.Vocab
	nVocab int
}

// LoadModel loads the GGUF file at path. Errors: a missing file (an
// *fs.PathError), or [ErrModel] naming the path.
func (l *Lib) LoadModel(path string) (*Model, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, err
	}
	p := llama.ModelDefaultParams()
	p.SetCPUOnly()
	m, err := llama.ModelLoadFromFile(path, p)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrModel, path, err)
	}
	v := llama.ModelGetVocab(m)
	return &Model{lib: l, path: path, model: m, vocab: v, nVocab: int(llama.VocabNTokens(v))}, nil
}

// LoadVocab loads only the vocabulary of the GGUF file at path (for
// llama.cpp's ggml-vocab-*.gguf files, which hold no weights). The result
// tokenizes but cannot make a [Context].
func (l *Lib) LoadVocab(path string) (*Model, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, err
	}
	p := llama.ModelDefaultParams()
	p.SetCPUOnly()
	p.VocabOnly = 1
	m, err := llama.ModelLoadFromFile(path, p)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrModel, path, err)
	}
	v := llama.ModelGetVocab(m)
	return &Model{lib: l, path: path, model: m, vocab: v, nVocab: int(llama.VocabNTokens(v))}, nil
}

// Close frees the model. The Model must not be used afterwards.
func (m *Model) Close() error {
	if m.model == 0 {
		return nil
	}
	err := llama.ModelFree(m.model)
	m.model, m.vocab = 0, 0
	return err
}

// Path is the file the model was loaded from.
func (m *Model) Path() string { return m.path }

// NVocab is the vocabulary size; valid ids are 0 <= id < NVocab().
func (m *Model) NVocab() int { return m.nVocab }

// Desc is llama.cpp's one-line description ("llama ?B all F32 ...").
func (m *Model) Desc() string { return llama.ModelDesc(m.model) }

// BOS is the beginning-of-sequence id, -1 when the vocabulary has none.
func (m *Model) BOS() int32 { return int32(llama.VocabBOS(m.vocab)) }

// IsEOG reports whether id ends generation in llama.cpp's judgement
// (llama_vocab_is_eog: eos, eot, <|im_end|> ...).
func (m *Model) IsEOG(id int32) bool { return llama.VocabIsEOG(m.vocab, llama.Token(id)) }

// Tokenize encodes text as llama_tokenize does. addSpecial adds BOS/EOS as
// the file asks; parseSpecial turns special-token text (e.g. "<|im_start|>")
// into their ids instead of encoding it as plain text.
func (m *Model) Tokenize(text string, addSpecial, parseSpecial bool) ([]int32, error) {
	toks := llama.Tokenize(m.vocab, text, addSpecial, parseSpecial)
	if toks == nil && text != "" {
		return nil, fmt.Errorf("llama_tokenize failed on %d bytes of text", len(text))
	}
	out := make([]int32, len(toks))
	for i, t := range toks {
		out[i] = int32(t)
	}
	return out, nil
}

// Detokenize decodes ids to text as llama_detokenize does. removeSpecial
// drops a leading BOS / trailing EOS the file adds; unparseSpecial renders
// control tokens as their text instead of dropping them.
func (m *Model) Detokenize(ids []int32, removeSpecial, unparseSpecial bool) (string, error) {
	toks, err := m.tokens(ids)
	if err != nil {
		return "", err
	}
	return llama.Detokenize(m.vocab, toks, removeSpecial, unparseSpecial), nil
}

// Piece returns the bytes of one token as llama_token_to_piece gives them
// (possibly a partial UTF-8 sequence). special renders control tokens as
// their text; otherwise they are empty.
func (m *Model) Piece(id int32, special bool) ([]byte, error) {
	if id < 0 || int(id) >= m.nVocab {
		return nil, fmt.Errorf("%w: %d (n_vocab %d)", ErrBadToken, id, m.nVocab)
	}
	buf := make([]byte, 64)
	for {
		n := llama.TokenToPiece(m.vocab, llama.Token(id), buf, 0, special)
		if n >= 0 {
			return buf[:n], nil
		}
		buf = make([]byte, -n)
	}
}

// tokens converts ids, checking each is in range.
func (m *Model) tokens(ids []int32) ([]llama.Token, error) {
	toks := make([]llama.Token, len(ids))
	for i, id := range ids {
		if id < 0 || int(id) >= m.nVocab {
			return nil, fmt.Errorf("%w: %d at index %d (n_vocab %d)", ErrBadToken, id, i, m.nVocab)
		}
		toks[i] = llama.Token(id)
	}
	return toks, nil
}
