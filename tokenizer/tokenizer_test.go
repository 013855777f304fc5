package tokenizer

import (
	"testing"

	"github.com/realizar-host/realizar-host/engine"
	"github.com/stretchr/testify/assert"
)

var _ engine.Vocab = (*Tokenizer)(nil)

// TestVocabFacts pins what llama.cpp reports for each vocabulary (read from
// llama_vocab_* on the same files): the EOG set, BOS/EOS/EOT, add_bos.
func TestVocabFacts(t *testing.T) {
	cases := []struct {
		name          string
		eog           []int32
		bos, eos, eot int32
		addBOS        bool
	}{
		{"llama-spm", []int32{2}, 1, 2, Absent, true},
		{"llama-bpe", []int32{128001, 128009}, 128000, 128001, 128009, true},
		// 128247 is "</s>" as plain text in Qwen's vocabulary; llama.cpp
		// ends generation on it too.
		{"qwen2", []int32{128247, 151643, 151645}, 151643, 151643, 151645, false},
		{"gpt-2", []int32{50256}, 50256, 50256, 50256, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tok := loadVocab(t, c.name)
			assert.Equal(t, c.eog, tok.EOG())
			for _, id := range c.eog {
				assert.True(t, tok.IsEOG(id))
			}
			assert.False(t, tok.IsEOG(-1))
			assert.Equal(t, c.bos, tok.BOS())
			assert.Equal(t, c.eos, tok.EOS())
			assert.Equal(t, c.eot, tok.EOT())
			assert.Equal(t, c.addBOS, tok.AddBOS())
			ids := tok.Encode("Hi", EncodeOptions{AddSpecial: true})
			assert.Equal(t, c.addBOS, ids[0] == c.bos)
		})
	}
}

func TestParseSpecial(t *testing.T) {
	cases := []struct {
		vocab, text string
		special     int32
	}{
		{"qwen2", "<|im_start|>user\nHi<|im_end|>\n", 151644},
		{"llama-bpe", "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>", 128006},
		{"gpt-2", "a<|endoftext|>b", 50256},
		{"llama-spm", "<s>Hi</s>", 1},
	}
	for _, c := range cases {
		t.Run(c.vocab, func(t *testing.T) {
			tok := loadVocab(t, c.vocab)
			on := tok.Encode(c.text, EncodeOptions{ParseSpecial: true})
			off := tok.Encode(c.text, EncodeOptions{})
			assert.Contains(t, on, c.special)
			assert.NotContains(t, off, c.special)
			assert.Less(t, len(on), len(off))
		})
	}
}

func TestPieces(t *testing.T) {
	cases := []struct {
		vocab string
		id    int32
		want  string
	}{
		{"llama-spm", 13, "\n"},        // <0x0A>
		{"llama-spm", 15043, " Hello"}, // ▁Hello
		{"llama-spm", 1, "<s>"},        // control renders as text
		{"gpt-2", 995, " world"},       // Ġworld
		{"gpt-2", 50256, "<|endoftext|>"},
		{"qwen2", 151645, "<|im_end|>"},
		{"llama-bpe", 127, "\xc3"}, // "Ã": a lone lead byte
	}
	for _, c := range cases {
		tok := loadVocab(t, c.vocab)
		assert.Equal(t, c.want, string(tok.Piece(c.id)), "%s %d (%q)", c.vocab, c.id, tok.TokenText(c.id))
	}
}

// TestPhi3RStrip: for phi-3 (by general.name) llama.cpp lets special tokens
// swallow the whitespace after them; ids from llama_tokenize.
func TestPhi3RStrip(t *testing.T) {
	tok := loadVocab(t, "phi-3")
	got := tok.Encode("<|user|>\nHi<|end|>\n<|assistant|>", EncodeOptions{ParseSpecial: true})
	assert.Equal(t, []int32{32010, 6324, 32007, 32001}, got)
}
