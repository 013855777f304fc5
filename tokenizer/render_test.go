package tokenizer

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRendererPiece: on llama.cpp's vocabularies, control and unknown
// tokens render as nothing by default and as their text with Special (or
// when preserved); user-defined, normal and byte tokens render the same
// either way. The token types are the files' (checked by the control
// column against IsControl).
func TestRendererPiece(t *testing.T) {
	cases := []struct {
		name     string
		vocab    string
		text     string // the token's vocabulary text
		control  bool   // IsControl: hidden by default
		preserve []string
		want     string // rendered without Special
		special  string // rendered with Special
	}{
		{"spm BOS", "llama-spm", "<s>", true, nil, "", "<s>"},
		{"spm EOS", "llama-spm", "</s>", true, nil, "", "</s>"},
		{"spm unknown", "llama-spm", "<unk>", true, nil, "", "<unk>"},
		{"spm normal", "llama-spm", "▁Hello", false, nil, " Hello", " Hello"},
		{"spm byte", "llama-spm", "<0x0A>", false, nil, "\n", "\n"},
		{"llama 3 begin_of_text", "llama-bpe", "<|begin_of_text|>", true, nil, "", "<|begin_of_text|>"},
		{"llama 3 header", "llama-bpe", "<|start_header_id|>", true, nil, "", "<|start_header_id|>"},
		{"llama 3 header preserved", "llama-bpe", "<|start_header_id|>", true, []string{"<|start_header_id|>"},
			"<|start_header_id|>", "<|start_header_id|>"},
		{"preserving another token", "llama-bpe", "<|start_header_id|>", true, []string{"<|end_header_id|>"},
			"", "<|start_header_id|>"},
		{"qwen2 im_start", "qwen2", "<|im_start|>", true, nil, "", "<|im_start|>"},
		{"qwen2 im_start preserved", "qwen2", "<|im_start|>", true, []string{"<nope>", "<|im_start|>", "<|im_start|>"},
			"<|im_start|>", "<|im_start|>"},
		{"qwen2 user-defined <s>", "qwen2", "<s>", false, nil, "<s>", "<s>"},
		{"qwen2 user-defined pad", "qwen2", "[PAD151646]", false, nil, "[PAD151646]", "[PAD151646]"},
		{"phi-3 end", "phi-3", "<|end|>", true, nil, "", "<|end|>"},
		{"gpt-2 normal", "gpt-2", "Ġworld", false, []string{"Ġworld"}, " world", " world"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tok := loadVocab(t, c.vocab)
			id, ok := tok.TokenID(c.text)
			require.True(t, ok, "%s has %q", c.vocab, c.text)
			require.Equal(t, c.control, tok.IsControl(id), "the file's type of %q", c.text)
			assert.Equal(t, c.want, string(tok.Renderer(RenderOptions{Preserve: c.preserve}).Piece(id)), "default")
			assert.Equal(t, c.special, string(tok.Renderer(RenderOptions{Special: true, Preserve: c.preserve}).Piece(id)), "special")
			assert.Equal(t, c.special, string(tok.Piece(id)), "Piece is the raw text")
		})
	}
}

func TestRendererOutOfRange(t *testing.T) {
	tok := loadVocab(t, "llama-spm")
	for _, special := range []bool{false, true} {
		r := tok.Renderer(RenderOptions{Special: special})
		assert.Nil(t, r.Piece(-1))
		assert.Nil(t, r.Piece(int32(tok.Size())))
		assert.Equal(t, tok.Size(), r.Size())
		assert.True(t, r.IsEOG(tok.EOS()))
	}
}

// TestRendererDecode: the SentencePiece space is removed from the first
// piece only, as llama_detokenize(remove_special=false) does: a hidden BOS
// first leaves the next token's space.
func TestRendererDecode(t *testing.T) {
	tok := loadVocab(t, "llama-spm")
	hello, _ := tok.TokenID("▁Hello")
	world, _ := tok.TokenID("▁world")
	cases := []struct {
		name          string
		ids           []int32
		want, special string
	}{
		{"no control", []int32{hello, world}, "Hello world", "Hello world"},
		{"BOS first", []int32{tok.BOS(), hello, world}, " Hello world", "<s> Hello world"},
		{"EOS inside", []int32{hello, tok.EOS(), world}, "Hello world", "Hello</s> world"},
		{"only control", []int32{tok.BOS(), tok.EOS()}, "", "<s></s>"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, string(tok.Renderer(RenderOptions{}).Decode(c.ids)))
			assert.Equal(t, c.special, string(tok.Renderer(RenderOptions{Special: true}).Decode(c.ids)))
			assert.Equal(t, c.special, string(tok.Decode(c.ids)), "Decode renders control tokens")
		})
	}
}

// TestStreamOverRenderer: a Stream over a Renderer holds partial UTF-8 back
// across a hidden control token, and a shown one ends the partial
// sequence (each byte then U+FFFD), as the bytes say.
func TestStreamOverRenderer(t *testing.T) {
	tok := loadVocab(t, "llama-spm")
	b := func(s string) int32 {
		id, ok := tok.TokenID(s)
		require.True(t, ok, s)
		return id
	}
	once := b("▁Once")
	cases := []struct {
		name          string
		ids           []int32
		want, special string
	}{
		{"control inside a character", []int32{b("<0xE2>"), tok.BOS(), b("<0x82>"), b("<0xAC>")}, "€", "\uFFFD<s>\uFFFD\uFFFD"},
		{"control before a spaced piece", []int32{tok.EOS(), tok.BOS(), once}, " Once", "</s><s> Once"},
		{"unknown between pieces", []int32{once, b("<unk>"), once}, " Once Once", " Once<unk> Once"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, special := range []bool{false, true} {
				s := NewStream(tok.Renderer(RenderOptions{Special: special}))
				var got []byte
				for _, id := range c.ids {
					got = append(got, s.Add(id)...)
				}
				got = append(got, s.Flush()...)
				want := c.want
				if special {
					want = c.special
				}
				assert.Equal(t, want, string(got), "special %v", special)
			}
		})
	}
}
