package host_test

import (
	"math"
	"slices"
	"sort"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/engine"
	"github.com/realizar-host/realizar-host/engine/enginetest"
	"github.com/realizar-host/realizar-host/host"
)

func newSampler(t testing.TB, v engine.Vocab, sampler *host.Plugin, processors ...*host.Plugin) *host.Sampler {
	t.Helper()
	s, err := host.NewSampler(v, sampler, processors...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// Good samplers agree with the native argmax, in both modes, at both
// vocabulary sizes (the guests grow their memory at init for the region).
func TestSamplersMatchArgmax(t *testing.T) {
	h := newHost(t, host.NewConfig())
	for _, g := range []struct{ name, module, config string }{
		{"wat-full", "greedy", ""}, {"wat-full-unrolled8", "greedy8", ""}, {"wat-top40", "topn", ""},
		{"go-full", "greedy_go", ""}, {"go-top40", "greedy_go", `{"top_n":"40"}`},
	} {
		for _, n := range []int{7, 32000, 151936} {
			t.Run(g.name+"/"+strconv.Itoa(n), func(t *testing.T) {
				s := newSampler(t, enginetest.NewTokenVocab(n, nil), load(t, h, g.module, host.LoadOptions{Config: []byte(g.config)}))
				require.NoError(t, s.Reset(1, []int32{1, 2}))
				for step := uint64(0); step < 5; step++ {
					logits := randomLogits(step, n)
					if step == 3 { // a tie: the lowest id wins
						logits[n-1], logits[n/2] = 50, 50
					}
					want := argmax(logits)
					got, err := s.Sample(logits)
					require.NoError(t, err)
					require.Equal(t, want, got, "step %d", step)
					s.Accept(got)
				}
			})
		}
	}
}

// probeTokens is what testdata/probe.wat must answer: see its header.
func probeTokens(seed uint64, n, steps int, offset, prompt0 int) []int32 {
	r := abi.NewRNG(seed ^ abi.RandomGetSalt)
	out := make([]int32, steps)
	for k := range out {
		out[k] = int32((int(r.Next()%uint64(n)) + k + offset + prompt0) % n)
	}
	return out
}

// The probe guest exercises config_get, prompt_get, vocab_size, WASI
// random_get (seeded from the turn seed) and fd_write (into the log).
func TestProbeImports(t *testing.T) {
	h := newHost(t, host.NewConfig())
	const n = 1000
	for _, tc := range []struct {
		config string
		offset int
	}{{"", 0}, {`{"offset": 3}`, 3}, {`{"offset": "5"}`, 5}} {
		s := newSampler(t, enginetest.NewTokenVocab(n, nil), load(t, h, "probe", host.LoadOptions{Config: []byte(tc.config)}))
		for turn, seed := range []uint64{42, 42, 7} {
			prompt := []int32{int32(100 + turn), 9}
			require.NoError(t, s.Reset(seed, prompt))
			want := probeTokens(seed, n, 20, tc.offset, 100+turn)
			logits := make([]float32, n)
			for k := range want {
				got, err := s.Sample(logits)
				require.NoError(t, err)
				require.Equal(t, want[k], got, "config %q turn %d step %d", tc.config, turn, k)
				s.Accept(got)
			}
		}
		assert.Contains(t, string(s.Log()[0]), "probe init\n")
	}
}

// A processor chain: ban sets the best token's logit to -inf, so greedy
// picks the second best; the edit lands in the caller's logits.
func TestProcessorChain(t *testing.T) {
	h := newHost(t, host.NewConfig())
	v := enginetest.NewTokenVocab(5000, map[int32]string{1234: "<bad>"})
	ban := load(t, h, "ban", host.LoadOptions{Config: []byte(`{"ban":"<bad>"}`)})
	s := newSampler(t, v, load(t, h, "greedy", host.LoadOptions{}), ban)
	require.NoError(t, s.Reset(0, []int32{1}))
	logits := randomLogits(5, v.Size())
	logits[1234] = 100
	logits[77] = 99
	got, err := s.Sample(logits)
	require.NoError(t, err)
	assert.Equal(t, int32(77), got)
	assert.Equal(t, negInf, logits[1234])

	_, err = host.NewSampler(v, ban)
	assert.ErrorIs(t, err, host.ErrKind, "a chain must end with a sampler")
	_, err = host.NewSampler(v, load(t, h, "greedy", host.LoadOptions{}), load(t, h, "greedy", host.LoadOptions{}))
	assert.ErrorIs(t, err, host.ErrKind, "only processors go before the sampler")
}

func TestSampleWrongLength(t *testing.T) {
	h := newHost(t, host.NewConfig())
	s := newSampler(t, enginetest.NewTokenVocab(10, nil), load(t, h, "greedy", host.LoadOptions{}))
	require.NoError(t, s.Reset(0, nil))
	_, err := s.Sample(make([]float32, 9))
	assert.Error(t, err)
}

// The stop-string policy, with the string split across tokens, overlapping
// a false start, and never arriving.
func TestStopStrings(t *testing.T) {
	h := newHost(t, host.NewConfig())
	p := load(t, h, "stopstr", host.LoadOptions{Config: []byte(`{"stop":"END"}`)})
	// max_piece is 8 bytes: longer pieces would be cut to the region size.
	sp, err := host.NewStopPolicy(enginetest.NewTokenVocab(10, map[int32]string{0: "12345678"}), p)
	require.NoError(t, err)
	defer sp.Close()
	cont := func(hold int) engine.Decision { return engine.Decision{Action: engine.Continue, HoldBack: hold} }
	trim := func(n int) engine.Decision { return engine.Decision{Action: engine.StopTrim, Trim: n} }
	for name, tc := range map[string]struct {
		pieces []string
		want   []engine.Decision
	}{
		"one token":        {[]string{"ab", "END"}, []engine.Decision{cont(0), trim(3)}},
		"split in three":   {[]string{"a", "E", "N", "D"}, []engine.Decision{cont(0), cont(1), cont(2), trim(3)}},
		"text after match": {[]string{"xEN", "D!?"}, []engine.Decision{cont(2), trim(5)}},
		"false start":      {[]string{"EN", "EN", "D"}, []engine.Decision{cont(2), cont(2), trim(3)}},
		"never":            {[]string{"E", "x", "EN", "d"}, []engine.Decision{cont(1), cont(0), cont(2), cont(0)}},
	} {
		t.Run(name, func(t *testing.T) {
			require.NoError(t, sp.Reset())
			for i, piece := range tc.pieces {
				d, err := sp.Check(int32(i), []byte(piece))
				require.NoError(t, err)
				assert.Equal(t, tc.want[i], d, "piece %d %q", i, piece)
			}
		})
	}
	_, err = h.Load(t.Context(), wasmFile(t, "stopstr"), host.LoadOptions{})
	require.NoError(t, err, "config is checked by the guest at init, not at load")
	noStop, err := host.NewStopPolicy(enginetest.NewTokenVocab(10, nil), load(t, h, "stopstr", host.LoadOptions{}))
	require.NoError(t, err)
	defer noStop.Close()
	assert.ErrorIs(t, noStop.Reset(), host.ErrBadConfig, "the guest refuses a missing stop string")
}

// The ABI clock is the Host's nanotime, so a test can fake it.
func TestFakeClock(t *testing.T) {
	var now int64
	h := newHost(t, host.NewConfig().WithNanotime(func() int64 { return now }))
	sp, err := host.NewStopPolicy(enginetest.NewTokenVocab(10, nil), load(t, h, "clock", host.LoadOptions{}))
	require.NoError(t, err)
	defer sp.Close()
	require.NoError(t, sp.Reset())
	d, err := sp.Check(1, []byte("a"))
	require.NoError(t, err)
	assert.Equal(t, engine.Continue, d.Action)
	now = 1000
	d, err = sp.Check(2, []byte("b"))
	require.NoError(t, err)
	assert.Equal(t, engine.StopKeep, d.Action)
}

// topN (through the top-N guest) picks the contract's best candidate even
// with NaN, -Inf and ties; checked against a full sort.
func TestTopNOrder(t *testing.T) {
	h := newHost(t, host.NewConfig())
	s := newSampler(t, enginetest.NewTokenVocab(300, nil), load(t, h, "topn", host.LoadOptions{}))
	require.NoError(t, s.Reset(0, nil))
	nan := float32(math.NaN())
	for seed := uint64(0); seed < 30; seed++ {
		logits := randomLogits(seed, 300)
		r := abi.NewRNG(seed + 100)
		for i := range logits {
			switch r.Next() % 8 {
			case 0:
				logits[i] = nan
			case 1:
				logits[i] = negInf
			case 2:
				logits[i] = 3 // many ties
			}
		}
		ids := make([]int32, len(logits))
		for i := range ids {
			ids[i] = int32(i)
		}
		sorted := slices.Clone(logits)
		sort.SliceStable(ids, func(a, b int) bool {
			return abi.Before(ids[a], sorted[ids[a]], ids[b], sorted[ids[b]])
		})
		got, err := s.Sample(slices.Clone(logits))
		require.NoError(t, err)
		require.Equal(t, ids[0], got)
	}
}
