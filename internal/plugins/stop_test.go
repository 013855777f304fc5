package plugins_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/engine"
	"github.com/realizar-host/realizar-host/engine/enginetest"
	"github.com/realizar-host/realizar-host/forward"
	"github.com/realizar-host/realizar-host/host"
)

// streamed is what a turn's callback received.
type streamed struct {
	chunks [][]byte
	turn   engine.Turn
}

func (s streamed) text() string { return string(bytes.Join(s.chunks, nil)) }

// script is a model that "says" pieces, one token each, then an
// end-of-generation token: id 0 is the prompt, ids 1..n the pieces, n+1
// the end of generation.
type script struct {
	vocab *enginetest.Vocab
	fwd   forward.ArchForward
}

func newScript(t testing.TB, pieces []string) script {
	t.Helper()
	table := append(append([]string{""}, pieces...), "</s>")
	vocab := enginetest.NewVocab(table, int32(len(table)-1))
	fwd, err := forward.NewSequenceForward(enginetest.NewCountingSequence(vocab.Size()), forward.Options{ModelContext: len(table) + 1})
	require.NoError(t, err)
	return script{vocab, fwd}
}

// generate runs one turn of s with stop policy p through engine.Session.
func (s script) generate(t testing.TB, p engine.StopPolicy, maxTokens int) streamed {
	t.Helper()
	sess, err := engine.NewSession(s.fwd, s.vocab, engine.WithSampler(enginetest.Greedy{}))
	require.NoError(t, err)
	var out streamed
	out.turn, err = sess.Generate([]int32{0}, engine.GenerateConfig{
		MaxTokens: maxTokens,
		Stop:      p,
		OnToken: func(id int32, text []byte) error {
			out.chunks = append(out.chunks, bytes.Clone(text))
			return nil
		},
	})
	require.NoError(t, err)
	return out
}

func stopPlugin(t testing.TB, h *host.Host, v engine.Vocab, name, config string) *host.StopPolicy {
	t.Helper()
	p, err := h.Load(context.Background(), wasm(t, name), host.LoadOptions{Config: []byte(config), Kind: abi.KindStop})
	require.NoError(t, err, name)
	sp, err := host.NewStopPolicy(v, p)
	require.NoError(t, err)
	t.Cleanup(func() { _ = sp.Close() })
	return sp
}

func jsonStrings(ss []string) string {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, s := range ss {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(quote(s))
	}
	b.WriteByte(']')
	return b.String()
}

// quote writes s as a JSON string. Stop strings here are whole UTF-8 (the
// splits happen in the token pieces), so they are valid JSON as they are.
func quote(s string) string {
	var b bytes.Buffer
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// TestStopStrings: the C and Go strings plugins stream exactly what the
// reference policy (enginetest.StringsStop) streams, chunk by chunk,
// through the real Session and host.
func TestStopStrings(t *testing.T) {
	const all = 100 // MaxTokens beyond every script
	tests := []struct {
		name      string
		pieces    []string
		stops     []string
		maxTokens int
		want      string
		wantStop  engine.StopReason
	}{
		{"split across 2 tokens", []string{"ab ST", "OP cd"}, []string{"STOP"}, all, "ab ", engine.StopByPolicy},
		{"split across 3 tokens", []string{"x S", "T", "OP", "y"}, []string{"STOP"}, all, "x ", engine.StopByPolicy},
		{"split across 4 tokens", []string{"S", "T", "O", "P", "z"}, []string{"STOP"}, all, "", engine.StopByPolicy},
		{"inside one token", []string{"ab STOP cd"}, []string{"STOP"}, all, "ab ", engine.StopByPolicy},
		{"begins inside a 2-byte character", []string{"caf\xc3", "\xa9X more"}, []string{"\u00e9X"}, all, "caf", engine.StopByPolicy},
		{"begins inside a 3-byte character", []string{"a\xe6\x97", "\xa5\xe6", "\x9c\xac!"}, []string{"\u65e5\u672c"}, all, "a", engine.StopByPolicy},
		{"false start abab in abaabab", []string{"ab", "a", "ab", "ab", "tail"}, []string{"abab"}, all, "aba", engine.StopByPolicy},
		{"false start, a byte per token", []string{"a", "b", "a", "a", "b", "a", "b"}, []string{"abab"}, all, "aba", engine.StopByPolicy},
		{"overlapping false start ###", []string{"x#", "#", "y##", "##"}, []string{"###"}, all, "x##y", engine.StopByPolicy},
		{"never comes", []string{"ST", "O", "p", " done"}, []string{"STOP"}, all, "STOp done", engine.StopEOG},
		{"partial match at end of generation", []string{"x S", "TO"}, []string{"STOP"}, all, "x STO", engine.StopEOG},
		{"partial match at MaxTokens", []string{"x S", "TO", "P"}, []string{"STOP"}, 2, "x STO", engine.StopMaxTokens},
		{"multi-byte text, no stop", []string{"\xe6\x97", "\xa5", "\xe6", "\x9c\xac"}, []string{"STOP"}, all, "\u65e5\u672c", engine.StopEOG},
		{"earliest of two stops", []string{"one two", " three"}, []string{"three", "two"}, all, "one ", engine.StopByPolicy},
		{"stop is the whole first token", []string{"STOP", "more"}, []string{"STOP"}, all, "", engine.StopByPolicy},
		{"newline stop", []string{"line one", "\n", "line two"}, []string{"\n"}, all, "line one", engine.StopByPolicy},
		{"no stops configured", []string{"a", "b"}, nil, all, "ab", engine.StopEOG},
	}
	h := newHost(t, host.NewConfig())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newScript(t, tt.pieces)
			ref := s.generate(t, enginetest.NewStringsStop(tt.stops...), tt.maxTokens)
			require.Equal(t, tt.want, ref.text(), "reference")
			require.Equal(t, tt.wantStop, ref.turn.Stop, "reference")
			for _, name := range []string{"strings", "strings-go"} {
				got := s.generate(t, stopPlugin(t, h, s.vocab, name, `{"stop":`+jsonStrings(tt.stops)+`}`), tt.maxTokens)
				assert.Equal(t, ref.chunks, got.chunks, "%s: the same chunks as the reference", name)
				assert.Equal(t, tt.want, got.text(), name)
				assert.Equal(t, tt.wantStop, got.turn.Stop, name)
			}
		})
	}
}

// TestStopStringsInclude: with include the stop string stays and only
// what follows it is trimmed.
func TestStopStringsInclude(t *testing.T) {
	h := newHost(t, host.NewConfig())
	for _, tt := range []struct {
		pieces []string
		stops  []string
		want   string
	}{
		{[]string{"ab ST", "OP cd"}, []string{"STOP"}, "ab STOP"},
		{[]string{"ab ", "STOP"}, []string{"STOP"}, "ab STOP"},
		{[]string{"caf\xc3", "\xa9X more"}, []string{"\u00e9X"}, "caf\u00e9X"},
	} {
		s := newScript(t, tt.pieces)
		for _, name := range []string{"strings", "strings-go"} {
			got := s.generate(t, stopPlugin(t, h, s.vocab, name, `{"include":true,"stop":`+jsonStrings(tt.stops)+`}`), 100)
			assert.Equal(t, tt.want, got.text(), name)
			assert.Equal(t, engine.StopByPolicy, got.turn.Stop, name)
		}
	}
}

// TestStopStringsSingle: "stop" may be one string.
func TestStopStringsSingle(t *testing.T) {
	h := newHost(t, host.NewConfig())
	s := newScript(t, []string{"one", " END", " two"})
	for _, name := range []string{"strings", "strings-go"} {
		got := s.generate(t, stopPlugin(t, h, s.vocab, name, `{"stop":" END"}`), 100)
		assert.Equal(t, "one", got.text(), name)
	}
}

// TestStopStringsUnknownKey: a config key other than stop and include is
// refused at init, naming it, by the C and Go builds alike.
func TestStopStringsUnknownKey(t *testing.T) {
	h := newHost(t, host.NewConfig())
	s := newScript(t, []string{"one"})
	for _, name := range []string{"strings", "strings-go"} {
		sp := stopPlugin(t, h, s.vocab, name, `{"stops":["x"]}`)
		err := sp.Reset()
		require.ErrorIs(t, err, host.ErrBadConfig, name)
		assert.ErrorContains(t, err, "config: unknown key stops (the keys are stop, include)", name)
	}
}
