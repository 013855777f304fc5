package engine

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestReleaseEnd(t *testing.T) {
	tests := []struct {
		name     string
		text     string
		released int
		hold     int
		want     int
	}{
		{"nothing held", "hello", 0, 0, 5},
		{"hold a partial stop", "hello ST", 0, 2, 6},
		{"hold everything", "ST", 0, 2, 0},
		{"hold more than the text", "ab", 0, 9, 0},
		{"negative hold is none", "ab", 0, -3, 2},
		{"already released", "hello", 5, 0, 5},
		{"hold reaching into released text", "hello", 4, 3, 4},
		{"unfinished UTF-8 kept", "caf\xc3", 0, 0, 3},
		{"unfinished UTF-8 before a hold", "a\xe6\x97ST", 0, 2, 1},
		{"finished character released", "caf\xc3\xa9", 3, 0, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, releaseEnd([]byte(tt.text), tt.released, tt.hold))
		})
	}
}

func TestTrimEnd(t *testing.T) {
	tests := []struct {
		name                    string
		textLen, released, trim int
		want                    int
	}{
		{"trim the stop", 10, 3, 4, 6},
		{"trim nothing", 10, 3, 0, 10},
		{"negative trim is none", 10, 3, -1, 10},
		{"trim all unreleased", 10, 3, 7, 3},
		{"never below released", 10, 3, 9, 3},
		{"trim more than the text", 4, 0, 100, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, trimEnd(tt.textLen, tt.released, tt.trim))
		})
	}
}
