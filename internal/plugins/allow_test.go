package plugins_test

import (
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

// The ABI 2 example processor allow, built with each SDK (C, Go, Rust,
// AssemblyScript): through the real host, greedy after it only ever picks
// a listed token or the end-of-generation token it found through
// token_attrs; with once, each listed token at most once, counting every
// token accepted since the previous step.
func TestAllowProcessor(t *testing.T) {
	for _, name := range []string{"allow", "allow-go", "allow-rust", "allow-as"} {
		t.Run(name, func(t *testing.T) { testAllow(t, name) })
	}
}

func testAllow(t *testing.T, name string) {
	h := newHost(t, host.NewConfig())
	greedy := load(t, h, "greedy", "")
	v := enginetest.NewTokenVocab(1000, nil, 999)
	set := []int32{3, 17, 42}

	t.Run("fixed set", func(t *testing.T) {
		p := load(t, h, name, `{"tokens":[3, 17,42]}`)
		assert.Equal(t, abi.Version2, p.ABI())
		s := newSampler(t, v, greedy, p)
		require.NoError(t, s.Reset(1, []int32{5}))
		r := abi.NewRNG(1)
		for range 50 {
			logits := randomLogits(&r, v.Size())
			got, err := s.Sample(logits)
			require.NoError(t, err)
			assert.Contains(t, append(set, 999), got)
			s.Accept(got)
		}
	})

	for _, tc := range []struct {
		name   string
		config string
		last   error // what the fourth step gives, after the three listed tokens
	}{
		{"once, then end of generation", `{"tokens":[3,17,42],"once":true}`, nil},
		{"once, nothing left", `{"tokens":[3,17,42],"once":true,"eog":false}`, engine.ErrNoTokenAllowed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSampler(t, v, greedy, load(t, h, name, tc.config))
			for turn := range 2 { // each turn starts from the whole set again
				require.NoError(t, s.Reset(uint64(turn), nil))
				logits := make([]float32, v.Size())
				logits[42], logits[17], logits[3], logits[999] = 4, 3, 2, 1
				got, err := s.Sample(logits)
				require.NoError(t, err)
				require.Equal(t, int32(42), got)
				// Two tokens accepted before the next step (as a prefill or a
				// forced continuation would): both are denied.
				s.Accept(42)
				s.Accept(17)
				logits = make([]float32, v.Size())
				logits[42], logits[17], logits[3], logits[999] = 4, 3, 2, 1
				got, err = s.Sample(logits)
				require.NoError(t, err)
				require.Equal(t, int32(3), got)
				s.Accept(3)
				got, err = s.Sample(make([]float32, v.Size()))
				if tc.last != nil {
					require.ErrorIs(t, err, tc.last)
					assert.Contains(t, err.Error(), "processor "+name+" 1.0.0")
					continue
				}
				require.NoError(t, err)
				require.Equal(t, int32(999), got)
			}
		})
	}

	for _, tc := range []struct{ name, config string }{
		{"no tokens", `{}`},
		{"id out of range", `{"tokens":[1000]}`},
		{"not an array", `{"tokens":"3"}`},
		{"negative id", `{"tokens":[-1]}`},
		{"unknown key", `{"tokens":[1],"eos":true}`},
		{"eog not a bool", `{"tokens":[1],"eog":1}`},
	} {
		t.Run("refuses "+tc.name, func(t *testing.T) {
			p, err := h.Load(context.Background(), wasm(t, name), host.LoadOptions{Config: []byte(tc.config)})
			require.NoError(t, err)
			s := newSampler(t, v, greedy, p)
			require.ErrorIs(t, s.Reset(0, nil), host.ErrBadConfig)
		})
	}
}

// Through engine.Session: a turn under allow with once generates each
// listed token at most once and then ends at the end-of-generation token
// the plugin found itself; without eog it ends with an error wrapping
// engine.ErrNoTokenAllowed instead of sampling from an empty set.
func TestAllowSession(t *testing.T) {
	h := newHost(t, host.NewConfig())
	table := []string{"", "a", "b", "c", "d", "e", "f", "g", "</s>"}
	v := enginetest.NewVocab(table, 8)
	for _, tc := range []struct {
		config string
		stop   engine.StopReason
		err    error
	}{
		{`{"tokens":[2,5,7],"once":true}`, engine.StopEOG, nil},
		{`{"tokens":[2,5,7],"once":true,"eog":false}`, engine.StopNone, engine.ErrNoTokenAllowed},
	} {
		t.Run(tc.config, func(t *testing.T) {
			fwd, err := forward.NewSequenceForward(enginetest.NewCountingSequence(v.Size()), forward.Options{ModelContext: 32})
			require.NoError(t, err)
			smp, err := host.NewSampler(v, load(t, h, "greedy", ""), load(t, h, "allow", tc.config))
			require.NoError(t, err)
			sess, err := engine.NewSession(fwd, v, engine.WithSampler(smp))
			require.NoError(t, err)
			defer sess.Close()
			turn, err := sess.Generate([]int32{1}, engine.GenerateConfig{MaxTokens: 10})
			gen := turn.Tokens[1:]
			if tc.err != nil {
				require.ErrorIs(t, err, tc.err)
				assert.ElementsMatch(t, []int32{2, 5, 7}, gen)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.stop, turn.Stop)
			assert.ElementsMatch(t, []int32{2, 5, 7, 8}, gen)
			assert.Equal(t, int32(8), gen[len(gen)-1])
		})
	}
}
