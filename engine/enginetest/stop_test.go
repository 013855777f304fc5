package enginetest

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/realizar-host/realizar-host/engine"
)

func TestFindStop(t *testing.T) {
	tests := []struct {
		name   string
		text   string
		from   int
		stops  []string
		wantAt int
		wantOK bool
	}{
		{"none", "hello", 0, []string{"STOP"}, 5, false},
		{"whole", "STOP", 0, []string{"STOP"}, 0, true},
		{"ends in the new bytes", "ab STOP", 5, []string{"STOP"}, 3, true},
		{"entirely in the old bytes is not looked for", "STOP more", 8, []string{"STOP"}, 9, false},
		{"earliest start of two", "one two three", 0, []string{"three", "two"}, 4, true},
		{"overlapping false start", "abaabab", 5, []string{"abab"}, 3, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			at, ok := findStop([]byte(tt.text), tt.from, toBytes(tt.stops))
			assert.Equal(t, tt.wantOK, ok)
			assert.Equal(t, tt.wantAt, at)
		})
	}
}

func TestPartialStop(t *testing.T) {
	tests := []struct {
		name  string
		text  string
		stops []string
		want  int
	}{
		{"none", "hello", []string{"STOP"}, 0},
		{"one byte", "hello S", []string{"STOP"}, 1},
		{"three bytes", "hello STO", []string{"STOP"}, 3},
		{"a whole stop is not partial", "STOP", []string{"STOP"}, 0},
		{"longest of two", "xab", []string{"abc", "bcd"}, 2},
		{"self-overlap", "aba", []string{"abab"}, 3},
		{"text shorter than the stop", "S", []string{"STOP"}, 1},
		{"inside a character", "caf\xc3", []string{"\u00e9X"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, partialStop([]byte(tt.text), toBytes(tt.stops)))
		})
	}
}

func TestStringsStopResets(t *testing.T) {
	p := NewStringsStop("", "ab")
	d, err := p.Check(1, []byte("a"))
	assert.NoError(t, err)
	assert.Equal(t, engine.Decision{Action: engine.Continue, HoldBack: 1}, d)
	assert.NoError(t, p.Reset())
	d, _ = p.Check(1, []byte("b"))
	assert.Equal(t, engine.Decision{Action: engine.Continue}, d, "the text before Reset is gone")
	d, _ = p.Check(1, []byte("ab!"))
	assert.Equal(t, engine.Decision{Action: engine.StopTrim, Trim: 3}, d)
}

func toBytes(ss []string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}
