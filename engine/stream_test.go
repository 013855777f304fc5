package engine_test

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/engine"
	"github.com/realizar-host/realizar-host/engine/enginetest"
	"github.com/realizar-host/realizar-host/forward"
)

// streamed is what a turn's callback received.
type streamed struct {
	chunks [][]byte
	ids    []int32
	turn   engine.Turn
}

func (s streamed) text() string { return string(bytes.Join(s.chunks, nil)) }

// generateScript makes the model "say" pieces, one token each, then an
// end-of-generation token, and generates with stop strings stops.
func generateScript(t testing.TB, pieces []string, stops []string, maxTokens int) streamed {
	t.Helper()
	// id 0 is the prompt, ids 1..n the pieces, n+1 the end of generation.
	table := append(append([]string{""}, pieces...), "</s>")
	eog := int32(len(table) - 1)
	vocab := enginetest.NewVocab(table, eog)
	fwd, err := forward.NewSequenceForward(enginetest.NewCountingSequence(vocab.Size()), forward.Options{ModelContext: len(table) + 1})
	require.NoError(t, err)
	s, err := engine.NewSession(fwd, vocab, engine.WithSampler(enginetest.Greedy{}))
	require.NoError(t, err)
	var out streamed
	out.turn, err = s.Generate([]int32{0}, engine.GenerateConfig{
		MaxTokens: maxTokens,
		Stop:      enginetest.NewStringsStop(stops...),
		OnToken: func(id int32, text []byte) error {
			out.ids = append(out.ids, id)
			out.chunks = append(out.chunks, bytes.Clone(text))
			return nil
		},
	})
	require.NoError(t, err)
	return out
}

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
		{"never comes", []string{"ST", "O", "p", " done"}, []string{"STOP"}, all, "STOp done", engine.StopEOG},
		{"partial match at end of generation", []string{"x S", "TO"}, []string{"STOP"}, all, "x STO", engine.StopEOG},
		{"partial match at MaxTokens", []string{"x S", "TO", "P"}, []string{"STOP"}, 2, "x STO", engine.StopMaxTokens},
		{"multi-byte text, no stop", []string{"\xe6\x97", "\xa5", "\xe6", "\x9c\xac"}, []string{"STOP"}, all, "\u65e5\u672c", engine.StopEOG},
		{"earliest of two stops", []string{"one two", " three"}, []string{"three", "two"}, all, "one ", engine.StopByPolicy},
		{"stop is the whole first token", []string{"STOP", "more"}, []string{"STOP"}, all, "", engine.StopByPolicy},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := generateScript(t, tt.pieces, tt.stops, tt.maxTokens)
			assert.Equal(t, tt.want, got.text(), "streamed text")
			assert.Equal(t, tt.want, string(got.turn.Text))
			assert.Equal(t, tt.wantStop, got.turn.Stop)
			for _, st := range tt.stops {
				assert.NotContains(t, got.text(), st)
			}
			full := strings.Join(tt.pieces, "")
			assert.True(t, strings.HasPrefix(full, got.text()), "no text lost or invented")
			if utf8.ValidString(full) {
				for i, c := range got.chunks {
					assert.True(t, utf8.Valid(c), "chunk %d %q splits a character", i, c)
				}
			}
			assert.Equal(t, got.turn.GeneratedTokens(), got.ids, "one call per chosen token")
		})
	}
}

func TestStopStringsHoldBackUntilResolved(t *testing.T) {
	got := generateScript(t, []string{"ab", "a", "ab", "ab"}, []string{"abab"}, 100)
	// "ab" and "aba" might begin "abab": held. "abaab" ends "ab": "aba" released.
	want := []string{"", "", "aba", ""}
	require.Len(t, got.chunks, len(want))
	for i, w := range want {
		assert.Equal(t, w, string(got.chunks[i]), "chunk %d", i)
	}
}

func TestStopStringsCancelReleasesHeldText(t *testing.T) {
	table := []string{"", "x S", "T", "more"}
	vocab := enginetest.NewVocab(table)
	fwd, err := forward.NewSequenceForward(enginetest.NewCountingSequence(vocab.Size()), forward.Options{ModelContext: 16})
	require.NoError(t, err)
	s, err := engine.NewSession(fwd, vocab, engine.WithSampler(enginetest.Greedy{}),
		engine.WithStopPolicy(enginetest.NewStringsStop("STOP")))
	require.NoError(t, err)
	var ids []int32
	var text []byte
	turn, err := s.Generate([]int32{0}, engine.GenerateConfig{MaxTokens: 10, Cancel: engine.NewCancelTokenAfter(2),
		OnToken: func(id int32, b []byte) error { ids = append(ids, id); text = append(text, b...); return nil }})
	require.NoError(t, err)
	assert.Equal(t, engine.StopCancelled, turn.Stop)
	assert.Equal(t, []int32{1, 2, engine.NoToken}, ids, "held text goes out in a last NoToken call")
	assert.Equal(t, "x ST", string(text))
	assert.Equal(t, "x ST", string(turn.Text))
}

// FuzzStopStream splits text into tokens at random points and checks that
// the streamed text is exactly text up to the first occurrence of stop.
func FuzzStopStream(f *testing.F) {
	f.Add("abaabab", "abab", uint64(1))
	f.Add("caf\u00e9X more", "\u00e9X", uint64(2))
	f.Add("\u65e5\u672c\u8a9e", "\u672c", uint64(3))
	f.Add("no stop here", "STOP", uint64(4))
	f.Fuzz(func(t *testing.T, text, stop string, split uint64) {
		if stop == "" || len(text) == 0 || len(text) > 64 {
			return
		}
		rng := rand.New(rand.NewPCG(split, split>>1))
		var pieces []string
		for rest := text; rest != ""; {
			n := 1 + rng.IntN(min(len(rest), 6))
			pieces = append(pieces, rest[:n])
			rest = rest[n:]
		}
		want := text
		if i := strings.Index(text, stop); i >= 0 {
			want = text[:i]
		}
		got := generateScript(t, pieces, []string{stop}, 100)
		if got.text() != want || string(got.turn.Text) != want {
			t.Fatalf("pieces %q stop %q: streamed %q, want %q", pieces, stop, got.text(), want)
		}
	})
}

// TestGeneratePieces: GenerateConfig.Pieces renders the turn's text, what
// OnToken streams and what the stop policy checks, in place of the
// Session's Vocab; nil keeps the Vocab's.
func TestGeneratePieces(t *testing.T) {
	// id 0 is the prompt, 1..4 the script, 5 the end of generation.
	raw := []string{"", "Hi", "<c>", " there", "\xe2\x82", "</s>"}
	hidden := []string{"", "Hi", "", " there", "\xe2\x82", "</s>"}
	tests := []struct {
		name     string
		pieces   engine.Pieces // nil: the Session's
		stops    []string
		want     string
		chunks   []string
		wantStop engine.StopReason
	}{
		{"the Session's vocabulary", nil, nil, "Hi<c> there\xe2\x82", []string{"Hi", "<c>", " there", "", "\xe2\x82"}, engine.StopEOG},
		{"a token rendered as nothing", enginetest.NewVocab(hidden, 5), nil, "Hi there\xe2\x82", []string{"Hi", "", " there", "", "\xe2\x82"}, engine.StopEOG},
		{"the stop policy sees the rendered text", enginetest.NewVocab(hidden, 5), []string{"Hi<c>"}, "Hi there\xe2\x82", nil, engine.StopEOG},
		{"a stop across the hidden token", enginetest.NewVocab(hidden, 5), []string{"Hi there"}, "", nil, engine.StopByPolicy},
		{"a stop in the raw text", nil, []string{"Hi<c>"}, "", nil, engine.StopByPolicy},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vocab := enginetest.NewVocab(raw, 5)
			fwd, err := forward.NewSequenceForward(enginetest.NewCountingSequence(vocab.Size()), forward.Options{ModelContext: 16})
			require.NoError(t, err)
			s, err := engine.NewSession(fwd, vocab, engine.WithSampler(enginetest.Greedy{}))
			require.NoError(t, err)
			var chunks []string
			turn, err := s.Generate([]int32{0}, engine.GenerateConfig{MaxTokens: 10, Pieces: tt.pieces,
				Stop:    enginetest.NewStringsStop(tt.stops...),
				OnToken: func(_ int32, b []byte) error { chunks = append(chunks, string(b)); return nil }})
			require.NoError(t, err)
			assert.Equal(t, tt.wantStop, turn.Stop)
			assert.Equal(t, tt.want, string(turn.Text))
			assert.Equal(t, tt.want, strings.Join(chunks, ""), "streamed")
			if tt.chunks != nil {
				assert.Equal(t, tt.chunks, chunks[:len(tt.chunks)], "per token, the partial UTF-8 held back")
			}
		})
	}
}
