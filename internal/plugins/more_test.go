package plugins_test

import (
	"context"
	"math"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/abi/guest"
	"github.com/realizar-host/realizar-host/engine"
	"github.com/realizar-host/realizar-host/engine/enginetest"
	"github.com/realizar-host/realizar-host/forward"
	"github.com/realizar-host/realizar-host/host"
	"github.com/realizar-host/realizar-host/internal/plugins"
)

const ln2 = 0x1.62e42fefa39efp-1

// loggedMu reads the mu values mirostat-v2 logged (log_mu).
func loggedMu(t *testing.T, s *host.Sampler) []float64 {
	t.Helper()
	var out []float64
	for _, line := range strings.Split(string(s.Log()[0]), "\n") {
		_, hex, ok := strings.Cut(line, "mu=")
		if !ok {
			continue
		}
		b, err := strconv.ParseUint(hex, 0, 64)
		require.NoError(t, err)
		out = append(out, math.Float64frombits(b))
	}
	return out
}

// TestMirostatUniform: over four equally likely tokens every draw has a
// surprise of exactly 2 bits, so mu moves from 2·tau by -eta·(2 - tau)
// each step: 10 → 10.3 → 10.6 ...
func TestMirostatUniform(t *testing.T) {
	h := newHost(t, host.NewConfig())
	v := enginetest.NewTokenVocab(50, nil)
	s := newSampler(t, v, load(t, h, "mirostat-v2", `{"log_mu":true,"temperature":1}`))
	require.NoError(t, s.Reset(3, []int32{1}))
	logits := make([]float32, v.Size())
	for i := range logits {
		logits[i] = negInf
	}
	copy(logits[10:], []float32{1, 1, 1, 1})
	for range 5 {
		id := sample(t, s, logits)
		assert.True(t, id >= 10 && id < 14, "id %d", id)
	}
	mu := 10.0
	var want []float64
	for range 5 {
		mu = mu - 0.1*(2-5)
		want = append(want, mu)
	}
	got := loggedMu(t, s)
	require.Len(t, got, 5)
	for i := range want {
		assert.InDelta(t, want[i], got[i], 1e-12, "step %d", i)
	}
}

// TestMirostatUpdate: on a random stream, mu follows the paper's update
// mu ← mu - eta·(surprise - tau), surprise = -log2 p(chosen) among the
// kept candidates (recomputed here, bit for bit, from the chosen ids).
func TestMirostatUpdate(t *testing.T) {
	h := newHost(t, host.NewConfig())
	v := enginetest.NewTokenVocab(500, nil)
	const tau, eta, temp = 3.0, 0.2, 0.9
	s := newSampler(t, v, load(t, h, "mirostat-v2", `{"log_mu":true,"mirostat_tau":3,"mirostat_eta":0.2,"temperature":0.9}`))
	require.NoError(t, s.Reset(77, []int32{1}))
	r := abi.NewRNG(8)
	mu := 2 * tau
	for step := range 200 {
		logits := randomLogits(&r, v.Size())
		id := sample(t, s, logits)
		// the kept set and the chosen token's probability, as specified
		m := float64(logits[argmax(logits)])
		e := make([]float64, v.Size())
		sum := 0.0
		for i, l := range logits {
			e[i] = abi.Exp((float64(l) - m) / temp)
			sum += e[i]
		}
		thr := abi.Exp(-mu * ln2)
		var ids []int32
		var vals []float32
		for i := range logits {
			if e[i]/sum >= thr {
				ids, vals = append(ids, int32(i)), append(vals, logits[i])
			}
		}
		abi.SortCandidates(ids, vals)
		probs := make([]float64, len(ids))
		ksum := abi.Softmax(probs, vals, temp)
		j := -1
		for k, x := range ids {
			if x == id {
				j = k
			}
		}
		require.GreaterOrEqual(t, j, 0, "step %d: id %d is outside the kept set %v", step, id, ids)
		surprise := -guest.Log(probs[j]/ksum) / ln2
		mu = mu - eta*(surprise-tau)
		got := loggedMu(t, s)
		require.Len(t, got, step+1)
		require.Equal(t, math.Float64bits(mu), math.Float64bits(got[step]), "step %d", step)
	}
}

// TestDRY: the processor penalises exactly the token that would continue a
// repeated sequence, by multiplier·base^(length - allowed_length), and
// nothing across a sequence breaker.
func TestDRY(t *testing.T) {
	h := newHost(t, host.NewConfig())
	v := enginetest.NewTokenVocab(100, map[int32]string{90: "\n", 91: "a:b"})
	const a, b, c, x, y, z = 1, 2, 3, 4, 5, 6
	tests := []struct {
		name   string
		prompt []int32
		want   map[int32]float32 // penalties
	}{
		{"a b c ... a b: c continues a repeat of 2", []int32{a, b, c, x, y, a, b}, map[int32]float32{c: 0.8}},
		{"a b c x ... a b c: x continues a repeat of 3", []int32{a, b, c, x, y, z, a, b, c}, map[int32]float32{x: 0.8 * 1.75}},
		{"repeat of 1 is allowed", []int32{a, b, x, y, a}, nil},
		{"two earlier continuations", []int32{a, b, c, y, a, b, x, z, a, b}, map[int32]float32{c: 0.8, x: 0.8}},
		{"a breaker token stops the repeat", []int32{a, b, c, x, a, 90, b}, nil},
		{"a token containing a breaker", []int32{a, b, c, x, 91, a, b}, map[int32]float32{c: 0.8}},
		{"no repeat", []int32{a, b, c, x, y, z}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSampler(t, v, load(t, h, "greedy", ""), load(t, h, "dry", ""))
			require.NoError(t, s.Reset(1, tt.prompt))
			r := abi.NewRNG(4)
			raw := randomLogits(&r, v.Size())
			logits := append([]float32(nil), raw...)
			_, err := s.Sample(logits)
			require.NoError(t, err)
			for id := range logits {
				want := raw[id]
				if p, ok := tt.want[int32(id)]; ok {
					want = raw[id] - p
				}
				assert.Equal(t, want, logits[id], "id %d", id)
			}
		})
	}
}

// TestDRYOutputJoinsHistory: accepted tokens extend the history, and the
// penalty grows with the repeat length (the base's power).
func TestDRYOutputJoinsHistory(t *testing.T) {
	h := newHost(t, host.NewConfig())
	v := enginetest.NewTokenVocab(20, nil)
	s := newSampler(t, v, load(t, h, "greedy", ""), load(t, h, "dry", `{"dry_multiplier":1,"dry_base":2}`))
	require.NoError(t, s.Reset(1, []int32{1, 2, 3, 4, 5, 9}))
	steer := func(id int32) []float32 { // greedy picks id; returns the edited logits
		logits := make([]float32, v.Size())
		logits[id] = 100
		got, err := s.Sample(logits)
		require.NoError(t, err)
		require.Equal(t, id, got)
		s.Accept(got)
		return logits
	}
	steer(1)
	l := steer(2) // history ... 9 1: after "1" comes 2 (repeat of 1: allowed)
	assert.Equal(t, float32(0), l[3])
	l = steer(3) // history ... 9 1 2: "1 2" repeats, 3 continues it: 1·2^0
	assert.Equal(t, float32(100-1), l[3])
	l = steer(4) // "1 2 3": 4 gets 1·2^1
	assert.Equal(t, float32(100-2), l[4])
	l = steer(5) // "1 2 3 4": 5 gets 2^2
	assert.Equal(t, float32(100-4), l[5])
}

// TestRepetition: a pattern repeated `repeats` times stops; fewer does not.
func TestRepetition(t *testing.T) {
	h := newHost(t, host.NewConfig())
	for _, tt := range []struct {
		name   string
		pieces []string
		config string
		want   engine.StopReason
		gen    int
	}{
		{"one token four times", []string{"x", "a", "a", "a", "a", "b"}, ``, engine.StopByPolicy, 5},
		{"two tokens four times", []string{"the", " cat", "the", " cat", "the", " cat", "the", " cat", "!"}, ``, engine.StopByPolicy, 8},
		{"three times is not enough", []string{"the", " cat", "the", " cat", "the", " cat", "!"}, ``, engine.StopEOG, 8},
		{"min_pattern 2 ignores one token", []string{"a", "a", "a", "a", "b"}, `{"min_pattern":2}`, engine.StopEOG, 6},
		{"repeats 2", []string{"p", "q", "p", "q", "r"}, `{"repeats":2}`, engine.StopByPolicy, 4},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// distinct ids for repeated pieces would defeat the test: map
			// equal pieces to one id through a scripted model
			s := newRepeatScript(t, tt.pieces)
			got := s.generate(t, stopPlugin(t, h, s.vocab, "repetition", tt.config), 100)
			assert.Equal(t, tt.want, got.turn.Stop)
			assert.Equal(t, tt.gen, got.turn.Generated)
		})
	}
}

// newRepeatScript is a script whose equal pieces share one id.
func newRepeatScript(t testing.TB, pieces []string) script {
	t.Helper()
	table := []string{""}
	index := map[string]int32{}
	var order []int32
	for _, p := range pieces {
		id, ok := index[p]
		if !ok {
			id = int32(len(table))
			index[p] = id
			table = append(table, p)
		}
		order = append(order, id)
	}
	eog := int32(len(table))
	table = append(table, "</s>")
	vocab := enginetest.NewVocab(table, eog)
	step := enginetest.NewCountingSequence(vocab.Size())
	step.Next = func(_ int32, pos int) int32 { // position 0 is the prompt
		if pos < len(order) {
			return order[pos]
		}
		return eog
	}
	fwd, err := forward.NewSequenceForward(step, forward.Options{ModelContext: len(order) + 2})
	require.NoError(t, err)
	return script{vocab, fwd}
}

// TestMaxTime: max-time stops on the first token checked once max_ms have
// passed on the host's clock (a fake one here).
func TestMaxTime(t *testing.T) {
	var now atomic.Int64
	h := newHost(t, host.NewConfig().WithNanotime(now.Load))
	s := newScript(t, []string{"a", "b", "c", "d", "e"})
	p := stopPlugin(t, h, s.vocab, "max-time", `{"max_ms":5}`)
	sess, err := engine.NewSession(s.fwd, s.vocab, engine.WithSampler(enginetest.Greedy{}))
	require.NoError(t, err)
	turn, err := sess.Generate([]int32{0}, engine.GenerateConfig{MaxTokens: 100, Stop: p,
		OnToken: func(id int32, _ []byte) error {
			now.Add(2_000_000) // 2 ms per token
			return nil
		}})
	require.NoError(t, err)
	// checks at t = 0, 2, 4, 6 ms after the turn start: the fourth stops
	assert.Equal(t, engine.StopByPolicy, turn.Stop)
	assert.Equal(t, 4, turn.Generated)

	for _, bad := range []string{`{"max_ms":-1}`, `{"max_ms":"x"}`, `{"max_ms":1.5}`} {
		p, err := h.Load(context.Background(), wasm(t, "max-time"), host.LoadOptions{Config: []byte(bad)})
		require.NoError(t, err)
		sp, err := host.NewStopPolicy(s.vocab, p)
		require.NoError(t, err)
		assert.ErrorIs(t, sp.Reset(), host.ErrBadConfig, bad)
		_ = sp.Close()
	}
}

// TestRegex: a match stops and is trimmed; hold_back keeps it unreleased;
// a match longer than hold_back leaks its released start.
func TestRegex(t *testing.T) {
	h := newHost(t, host.NewConfig())
	for _, tt := range []struct {
		name   string
		pieces []string
		config string
		want   string
		stop   engine.StopReason
	}{
		{"match across tokens", []string{"The answer is ", "4", "2", ".", " More"}, `{"pattern":"[0-9]+\\."}`, "The answer is ", engine.StopByPolicy},
		{"include", []string{"The answer is ", "4", "2", ".", " More"}, `{"pattern":"[0-9]+\\.","include":true}`, "The answer is 42.", engine.StopByPolicy},
		{"no match", []string{"abc", "def"}, `{"pattern":"x+y"}`, "abcdef", engine.StopEOG},
		{"a longer match leaks", []string{"<", "aaaa", "aaaa", ">", "tail"}, `{"pattern":"<a+>","hold_back":4}`, "<aaaa", engine.StopByPolicy},
		{"alternatives", []string{"User:", " hi"}, `{"pattern":"(?i)user:|assistant:"}`, "", engine.StopByPolicy},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newScript(t, tt.pieces)
			got := s.generate(t, stopPlugin(t, h, s.vocab, "regex", tt.config), 100)
			assert.Equal(t, tt.want, got.text())
			assert.Equal(t, tt.stop, got.turn.Stop)
		})
	}
	for _, bad := range []string{`{}`, `{"pattern":"("}`, `{"pattern":"a*"}`, `{"pattern":"a","hold_back":-1}`} {
		p, err := h.Load(context.Background(), wasm(t, "regex"), host.LoadOptions{Config: []byte(bad)})
		require.NoError(t, err)
		sp, err := host.NewStopPolicy(enginetest.NewTokenVocab(10, nil), p)
		require.NoError(t, err)
		assert.ErrorIs(t, sp.Reset(), host.ErrBadConfig, bad)
		_ = sp.Close()
	}
}

// TestBuiltin: every embedded plugin loads with its kind and its name, and
// the embedded bytes are the committed files.
func TestBuiltin(t *testing.T) {
	h := newHost(t, host.NewConfig())
	kinds := map[string]abi.Kind{"greedy": abi.KindSampler, "standard": abi.KindSampler, "strings": abi.KindStop,
		"mirostat-v2": abi.KindSampler, "dry": abi.KindProcessor, "repetition": abi.KindStop, "max-time": abi.KindStop, "json": abi.KindProcessor, "grammar": abi.KindProcessor, "lookup": abi.KindDrafter}
	require.ElementsMatch(t, plugins.Names(), []string{"greedy", "standard", "strings", "mirostat-v2", "dry", "repetition", "max-time", "json", "grammar", "lookup"})
	for _, name := range plugins.Names() {
		b, err := plugins.Builtin(name)
		require.NoError(t, err)
		assert.Equal(t, wasm(t, name), b, name)
		p, err := h.Load(context.Background(), b, host.LoadOptions{})
		require.NoError(t, err, name)
		assert.Equal(t, name, p.Meta().Name)
		assert.Equal(t, kinds[name], p.Kind(), name)
		limit := 32 << 10
		if name == plugins.StandardBuiltin { // the whole llama.cpp chain with its order as config
			limit = 40 << 10
		}
		if name != plugins.GrammarBuiltin { // the one Go build embedded
			assert.Less(t, len(b), limit, "%s: the embedded defaults are small", name)
		}
	}
	_, err := plugins.Builtin("standard-go")
	assert.ErrorIs(t, err, plugins.ErrUnknown)
}

// TestDRYBeforeStandard: the processor's edits reach a top-N sampler (the
// host selects the candidates from the edited logits).
func TestDRYBeforeStandard(t *testing.T) {
	h := newHost(t, host.NewConfig())
	v := enginetest.NewTokenVocab(100, nil)
	for _, name := range []string{"standard", "standard-go"} {
		s := newSampler(t, v, load(t, h, name, `{"temperature":0}`), load(t, h, "dry", `{"dry_multiplier":100}`))
		require.NoError(t, s.Reset(1, []int32{1, 2, 3, 4, 1, 2}))
		logits := make([]float32, v.Size())
		logits[3], logits[50] = 10, 9 // 3 would continue "1 2 3"
		assert.Equal(t, int32(50), sample(t, s, logits), name)
	}
}
