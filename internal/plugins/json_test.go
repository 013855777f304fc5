package plugins_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/engine/enginetest"
	"github.com/realizar-host/realizar-host/host"
	"github.com/realizar-host/realizar-host/internal/plugins"
)

// The synthetic JSON vocabulary: an end of generation with a text piece,
// a control token, an empty piece, every single byte, then multi-byte
// pieces.
const (
	idEOG     = 0
	idControl = 1
	idEmpty   = 2
	idByte0   = 3 // idByte0 + b is the piece of the one byte b
)

var multiPieces = []string{`{"`, `":`, `"}`, `true`, `false`, `null`, `12`, `, "`, `]}`, `}}`, `  `, "\n  ",
	`\u00`, `"a"`, "\u00e9", `": {"`, `]]`, ` the`, `e5`, `.5`, `-0`, `","`, `{}`, `[]`}

func jsonVocab() *enginetest.Vocab {
	pieces := []string{"</s>", "<ctl>", ""}
	for b := range 256 {
		pieces = append(pieces, string([]byte{byte(b)}))
	}
	return enginetest.NewVocab(append(pieces, multiPieces...), idEOG)
}

// multiID is the id of a multi-byte piece of jsonVocab.
func multiID(t testing.TB, piece string) int32 {
	for i, p := range multiPieces {
		if p == piece {
			return int32(idByte0 + 256 + i)
		}
	}
	t.Fatalf("no piece %q", piece)
	return -1
}

// bytesOf tokenizes text one byte a token.
func bytesOf(text string) []int32 {
	ids := make([]int32, len(text))
	for i := range len(text) {
		ids[i] = idByte0 + int32(text[i])
	}
	return ids
}

func jsonConfig(m plugins.JSONMode) string {
	if m.EOG == nil {
		m.EOG = []int32{idEOG}
	}
	if m.Control == nil {
		m.Control = []int32{idControl}
	}
	return string(m.Config())
}

// jsonMachine drives the json processor (before greedy) one chosen token a
// step.
type jsonMachine struct {
	t    testing.TB
	s    *host.Sampler
	n    int
	next []bool // the mask of the step not yet taken (a second Sample would pass prev again)
}

func newJSONMachine(t testing.TB, h *host.Host, v *enginetest.Vocab, config string) *jsonMachine {
	s, err := host.NewSampler(v, load(t, h, "greedy", ""), load(t, h, "json", config))
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	require.NoError(t, s.Reset(1, []int32{5}))
	return &jsonMachine{t: t, s: s, n: v.Size()}
}

// mask runs one step on zero logits, unless it has run since the last
// Accept, and returns which ids the processor left allowed.
func (m *jsonMachine) mask() []bool {
	if m.next != nil {
		return m.next
	}
	logits := make([]float32, m.n)
	_, err := m.s.Sample(logits)
	require.NoError(m.t, err)
	out := make([]bool, m.n)
	for id, l := range logits {
		require.True(m.t, l == 0 || l == negInf, "id %d: logit %v is neither kept nor masked", id, l)
		out[id] = l == 0
	}
	m.next = out
	return out
}

func (m *jsonMachine) accept(id int32) {
	m.s.Accept(id)
	m.next = nil
}

// drive feeds ids while each is allowed; it returns how many were, and the
// mask of the step after the last one accepted.
func (m *jsonMachine) drive(ids []int32) (accepted int, next []bool) {
	next = m.mask()
	for k, id := range ids {
		if !next[id] {
			return k, next
		}
		m.accept(id)
		next = m.mask()
	}
	return len(ids), next
}

func allowedIDs(mask []bool) []int32 {
	var out []int32
	for id, ok := range mask {
		if ok {
			out = append(out, int32(id))
		}
	}
	return out
}

// TestJSONPrefixes: the C state machine, through the host, byte by byte.
// A valid text is accepted whole, and the end of generation is allowed
// exactly when the text is a whole JSON value (then nothing else is); an
// invalid text is refused at its first wrong byte.
func TestJSONPrefixes(t *testing.T) {
	h := newHost(t, host.NewConfig())
	v := jsonVocab()
	tests := []struct {
		text     string
		anyValue bool
		accepted int  // bytes accepted; -1: all
		complete bool // (when all are) the end of generation is allowed
	}{
		{`{}`, false, -1, true},
		{`{"a":1}`, false, -1, true},
		{`{"a": [1, -2.5e+3, 0, true, false, null, "x\"\\\/\b\f\n\r\t\u00e9\uD83D"]}`, false, -1, true},
		{` {"k" : {"n":[[], {}]}}`, false, -1, true},
		{"{\n  \"a\": 0.5E-1,\n  \"b\": -0\n}", false, -1, true},
		{"{\"\u00e9\":\"\u00fc\u4e16\U0001F600\"}", false, -1, true},
		{`{"a`, false, -1, false},
		{`{"a":tr`, false, -1, false},
		{`{"a":1`, false, -1, false},
		{`12`, true, -1, true},
		{`-0.5e3`, true, -1, true},
		{`"x"`, true, -1, true},
		{`[1,2]`, true, -1, true},
		{`true`, true, -1, true},
		{`-`, true, -1, false},
		{`1.`, true, -1, false},
		{`[`, false, 0, false},
		{`"`, false, 0, false},
		{`1`, false, 0, false},
		{`{,`, false, 1, false},
		{`{"a"}`, false, 4, false},
		{`{"a":}`, false, 5, false},
		{`{"a":1,}`, false, 7, false},
		{`{"a":01`, false, 6, false},
		{`{"a":1.}`, false, 7, false},
		{`{"a":-}`, false, 6, false},
		{`{"a":1e}`, false, 7, false},
		{`{"a":tx`, false, 6, false},
		{`{"a":truex`, false, 9, false},
		{`{"a":"\x`, false, 7, false},
		{`{"a":"\u12g`, false, 10, false},
		{"{\"a\":\"\x01", false, 6, false},
		{"{\"a\":\"\n", false, 6, false},
		{"{\"a\":\"\xc3(", false, 7, false},
		{"{\"a\":\"\xc0\x80", false, 6, false},
		{"{\"a\":\"\xed\xa0\x80", false, 7, false},
		{"{\"a\":\"\xe0\x80\x80", false, 7, false},
		{"{\"a\":\"\xf4\x90\x80\x80", false, 7, false},
		{"{\"a\":\"\xf5", false, 6, false},
		{`{"a":[1}`, false, 7, false},
		{`{"a":1]`, false, 6, false},
		{`{} `, false, 2, true},
		{`{}x`, false, 2, true},
		{`12 `, true, 2, true},
		{`[1] [`, true, 3, true},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			m := newJSONMachine(t, h, v, jsonConfig(plugins.JSONMode{AnyValue: tt.anyValue}))
			ids := bytesOf(tt.text)
			want := tt.accepted
			if want < 0 {
				want = len(ids)
			}
			got, next := m.drive(ids)
			require.Equal(t, want, got, "accepted bytes of %q", tt.text)
			assert.False(t, next[idControl], "a control token is never allowed")
			assert.False(t, next[idEmpty], "an empty piece is never allowed")
			if want < len(ids) {
				return
			}
			assert.Equal(t, tt.complete, next[idEOG], "end of generation after %q", tt.text)
			if tt.complete && !tt.anyValue {
				assert.Equal(t, []int32{idEOG}, allowedIDs(next), "after a whole object only the end of generation")
			}
		})
	}
}

// TestJSONPieces: multi-byte pieces are judged whole, from several states.
func TestJSONPieces(t *testing.T) {
	h := newHost(t, host.NewConfig())
	v := jsonVocab()
	tests := []struct {
		prefix  string
		allowed []string
		masked  []string
	}{
		{"", []string{`{"`, `{}`, `  `, "\n  "}, []string{`"a"`, `12`, `true`, `[]`, ` the`, `":`}},
		{`{`, []string{`"a"`, `"}`, `":`, `  `, `": {"`, `","`}, []string{`{"`, `}}`, ` the`, `{}`, `]}`, `12`}},
		{`{"a":`, []string{`true`, `false`, `null`, `12`, `-0`, `"a"`, `": {"`, `{}`, `[]`, `{"`, `  `},
			[]string{`.5`, `e5`, `]}`, `}}`, ` the`, `:`}},
		{`{"a":1`, []string{`.5`, `e5`, `12`, `, "`, `  `, `}`}, []string{`]}`, `}}`, `true`, `-0`}},
		{`{"a":[1`, []string{`]}`, `, "`, `12`, `]`}, []string{`}}`, `]]`, `[]`, `}`}},
		{`{"a":"`, []string{`12`, ` the`, `\u00`, "\u00e9", `"}`, `","`, `e5`, `  `}, []string{"\n  ", "\n", `"a"`}},
		{`{"a":"\`, []string{`"a"`, `"}`, `","`, `n`, `/`, `\u00`}, []string{`12`, ` the`, `x`}},
		{`{"a":"\u`, []string{`12`, `e5`, `F`}, []string{`\u00`, `.5`, `g`}},
		{`{"a":"\u1`, []string{`12`}, []string{`"a"`}},
		{"{\"a\":\"\xc3", []string{"\xa9"}, []string{"\u00e9", `"a"`, "\xc3"}},
	}
	for _, tt := range tests {
		t.Run(tt.prefix, func(t *testing.T) {
			m := newJSONMachine(t, h, v, jsonConfig(plugins.JSONMode{}))
			got, next := m.drive(bytesOf(tt.prefix))
			require.Equal(t, len(tt.prefix), got)
			for _, p := range tt.allowed {
				if p == "" {
					continue
				}
				id := idByte0 + int32(p[0])
				if len(p) > 1 {
					id = multiID(t, p)
				}
				assert.True(t, next[id], "%q after %q", p, tt.prefix)
			}
			for _, p := range tt.masked {
				if p == "" {
					continue
				}
				id := idByte0 + int32(p[0])
				if len(p) > 1 {
					id = multiID(t, p)
				}
				assert.False(t, next[id], "%q after %q", p, tt.prefix)
			}
		})
	}
}

// TestJSONLimits: the whitespace run and the nesting depth are capped.
func TestJSONLimits(t *testing.T) {
	h := newHost(t, host.NewConfig())
	v := jsonVocab()
	m := newJSONMachine(t, h, v, jsonConfig(plugins.JSONMode{}))
	got, next := m.drive(bytesOf("{" + strings.Repeat(" ", 32)))
	require.Equal(t, 33, got, "the default run is 32")
	assert.False(t, next[idByte0+' '])
	assert.True(t, next[idByte0+'"'])

	m = newJSONMachine(t, h, v, `{"eog":[0],"max_whitespace":3}`)
	got, next = m.drive(bytesOf("{ "))
	require.Equal(t, 2, got)
	assert.True(t, next[multiID(t, "  ")], "1 + 2 spaces")
	assert.False(t, next[multiID(t, "\n  ")], "1 + 3 whitespace bytes")
	got, _ = m.drive(bytesOf(`  "a": "    "`))
	assert.Equal(t, 13, got, "spaces in a string do not count, and a run restarts")

	m = newJSONMachine(t, h, v, `{"eog":[0],"max_depth":2}`)
	got, next = m.drive(bytesOf(`{"a":[`))
	require.Equal(t, 6, got)
	assert.False(t, next[idByte0+'['])
	assert.False(t, next[idByte0+'{'])
	assert.False(t, next[multiID(t, "[]")])
	assert.True(t, next[idByte0+'1'])
}

// TestJSONBroken: a token the processor masked but the chain chose anyway
// ends the turn with an error; the next turn starts afresh.
func TestJSONBroken(t *testing.T) {
	h := newHost(t, host.NewConfig())
	v := jsonVocab()
	m := newJSONMachine(t, h, v, jsonConfig(plugins.JSONMode{}))
	m.mask()
	m.accept(idByte0 + 'x')
	_, err := m.s.Sample(make([]float32, v.Size()))
	require.ErrorIs(t, err, host.ErrPluginFailed)
	assert.Contains(t, string(m.s.Log()[0]), "does not continue the JSON text: id 123")
	require.NoError(t, m.s.Reset(2, []int32{5}))
	m.next = nil
	got, _ := m.drive(bytesOf(`{}`))
	assert.Equal(t, 2, got)
}

// TestJSONNullControl: "control": null (a vocabulary without control
// tokens, marshalled from a nil slice) is no control ids.
func TestJSONNullControl(t *testing.T) {
	h := newHost(t, host.NewConfig())
	m := newJSONMachine(t, h, jsonVocab(), `{"eog":[0],"control":null}`)
	got, next := m.drive(bytesOf(`{}`))
	assert.Equal(t, 2, got)
	assert.Equal(t, []int32{idEOG}, allowedIDs(next))
}

// TestJSONBadConfig: the end-of-generation ids are required and checked.
func TestJSONBadConfig(t *testing.T) {
	h := newHost(t, host.NewConfig())
	v := jsonVocab()
	for _, cfg := range []string{``, `{}`, `{"eog":[]}`, `{"eog":null}`, `{"eog":[9999]}`, `{"eog":[-1]}`, `{"eog":"0"}`,
		`{"eog":[0],"control":[1,]}`, `{"eog":[0],"max_depth":0}`, `{"eog":[0],"max_depth":2000}`,
		`{"eog":[0],"any_value":1}`, `{"eog":[0],"format":"json"}`} {
		p, err := h.Load(t.Context(), wasm(t, "json"), host.LoadOptions{Config: []byte(cfg)})
		if err != nil {
			assert.ErrorIs(t, err, host.ErrBadConfig, cfg)
			continue
		}
		s, err := host.NewSampler(v, load(t, h, "greedy", ""), p)
		require.NoError(t, err)
		err = s.Reset(1, nil)
		assert.ErrorIs(t, err, host.ErrBadConfig, cfg)
		_ = s.Close()
	}
}

// TestJSONBudget: with max_tokens, a turn that runs out of tokens still
// ends with a whole object, whatever the logits say, and (where the
// budget holds "{}" and one more token) by end of generation: the budget's
// last token is kept for it, so a closed value is a "stop".
func TestJSONBudget(t *testing.T) {
	h := newHost(t, host.NewConfig())
	v := jsonVocab()
	for _, budget := range []int{2, 3, 5, 8, 13, 40} {
		for seed := range uint64(20) {
			cfg := jsonConfig(plugins.JSONMode{MaxTokens: budget})
			s, err := host.NewSampler(v, load(t, h, "standard", `{"temperature":1.5,"top_k":0}`), load(t, h, "json", cfg))
			require.NoError(t, err)
			require.NoError(t, s.Reset(seed, []int32{5}))
			r := abi.NewRNG(seed)
			var text []byte
			ended := false
			for range budget {
				logits := randomLogits(&r, v.Size())
				logits[idEOG] -= 3 // no early ends: the budget is under test
				id, err := s.Sample(logits)
				require.NoError(t, err)
				if id == idEOG {
					ended = true
					break
				}
				s.Accept(id)
				text = append(text, v.Piece(id)...)
			}
			require.NoError(t, s.Close())
			var obj map[string]any
			require.NoError(t, json.Unmarshal(text, &obj), "budget %d seed %d: %q", budget, seed, text)
			if budget >= 3 {
				assert.True(t, ended, "budget %d seed %d: %q not ended by end of generation", budget, seed, text)
			}
		}
	}
}
