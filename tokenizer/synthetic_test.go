package tokenizer

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// tinySPM is a small SentencePiece vocabulary: <unk> <s> </s>, the 256
// byte tokens, then a few scored pieces.
func tinySPM(t testing.TB) *Tokenizer {
	t.Helper()
	toks := []string{"<unk>", "<s>", "</s>"}
	types := []int32{2, 3, 3}
	for b := 0; b < 256; b++ {
		toks = append(toks, fmt.Sprintf("<0x%02X>", b))
		types = append(types, 6)
	}
	pieces := []string{"▁", "h", "e", "l", "o", "▁h", "▁he", "ll", "llo", "▁hello", "<|im_end|>"}
	toks = append(toks, pieces...)
	for range pieces {
		types = append(types, 1)
	}
	types[len(types)-1] = 3
	scores := make([]float32, len(toks))
	for i := range scores {
		scores[i] = float32(-i)
	}
	spec := NewSpec(ModelSPM, toks)
	spec.Scores, spec.Types = scores, types
	tok, err := New(spec)
	require.NoError(t, err)
	return tok
}

// tinyBPE is a small byte-level BPE vocabulary: the 256 byte-alphabet
// tokens, a few merges, and three control tokens.
func tinyBPE(t testing.TB, pre string) *Tokenizer { return tinyBPEWith(t, pre, nil) }

// tinyBPEWith is tinyBPE with extra merge rules (last in rank) whose
// results are not added as tokens.
func tinyBPEWith(t testing.TB, pre string, extra []string) *Tokenizer {
	t.Helper()
	var toks []string
	for b := 0; b < 256; b++ {
		toks = append(toks, byteEncoded[b])
	}
	merges := []string{"h e", "l l", "he ll", "hell o", "Ġ w", "Ġw o", "r l", "Ġwo rl", "Ġworl d"}
	for _, m := range merges {
		p, _ := splitMerge(m)
		toks = append(toks, p.left+p.right)
	}
	types := make([]int32, len(toks))
	for i := range types {
		types[i] = 1
	}
	toks = append(toks, "<|endoftext|>", "<|im_start|>", "<|im_end|>")
	types = append(types, 3, 3, 3)
	spec := NewSpec(ModelBPE, toks)
	spec.Pre, spec.Types, spec.Merges = pre, types, append(merges, extra...)
	spec.EOS = int32(len(toks) - 3)
	tok, err := New(spec)
	require.NoError(t, err)
	return tok
}

func TestTinySPM(t *testing.T) {
	tok := tinySPM(t)
	hello, _ := tok.TokenID("▁hello")
	imEnd, _ := tok.TokenID("<|im_end|>")
	require.Equal(t, []int32{1, hello}, tok.Encode("hello", EncodeOptions{AddSpecial: true}))
	require.Equal(t, []int32{hello}, tok.Encode("hello", EncodeOptions{}))
	// Byte fallback: "é" is not a piece, so it becomes <0xC3><0xA9>.
	sp, _ := tok.TokenID("▁")
	require.Equal(t, []int32{sp, 3 + 0xC3, 3 + 0xA9}, tok.Encode("é", EncodeOptions{}))
	// A control token is one id only when parsing special tokens; the text
	// after it gets a leading space, as llama.cpp does.
	require.Equal(t, []int32{hello, imEnd, hello}, tok.Encode("hello<|im_end|>hello", EncodeOptions{ParseSpecial: true}))
	require.NotContains(t, tok.Encode("hello<|im_end|>", EncodeOptions{}), imEnd)
	// Decode strips the added space from the first piece only; after BOS
	// the space stays, as in llama_detokenize(remove_special=false).
	require.Equal(t, "hello", string(tok.Decode(tok.Encode("hello", EncodeOptions{}))))
	require.Equal(t, "<s> hello", string(tok.Decode(tok.Encode("hello", EncodeOptions{AddSpecial: true}))))
	require.True(t, tok.IsEOG(2))
	require.True(t, tok.IsEOG(imEnd))
	require.Equal(t, []byte{0xC3}, tok.Piece(3+0xC3))
	require.Equal(t, " hello", string(tok.Piece(hello)))
	require.Nil(t, tok.Piece(-1))
	require.Nil(t, tok.Piece(int32(tok.Size())))
}

func TestTinyBPE(t *testing.T) {
	tok := tinyBPE(t, "gpt-2")
	hello, _ := tok.TokenID("hello")
	world, _ := tok.TokenID("Ġworld")
	imStart, _ := tok.TokenID("<|im_start|>")
	require.Equal(t, []int32{hello, world}, tok.Encode("hello world", EncodeOptions{}))
	require.Equal(t, "hello world", string(tok.Decode([]int32{hello, world})))
	got := tok.Encode("<|im_start|>hello", EncodeOptions{ParseSpecial: true})
	require.Equal(t, []int32{imStart, hello}, got)
	require.NotContains(t, tok.Encode("<|im_start|>hello", EncodeOptions{}), imStart)
	require.False(t, tok.AddBOS(), "gpt-2 adds no BOS by default")
	eot, _ := tok.TokenID("<|endoftext|>")
	imEnd, _ := tok.TokenID("<|im_end|>")
	require.Equal(t, []int32{eot, imEnd}, tok.EOG())
	// Invalid UTF-8 becomes U+FFFD (EF BF BD) before merging.
	require.Equal(t, "\uFFFDa", string(tok.Decode(tok.Encode("\xffa", EncodeOptions{}))))
}

func TestNewErrors(t *testing.T) {
	cases := []struct {
		name string
		spec func() Spec
		err  error
	}{
		{"no tokens", func() Spec { return NewSpec(ModelSPM, nil) }, ErrInvalidSpec},
		{"short scores", func() Spec {
			s := NewSpec(ModelSPM, []string{"a", "b"})
			s.Scores = []float32{0}
			return s
		}, ErrInvalidSpec},
		{"short types", func() Spec {
			s := NewSpec(ModelSPM, []string{"a", "b"})
			s.Types = []int32{1}
			return s
		}, ErrInvalidSpec},
		{"unknown model", func() Spec { return NewSpec("t5", []string{"a"}) }, ErrUnsupported},
		{"unknown pre", func() Spec {
			s := NewSpec(ModelBPE, []string{"a"})
			s.Pre, s.Merges = "deepseek-coder", []string{"a a"}
			return s
		}, ErrUnsupported},
		{"no merges", func() Spec {
			s := NewSpec(ModelBPE, []string{"a"})
			s.Pre = "gpt-2"
			return s
		}, ErrInvalidSpec},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := New(c.spec())
			require.ErrorIs(t, err, c.err)
		})
	}
}

// TestSpecialIDsFromFile: the file's ids replace the defaults; an id out of
// range keeps the default; add_bos/add_eos follow the file.
func TestSpecialIDsFromFile(t *testing.T) {
	toks := []string{"<unk>", "<s>", "</s>", "<|eot_id|>", "▁a"}
	spec := NewSpec(ModelSPM, toks)
	spec.Types = []int32{2, 3, 3, 3, 1}
	spec.BOS, spec.EOS = 99, 3
	yes, no := true, false
	spec.AddBOS, spec.AddEOS = &no, &yes
	tok, err := New(spec)
	require.NoError(t, err)
	require.Equal(t, int32(1), tok.BOS())
	require.Equal(t, int32(3), tok.EOS())
	require.Equal(t, int32(3), tok.EOT(), "found by its text")
	require.False(t, tok.AddBOS())
	require.True(t, tok.AddEOS())
	require.Equal(t, []int32{4, 3}, tok.Encode("a", EncodeOptions{AddSpecial: true}))
	require.Equal(t, []int32{2, 3}, tok.EOG(), "</s> by text, eos/eot by id")
}

// TestMergePaths: a merge rule whose result is not a token disables the
// id-based fast path; the string path must give the same ids.
func TestMergePaths(t *testing.T) {
	fast := tinyBPE(t, "gpt-2")
	slow := tinyBPEWith(t, "gpt-2", []string{"x y"})
	require.NotNil(t, fast.idMerges)
	require.Nil(t, slow.idMerges)
	for _, s := range []string{"hello world", "xy hello", " worldworld hellxyo", "\xffhe\u00e9llo"} {
		require.Equal(t, fast.Encode(s, EncodeOptions{}), slow.Encode(s, EncodeOptions{}), "%q", s)
	}
}

// IsControl and IsByte follow the token types (the host's token
// attributes); Piece of a byte token is its one byte.
func TestTinySPMTokenTypes(t *testing.T) {
	tok := tinySPM(t)
	imEnd, _ := tok.TokenID("<|im_end|>")
	hello, _ := tok.TokenID("▁hello")
	for _, tc := range []struct {
		id            int32
		control, byte bool
	}{{0, true, false}, {1, true, false}, {3 + 0x0A, false, true}, {hello, false, false}, {imEnd, true, false}, {-1, false, false}} {
		require.Equal(t, tc.control, tok.IsControl(tc.id), tc.id)
		require.Equal(t, tc.byte, tok.IsByte(tc.id), tc.id)
	}
	require.Equal(t, []byte{0x0A}, tok.Piece(3+0x0A))
}
