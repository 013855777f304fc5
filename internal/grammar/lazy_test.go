package grammar_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/internal/grammar"
)

// A lazy grammar: free text until a trigger, then the grammar from the
// trigger's first byte, whether the trigger comes whole, split across
// tokens or inside a token that also starts the constrained part.
func TestLazy(t *testing.T) {
	const gbnf = `root ::= "<tool_call>" "{" [a-z]+ "}" "</tool_call>"`
	g, err := grammar.Compile(gbnf)
	require.NoError(t, err)
	extra := []string{"<tool_call>", "<tool", "_call>", "ok <tool_call>{", "}</tool_call>", "hello "}
	v, eog := byteVocab(t, extra...)
	tok := func(s string) int32 {
		for i, e := range extra {
			if e == s {
				return int32(256 + i)
			}
		}
		require.Len(t, s, 1, s)
		return int32(s[0])
	}
	for _, tc := range []struct {
		name   string
		tokens []string
		on     int // index of the token after which the grammar is on
	}{
		{"whole", []string{"hello ", "<tool_call>", "{", "a", "}</tool_call>"}, 1},
		{"split", []string{"hello ", "<tool", "_call>", "{", "b", "}</tool_call>"}, 2},
		{"inside a token", []string{"o", "ok <tool_call>{", "c", "}</tool_call>"}, 1},
		{"byte by byte", append(strings.Split("x<tool_call>{d", ""), "}</tool_call>"), 11},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := grammar.NewLazy(grammar.NewMatcher(g, v), []string{"<tool_call>", "[TOOL_CALLS]"})
			require.NoError(t, err)
			for i, s := range tc.tokens {
				if !l.Triggered() {
					assert.Nil(t, l.Mask(), "token %d: no constraint before the trigger", i)
				} else {
					mk := l.Mask()
					id := tok(s)
					assert.NotZero(t, mk[id>>5]&(1<<(id&31)), "token %d %q is in the mask", i, s)
				}
				require.NoError(t, l.Accept(tok(s)), "token %d %q", i, s)
				assert.Equal(t, i >= tc.on, l.Triggered(), "after token %d %q", i, s)
			}
			assert.True(t, l.Done())
			require.NoError(t, l.Accept(eog))
			l.Reset()
			assert.False(t, l.Triggered())
			assert.Nil(t, l.Mask())
		})
	}

	t.Run("text after the trigger the grammar refuses", func(t *testing.T) {
		l, err := grammar.NewLazy(grammar.NewMatcher(g, v), []string{"<tool"})
		require.NoError(t, err)
		require.NoError(t, l.Accept(tok("<tool")))
		require.True(t, l.Triggered())
		assert.ErrorIs(t, l.Accept(tok("}</tool_call>")), grammar.ErrRejected)
	})
	t.Run("eog before any trigger", func(t *testing.T) {
		l, err := grammar.NewLazy(grammar.NewMatcher(g, v), []string{"<tool_call>"})
		require.NoError(t, err)
		require.NoError(t, l.Accept(tok("hello ")))
		require.NoError(t, l.Accept(eog))
		assert.False(t, l.Done())
	})
	for _, bad := range [][]string{nil, {""}, {strings.Repeat("x", grammar.MaxTriggerBytes+1)}, make([]string, grammar.MaxTriggers+1)} {
		_, err := grammar.NewLazy(grammar.NewMatcher(g, v), bad)
		assert.ErrorIs(t, err, grammar.ErrTrigger)
	}
}
