package tokenizer

import (
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStreamTable(t *testing.T) {
	rocket := "\U0001F680" // F0 9F 9A 80
	euro := "€"            // E2 82 AC
	cases := []struct {
		name   string
		pieces []string
		want   []string // per Write
		flush  string
	}{
		{"ascii", []string{"Hel", "lo"}, []string{"Hel", "lo"}, ""},
		{"whole emoji", []string{rocket}, []string{rocket}, ""},
		{"emoji in 4 bytes", []string{rocket[:1], rocket[1:2], rocket[2:3], rocket[3:]}, []string{"", "", "", rocket}, ""},
		{"emoji split 2+2 with text", []string{"a" + rocket[:2], rocket[2:] + "b"}, []string{"a", rocket + "b"}, ""},
		{"euro split", []string{euro[:2], euro[2:]}, []string{"", euro}, ""},
		{"stray continuation", []string{"\x80a"}, []string{"\uFFFDa"}, ""},
		{"interrupted sequence", []string{euro[:2], "x"}, []string{"", "\uFFFD\uFFFDx"}, ""},
		{"invalid lead", []string{"\xFFz"}, []string{"\uFFFDz"}, ""},
		{"surrogate encoding", []string{"\xED\xA0", "\x80"}, []string{"\uFFFD\uFFFD", "\uFFFD"}, ""},
		{"held at end", []string{"ok" + euro[:2]}, []string{"ok"}, "\uFFFD\uFFFD"},
		{"empty piece", []string{"", "a"}, []string{"", "a"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := NewStream(nil)
			for i, p := range c.pieces {
				got := s.Write([]byte(p))
				assert.Equal(t, c.want[i], string(got), "write %d", i)
				assert.True(t, utf8.Valid(got))
			}
			assert.Equal(t, c.flush, string(s.Flush()))
			assert.Zero(t, s.Pending())
		})
	}
}

// TestStreamVocab streams real byte-fallback and byte-level tokens.
func TestStreamVocab(t *testing.T) {
	for _, name := range vocabNames {
		t.Run(name, func(t *testing.T) {
			tok := loadVocab(t, name)
			text := "a🦙 Привет 世界 e\u0301!"
			ids := tok.Encode(text, EncodeOptions{})
			s := NewStream(tok)
			var got []byte
			for _, id := range ids {
				chunk := s.Add(id)
				require.True(t, utf8.Valid(chunk), "chunk %q", chunk)
				got = append(got, chunk...)
			}
			got = append(got, s.Flush()...)
			want := text
			if tok.Model() == ModelSPM {
				want = " " + text // the stream keeps the added leading space
			}
			assert.Equal(t, want, string(got))
		})
	}
}
