package engine

import (
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

func TestCompleteUTF8Prefix(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want int
	}{
		{"empty", "", 0},
		{"ascii", "abc", 3},
		{"complete two-byte", "caf\u00e9", 5},
		{"lead of two-byte", "caf\xc3", 3},
		{"lead of three-byte", "a\xe6", 1},
		{"two of three bytes", "a\xe6\x97", 1},
		{"complete three-byte", "a\xe6\x97\xa5", 4},
		{"three of four bytes", "\xf0\x9f\x98", 0},
		{"complete four-byte", "\xf0\x9f\x98\x80", 4},
		{"lead alone", "\xf0", 0},
		{"stray continuation", "a\x80", 2},
		{"three stray continuations", "\x80\x80\x80", 3},
		{"invalid lead 0xff", "a\xff", 2},
		{"overlong lead 0xc0", "a\xc0", 2},
		{"lead after complete char", "\u00e9\xe6\x97", 2},
		{"too many continuations", "\xc3\xa9\xa9", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, completeUTF8Prefix([]byte(tt.in)))
		})
	}
}

// FuzzCompleteUTF8Prefix checks the properties the Session relies on: the
// cut is short (under one character), valid UTF-8 is never cut, and what is
// cut is a lead byte announcing more bytes than follow it.
func FuzzCompleteUTF8Prefix(f *testing.F) {
	for _, s := range []string{"", "abc", "caf\xc3", "\xf0\x9f\x98", "\x80\x80", "\u65e5\u672c"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		n := completeUTF8Prefix(b)
		if n < 0 || n > len(b) || len(b)-n >= utf8.UTFMax {
			t.Fatalf("completeUTF8Prefix(%q) = %d", b, n)
		}
		if utf8.Valid(b) && n != len(b) {
			t.Fatalf("valid %q cut at %d", b, n)
		}
		if n < len(b) && seqLen(b[n]) <= len(b)-n {
			t.Fatalf("%q cut at %d before a finished sequence", b, n)
		}
	})
}
