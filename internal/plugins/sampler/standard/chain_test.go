package standard

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/abi"
)

func TestChooseTopN(t *testing.T) {
	tests := []struct {
		config string
		want   int
	}{
		{``, 40},                            // defaults: penalties off
		{`{"repeat_penalty":1.1}`, 40 + 64}, // every window id may be lowered
		{`{"frequency_penalty":0.5,"repeat_last_n":8}`, 48},
		{`{"temperature":0,"repeat_penalty":1.1}`, 1 + 64}, // greedy needs one
		{`{"top_k":0}`, 0},                         // all candidates
		{`{"top_k":4096,"repeat_penalty":1.1}`, 0}, // over MaxTopN
		{`{"repeat_penalty":0.9}`, 0},              // raises logits
		{`{"presence_penalty":-0.5}`, 0},
		{`{"logit_bias":{"5":1}}`, 0},                       // raises a logit
		{`{"logit_bias":{"5":-1,"6":false}}`, 42},           // lowers two
		{`{"repeat_last_n":-1,"repeat_penalty":1.2}`, 1040}, // the whole context: n_vocab bounds the lowered ids
		{`{"repeat_last_n":0,"repeat_penalty":1.2}`, 40},    // penalties off
		{`{"top_n_sigma":1}`, 0},                            // its mean and deviation are over all logits
		{`{"temperature":0,"dynatemp_range":0.5}`, 40},      // dynamic: not greedy
		{`{"xtc_probability":0.5,"dynatemp_range":0.5}`, 40},
	}
	for _, tt := range tests {
		cfg, err := ParseConfig([]byte(tt.config))
		require.NoError(t, err, tt.config)
		c, err := NewChain(cfg, 1000)
		require.NoError(t, err, tt.config)
		assert.Equal(t, tt.want, c.TopN(), tt.config)
	}
}

// TestSampleAllocates: a step allocates nothing, in either mode.
func TestSampleAllocates(t *testing.T) {
	r := abi.NewRNG(1)
	logits := make([]float32, 5000)
	for i := range logits {
		logits[i] = float32(10 * r.Uniform())
	}
	for _, config := range []string{``, `{"typical_p":0.9,"repeat_penalty":1.1}`, `{"top_k":0,"typical_p":0.9}`, `{"logit_bias":{"3":1}}`,
		`{"top_k":0,"top_n_sigma":1,"xtc_probability":0.5,"dynatemp_range":0.3}`} {
		cfg, err := ParseConfig([]byte(config))
		require.NoError(t, err)
		c, err := NewChain(cfg, len(logits))
		require.NoError(t, err)
		c.Reset(1, []int32{1, 2, 3})
		n := c.TopN()
		ids, vals := make([]int32, n), make([]float32, n)
		region := make([]float32, len(logits))
		allocs := testing.AllocsPerRun(20, func() {
			var id int32
			if n > 0 {
				for i := range ids {
					ids[i], vals[i] = int32(i), logits[i]
				}
				abi.SortCandidates(ids, vals)
				id = c.Sample(5, ids, vals, n)
			} else {
				copy(region, logits)
				id = c.Sample(5, nil, region, len(region))
			}
			if id < 0 {
				t.Fatal("no token")
			}
		})
		assert.Zero(t, allocs, config)
	}
}

func TestParseLogitBias(t *testing.T) {
	inf := float32(math.Inf(-1))
	tests := []struct {
		in   string
		want []Bias
		ok   bool
	}{
		{`{}`, []Bias{}, true},
		{`[]`, []Bias{}, true},
		{`{"15": -100, "7": 2.5}`, []Bias{{15, -100}, {7, 2.5}}, true},
		{`[[15, -100], [7, false]]`, []Bias{{15, -100}, {7, inf}}, true},
		{`{"x": 1}`, nil, false},
		{`{"1": true}`, nil, false},
		{`[[1]]`, nil, false},
		{`[[1, 2, 3]]`, nil, false},
		{`{"1": 1,}`, nil, false},
		{`{"-1": 1}`, nil, false},
		{`{"12345678901": 1}`, nil, false},
		{`5`, nil, false},
	}
	for _, tt := range tests {
		got, err := parseLogitBias([]byte(tt.in))
		if !tt.ok {
			assert.ErrorIs(t, err, ErrConfig, tt.in)
			continue
		}
		require.NoError(t, err, tt.in)
		assert.Equal(t, tt.want, got, tt.in)
	}
}

// FuzzParseLogitBias: never panics; accepted ids are non-negative.
func FuzzParseLogitBias(f *testing.F) {
	for _, s := range []string{`{}`, `{"1":2}`, `[[1,false]]`, `[[1,-1e3],[2,0.5]]`, `{"1":`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		got, err := parseLogitBias(in)
		if err != nil {
			return
		}
		for _, b := range got {
			if b.ID < 0 {
				t.Fatalf("negative id from %q", in)
			}
		}
	})
}

// fullChain is NewChain forced into the full-logits mode.
func fullChain(t *testing.T, cfg Config, nVocab int) *Chain {
	t.Helper()
	c, err := NewChain(cfg, nVocab)
	require.NoError(t, err)
	c.topN = 0
	c.ids, c.ids2, c.tidx = make([]int32, nVocab), make([]int32, nVocab), make([]int32, nVocab)
	c.vals, c.vals2 = make([]float32, nVocab), make([]float32, nVocab)
	c.probs, c.tkeys = make([]float64, nVocab), make([]float64, nVocab)
	c.rkeys, c.rkeys2 = make([]uint64, nVocab), make([]uint64, nVocab)
	return c
}

// TestTopNIsExact: where chooseTopN picks the top-N mode, it chooses the
// same tokens as the full-logits mode (the argument in chooseTopN's doc),
// with penalties and negative biases lowering ids inside and outside the
// top N, on a stream where the penalised ids are often the best.
func TestTopNIsExact(t *testing.T) {
	const n = 300
	for _, config := range []string{
		`{"repeat_penalty":1.5,"frequency_penalty":0.3,"presence_penalty":0.2,"repeat_last_n":16}`,
		`{"top_k":5,"repeat_penalty":3,"repeat_last_n":8,"logit_bias":{"0":-5,"1":-2,"2":false}}`,
		`{"temperature":0,"frequency_penalty":2,"repeat_last_n":4}`,
		`{"top_k":3,"typical_p":0.8,"top_p":0.7,"presence_penalty":1.5,"repeat_last_n":32}`,
	} {
		cfg, err := ParseConfig([]byte(config))
		require.NoError(t, err)
		top, err := NewChain(cfg, n)
		require.NoError(t, err)
		require.Positive(t, top.TopN(), config)
		full := fullChain(t, cfg, n)
		prompt := []int32{0, 1, 2, 3, 0, 1}
		top.Reset(9, prompt)
		full.Reset(9, prompt)
		r := abi.NewRNG(2)
		prev := int32(-1)
		for step := range 3000 {
			logits := make([]float32, n)
			for i := range logits {
				logits[i] = float32(4 * r.Uniform())
			}
			// the recent tokens are the best raw logits: penalties decide
			for k := range 6 {
				logits[int(r.Next()%12)] = float32(5 + k)
			}
			ids, vals := make([]int32, n), append([]float32(nil), logits...)
			for i := range ids {
				ids[i] = int32(i)
			}
			abi.SortCandidates(ids, vals)
			tn := top.TopN()
			a := top.Sample(prev, ids[:tn], vals[:tn], tn)
			b := full.Sample(prev, nil, logits, n)
			require.Equal(t, b, a, "%s step %d", config, step)
			prev = a
		}
	}
}

// chainWith is a Chain over cfg's JSON with the candidates ids/vals
// (contract order) in its scratch.
func chainWith(t *testing.T, config string, vals []float32) *Chain {
	t.Helper()
	cfg, err := ParseConfig([]byte(config))
	require.NoError(t, err)
	c, err := NewChain(cfg, len(vals))
	require.NoError(t, err)
	for i, v := range vals {
		c.ids[i], c.vals[i] = int32(i), v
	}
	return c
}

// TestSigma: top-n-sigma's threshold is the maximum minus n deviations of
// the finite logits (population deviation, -Inf skipped); candidates below
// it become -Inf in their place.
func TestSigma(t *testing.T) {
	negInf := float32(math.Inf(-1))
	vals := []float32{4, 2, 0, -2, negInf} // mean 1, deviation sqrt(5)
	c := chainWith(t, `{"top_n_sigma":1,"top_k":0}`, vals)
	c.sigmaCut = c.sigmaCutOf(vals)
	assert.InDelta(t, 4-math.Sqrt(5), c.sigmaCut, 1e-15)
	c.sigma(len(vals))
	assert.Equal(t, []float32{4, 2, negInf, negInf, negInf}, c.vals[:len(vals)])

	nan := float32(math.NaN())
	assert.True(t, math.IsNaN(c.sigmaCutOf([]float32{1, nan, 0})), "a NaN logit keeps every candidate")
	assert.Equal(t, math.Inf(-1), c.sigmaCutOf([]float32{negInf, negInf}))
}

// TestXTC: with the coin at or under xtc_probability, every candidate at or
// above the threshold but the last of them is dropped; over it, nothing.
func TestXTC(t *testing.T) {
	l2 := float32(math.Log(2))
	vals := []float32{3 * l2, 2 * l2, l2, 0} // p = 8/15, 4/15, 2/15, 1/15
	for _, tt := range []struct {
		config string
		u      float64
		want   []int32
	}{
		{`{"xtc_probability":0.5,"xtc_threshold":0.1}`, 0.5, []int32{2, 3}},
		{`{"xtc_probability":0.5,"xtc_threshold":0.1}`, 0.51, []int32{0, 1, 2, 3}},
		{`{"xtc_probability":1,"xtc_threshold":0.2}`, 0.9, []int32{1, 2, 3}},
		{`{"xtc_probability":1,"xtc_threshold":0.5}`, 0, []int32{0, 1, 2, 3}}, // one above: kept
	} {
		c := chainWith(t, tt.config, vals)
		n := c.xtc(len(vals), 1, tt.u)
		assert.Equal(t, tt.want, c.ids[:n], "%s u=%v", tt.config, tt.u)
	}
}

// TestDynamicTemperature: equal candidates (normalized entropy 1) take
// temperature + range; one certain candidate (entropy 0) max(0,
// temperature - range); between, the exponent shapes the map.
func TestDynamicTemperature(t *testing.T) {
	negInf := float32(math.Inf(-1))
	c := chainWith(t, `{"temperature":1,"dynatemp_range":0.5}`, []float32{1, 1, 1, 1})
	assert.InDelta(t, 1.5, c.dynamicTemperature(4), 1e-12)
	c = chainWith(t, `{"temperature":0.2,"dynatemp_range":0.5}`, []float32{1, negInf, negInf})
	assert.Equal(t, 0.0, c.dynamicTemperature(3))
	// two of four equally likely: H = ln 2, normalized 1/2
	c = chainWith(t, `{"temperature":1,"dynatemp_range":0.5,"dynatemp_exponent":2}`, []float32{1, 1, negInf, negInf})
	assert.InDelta(t, 0.5+1*0.25, c.dynamicTemperature(4), 1e-12)
	assert.Equal(t, 1.0, pow(0, 0))
	assert.Equal(t, 0.0, pow(0, 1.5))
	assert.InDelta(t, math.Pow(0.3, 1.7), pow(0.3, 1.7), 1e-15)
}

func TestParseSamplers(t *testing.T) {
	tests := []struct {
		in   string
		want []string
		ok   bool
	}{
		{`["top_k", "temp"]`, []string{"top_k", "temp"}, true},
		{` [ ] `, []string{}, true},
		{`top_k;temp`, []string{"top_k", "temp"}, true},
		{` top_k ; temp `, []string{"top_k", "temp"}, true},
		{``, []string{}, true},
		{`top_k;;temp`, []string{"top_k", "", "temp"}, true}, // "" is refused by Check
		{`["top_k",]`, nil, false},
		{`["top_k" "temp"]`, nil, false},
		{`["a\"b"]`, nil, false}, // no escapes
		{`["top_k"] x`, nil, false},
		{`[5]`, nil, false},
		{`{"top_k":1}`, nil, false},
	}
	for _, tt := range tests {
		got, err := parseSamplers([]byte(tt.in))
		if !tt.ok {
			var re *RangeError
			require.ErrorAs(t, err, &re, tt.in)
			assert.Equal(t, "samplers", re.Key)
			continue
		}
		require.NoError(t, err, tt.in)
		assert.Equal(t, tt.want, got, tt.in)
	}
}

// TestStages: llama.cpp's names and aliases in any ASCII case; unknown,
// not offered, twice and a late penalties are *SamplerError.
func TestStages(t *testing.T) {
	_, err := stages([]string{"Top-K", "topp", "nucleus", "typ"})
	require.Error(t, err, "top_p twice") // topp and nucleus
	got, err := stages([]string{"dry", "penalties", "TOP_N_SIGMA", "top-k", "typical_p", "nucleus", "minp", "xtc", "temp"})
	require.NoError(t, err)
	assert.Equal(t, "deskypmxt", string(got))
	got, err = stages(nil)
	require.NoError(t, err)
	assert.Equal(t, "edskypmxt", string(got))
	for _, tt := range []struct {
		names []string
		why   string
	}{
		{[]string{"top_k", "mirostat"}, "is unknown"},
		{[]string{"adaptive_p"}, "is not offered"},
		{[]string{"infill"}, "is not offered"},
		{[]string{"temp", "temperature"}, "is listed twice"},
		{[]string{"top_k", "penalties"}, "must come before every stage but dry"},
		{[]string{"top_\u212a"}, "is unknown"}, // ASCII case only (the Kelvin sign is not k)
	} {
		_, err := stages(tt.names)
		var se *SamplerError
		require.ErrorAs(t, err, &se, tt.names)
		assert.Equal(t, tt.why, se.Why, tt.names)
		assert.ErrorIs(t, err, ErrConfig)
	}
}

// TestPlan: the order decides the top-N mode, the selection of top_k and
// where top-n-sigma's statistics come from.
func TestPlan(t *testing.T) {
	tests := []struct {
		config           string
		order            string
		topN             int
		kEarly, sigmaAll bool
	}{
		{``, "kpmt", 40, true, false},
		{`{"samplers":["temperature","top_k","min_p"]}`, "tkm", 40, true, false},
		{`{"samplers":["top_p","top_k","temperature"]}`, "pkt", 0, false, false},
		{`{"samplers":["dynatemp","top_k"]}`, "", 0, false, false}, // refused below
		{`{"samplers":["temp","top_k"],"dynatemp_range":0.5}`, "tk", 0, false, false},
		{`{"samplers":["top_k","top_n_sigma","temp"],"top_n_sigma":1}`, "kst", 0, true, false},
		{`{"samplers":["top_n_sigma","temp","top_k"],"top_n_sigma":1}`, "stk", 0, true, true},
		{`{"samplers":[]}`, "", 0, false, false},
		{`{"samplers":"top_k;temp","temperature":0}`, "kt", 1, true, false},
		{`{"samplers":"top_k","temperature":0}`, "k", 40, true, false}, // no temperature: T = 1, not greedy
	}
	for _, tt := range tests {
		cfg, err := ParseConfig([]byte(tt.config))
		require.NoError(t, err, tt.config)
		c, err := NewChain(cfg, 1000)
		if tt.config == `{"samplers":["dynatemp","top_k"]}` {
			assert.ErrorIs(t, err, ErrConfig)
			continue
		}
		require.NoError(t, err, tt.config)
		assert.Equal(t, tt.order, string(c.order), tt.config)
		assert.Equal(t, tt.topN, c.TopN(), tt.config)
		assert.Equal(t, tt.kEarly, c.kEarly, tt.config)
		assert.Equal(t, tt.sigmaAll, c.sigmaAll, tt.config)
	}
}

// TestTemperatureFirst: a stage after the temperature sees the
// probabilities at T: min-p 0.3 keeps p1/p0 = e^-1 at T = 1, drops it at
// T = 0.5 (e^-2).
func TestTemperatureFirst(t *testing.T) {
	for _, tt := range []struct {
		config string
		keep   int
	}{
		{`{"samplers":["min_p","temperature"],"min_p":0.3,"temperature":0.5}`, 2},
		{`{"samplers":["temperature","min_p"],"min_p":0.3,"temperature":0.5}`, 1},
	} {
		c := chainWith(t, tt.config, []float32{1, 0, -5})
		seen := map[int32]bool{}
		c.Reset(1, nil)
		for range 200 {
			seen[c.Sample(-1, nil, []float32{1, 0, -5}, 3)] = true
		}
		assert.Len(t, seen, tt.keep, tt.config)
	}
}

// FuzzParseSamplers: never panics; what it accepts, Check either accepts
// or refuses with an error wrapping ErrConfig.
func FuzzParseSamplers(f *testing.F) {
	for _, s := range []string{`["top_k","temp"]`, `top_k;temp`, `[]`, `["a",`, `;;`, `[" penalties "]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		names, err := parseSamplers(in)
		if err != nil {
			return
		}
		cfg := DefaultConfig()
		cfg.Samplers = names
		if err := cfg.Check(10); err != nil && !errors.Is(err, ErrConfig) {
			t.Fatalf("%q: %v", in, err)
		}
	})
}

// zipf are n logits whose probabilities at temperature t follow Zipf's law
// with exponent s: p_i ∝ (i+1)^-s, so Mirostat's estimate is s exactly.
func zipf(n int, s, t float64) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(-s * t * math.Log(float64(i+1)))
	}
	return out
}

// TestMirostat: over Zipf logits (s = 1.5, T = 0.7) the step keeps k =
// (ε·2^mu / (1 - n^-ε))^(1/s) candidates, ε = s - 1, and moves mu by
// -eta·(surprise - tau); llama.cpp's m = 100 estimate, and the top-k past
// the 100 candidates it is estimated from (a larger mu).
func TestMirostat(t *testing.T) {
	for _, tt := range []struct {
		config string
		n      int
		mu     float64
	}{
		{`{"mirostat":1,"temperature":0.7}`, 4000, 10},                                     // k = 64
		{`{"mirostat":1,"temperature":0.7,"mirostat_tau":7,"mirostat_eta":0.3}`, 4000, 14}, // 410: selected again
		{`{"mirostat":1,"temperature":0.7,"mirostat_tau":7}`, 1000, 14},                    // 415: sorted
	} {
		n := tt.n
		cfg, err := ParseConfig([]byte(tt.config))
		require.NoError(t, err)
		c, err := NewChain(cfg, n)
		require.NoError(t, err)
		require.Zero(t, c.TopN(), "full logits")
		require.Empty(t, c.order)
		c.Reset(3, nil)
		// float32 logits: the estimate is s to float32's precision
		s, eps := 1.5, 0.5
		want := math.Pow(eps*math.Pow(2, tt.mu)/(1-math.Pow(float64(n), -eps)), 1/s)
		logits := zipf(n, s, 0.7)
		id := c.Sample(-1, nil, append([]float32(nil), logits...), n)
		ids, vals, temp := c.Candidates()
		assert.Equal(t, int(want), len(ids), "%s: k = %v", tt.config, want)
		assert.Equal(t, 0.7, temp)
		assert.Equal(t, logits[:len(vals)], vals)
		sum := abi.Softmax(make([]float64, len(vals)), vals, temp)
		p := math.Exp((float64(logits[id])-float64(logits[0]))/0.7) / sum
		wantMu := tt.mu - cfg.MirostatEta*(-math.Log2(p)-cfg.MirostatTau)
		assert.InDelta(t, wantMu, c.mu, 1e-9, tt.config)
	}
}

// TestMirostatEdges: one candidate, -Inf neighbours and a flat
// distribution keep one candidate without a uniform (as llama.cpp's
// discrete_distribution of one); temperature 0 is greedy; the filters and
// the penalties do not run; mirostat 2 is refused, naming the sampler.
func TestMirostatEdges(t *testing.T) {
	negInf := float32(math.Inf(-1))
	for _, tt := range []struct {
		name   string
		logits []float32
		k      int
	}{
		{"one", []float32{1}, 1},
		{"masked", []float32{3, negInf, negInf, negInf}, 1}, // b_0 = +Inf
		{"flat", make([]float32, 2000), 1},                  // s = 0: (2^10/1999)^Inf = 0 -> 1
	} {
		cfg, err := ParseConfig([]byte(`{"mirostat":1,"temperature":1,"top_k":2,"repeat_penalty":2}`))
		require.NoError(t, err)
		c, err := NewChain(cfg, len(tt.logits))
		require.NoError(t, err)
		assert.False(t, c.penOn, "penalties off under mirostat")
		c.Reset(1, nil)
		c.SetUniforms(func() float64 { t.Fatal(tt.name, ": a uniform drawn"); return 0 })
		assert.Equal(t, int32(0), c.Sample(-1, nil, append([]float32(nil), tt.logits...), len(tt.logits)), tt.name)
		ids, _, _ := c.Candidates()
		assert.Len(t, ids, tt.k, tt.name)
	}
	cfg, err := ParseConfig([]byte(`{"mirostat":1,"temperature":0}`))
	require.NoError(t, err)
	c, err := NewChain(cfg, 10)
	require.NoError(t, err)
	assert.Equal(t, 1, c.TopN(), "greedy")
	var re *RangeError
	cfg.Mirostat = 2
	require.ErrorAs(t, cfg.Check(10), &re)
	assert.Equal(t, "config: mirostat must be 0 or 1 (2 is the mirostat-v2 sampler)", re.Error())
}

// TestSetUniforms: the chain draws XTC's coin and then the draw from the
// source given, in that order.
func TestSetUniforms(t *testing.T) {
	cfg, err := ParseConfig([]byte(`{"samplers":["xtc","temperature"],"xtc_probability":0.5,"xtc_threshold":0.1,"temperature":1}`))
	require.NoError(t, err)
	c, err := NewChain(cfg, 4)
	require.NoError(t, err)
	c.Reset(1, nil)
	l2 := float32(math.Log(2))
	logits := []float32{3 * l2, 2 * l2, l2, 0} // p = 8/15, 4/15, 2/15, 1/15
	for _, tt := range []struct {
		u    []float64
		want int32
	}{
		{[]float64{0.5, 0}, 2},    // XTC on: 2 and 3 left, the draw takes the first
		{[]float64{0.6, 0.99}, 3}, // off: the last
		{[]float64{0.6, 0.54}, 1}, // off: just past the first's mass
	} {
		u := tt.u
		c.SetUniforms(func() float64 { v := u[0]; u = u[1:]; return v })
		assert.Equal(t, tt.want, c.Sample(-1, nil, append([]float32(nil), logits...), 4), tt.u)
		assert.Empty(t, u, "both uniforms drawn")
	}
}
