package tokenizer

import (
	"errors"

	"github.com/realizar-host/realizar-host/gguf"
)

// Open builds the Tokenizer of the GGUF file at path from its metadata
// alone (tensor data is not read).
//
// Errors: those of gguf.Open, SpecFromGGUF and New.
func Open(path string) (*Tokenizer, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return FromGGUF(f)
}

// FromGGUF builds the Tokenizer described by f's tokenizer.* metadata.
//
// Errors: those of SpecFromGGUF and New.
func FromGGUF(f *gguf.File) (*Tokenizer, error) {
	spec, err := SpecFromGGUF(f)
	if err != nil {
		return nil, err
	}
	return New(spec)
}

// SpecFromGGUF reads the tokenizer metadata of f into a Spec. Keys the file
// lacks stay Absent, nil or empty.
//
// Errors: a *gguf.KeyError wrapping gguf.ErrKeyNotFound when
// tokenizer.ggml.model or tokenizer.ggml.tokens is missing, or
// gguf.ErrTypeMismatch when a key has the wrong type.
func SpecFromGGUF(f *gguf.File) (Spec, error) {
	model, err := f.String(keyModel)
	if err != nil {
		return Spec{}, err
	}
	tokens, err := f.Strings(keyTokens)
	if err != nil {
		return Spec{}, err
	}
	s := NewSpec(model, tokens)
	r := optReader{f: f}
	s.Pre = r.str(keyPre)
	s.ChatTemplate = r.str(keyChatTemplate)
	s.Name = r.str(keyName)
	s.Merges = r.strs(keyMerges)
	s.Scores = r.scores(keyScores)
	s.Types = r.int32s(keyTypes)
	for _, id := range []struct {
		dst  *int32
		keys []string
	}{
		{&s.BOS, []string{keyBOS}}, {&s.EOS, []string{keyEOS}}, {&s.EOT, []string{keyEOT}},
		{&s.EOM, []string{keyEOM}}, {&s.UNK, []string{keyUNK}}, {&s.PAD, []string{keyPAD}},
		{&s.FIMPre, []string{keyFIMPre, keyPrefixOld}}, {&s.FIMSuf, []string{keyFIMSuf, keySuffixOld}},
		{&s.FIMMid, []string{keyFIMMid, keyMiddleOld}}, {&s.FIMPad, []string{keyFIMPad}},
		{&s.FIMRep, []string{keyFIMRep}}, {&s.FIMSep, []string{keyFIMSep}},
	} {
		for _, k := range id.keys {
			if v, ok := r.id(k); ok {
				*id.dst = v
			}
		}
	}
	s.AddBOS = r.boolPtr(keyAddBOS)
	s.AddEOS = r.boolPtr(keyAddEOS)
	s.AddSpacePrefix = r.boolPtr(keyAddSpacePrefix)
	return s, r.err
}

// optReader reads optional keys: a missing key gives the zero value, the
// first other error is kept in err.
type optReader struct {
	f   *gguf.File
	err error
}

func (r *optReader) keep(err error) bool {
	if err == nil {
		return true
	}
	if !errors.Is(err, gguf.ErrKeyNotFound) && r.err == nil {
		r.err = err
	}
	return false
}

func (r *optReader) str(key string) string {
	v, err := r.f.String(key)
	r.keep(err)
	return v
}

func (r *optReader) strs(key string) []string {
	v, err := r.f.Strings(key)
	r.keep(err)
	return v
}

func (r *optReader) int32s(key string) []int32 {
	v, err := r.f.Int32s(key)
	r.keep(err)
	return v
}

// scores accepts float32 scores, or integer ones (as llama.cpp does).
func (r *optReader) scores(key string) []float32 {
	v, err := r.f.Float32s(key)
	if err == nil {
		return v
	}
	if errors.Is(err, gguf.ErrTypeMismatch) {
		ints, ierr := r.f.Int32s(key)
		if ierr == nil {
			out := make([]float32, len(ints))
			for i, x := range ints {
				out[i] = float32(x)
			}
			return out
		}
	}
	r.keep(err)
	return nil
}

func (r *optReader) id(key string) (int32, bool) {
	v, err := r.f.Uint32(key)
	if !r.keep(err) || v > 1<<31-1 {
		return 0, false
	}
	return int32(v), true
}

func (r *optReader) boolPtr(key string) *bool {
	v, err := r.f.Bool(key)
	if !r.keep(err) {
		return nil
	}
	return &v
}
