package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestBuiltinNamesOf: the help texts list each embedded policy under its
// own kind, read from its metadata.
func TestBuiltinNamesOf(t *testing.T) {
	tests := []struct {
		kind string
		want []string
	}{
		{"sampler", []string{"greedy", "standard", "mirostat-v2"}},
		{"processor", []string{"dry", "json", "grammar"}},
		{"stop", []string{"strings", "repetition", "max-time"}},
		{"drafter", []string{"lookup"}},
		{"filter", nil},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, builtinNamesOf(tt.kind), tt.kind)
	}
}
