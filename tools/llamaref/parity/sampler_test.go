package parity

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/hybridgroup/yzma/pkg/llama"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/internal/plugins/sampler/standard"
	"github.com/realizar-host/realizar-host/tools/llamaref/internal/reftest"
)

// The standard sampler's issue-23 stages against llama.cpp's own samplers
// (llama_sampler_init_top_n_sigma, _xtc, _temp_ext, _mirostat) on the
// same logit vectors: after the stage, the same candidates with the same
// probabilities (|Δp| <= 1e-6), and the same token drawn.
//
// The two RNGs differ, so this side is fed llama.cpp's uniforms
// (standard.Chain.SetUniforms): every llama.cpp sampler here draws from
// its own std::mt19937, seeded with the seed it was given, through
// libstdc++'s generate_canonical — XTC's coin one 32-bit output as a
// float, the draw (llama_sampler_dist, and Mirostat's
// std::discrete_distribution) two outputs as a double. mt19937 below
// replays those streams; the draws agreeing on every vector checks the
// replay.

// samplerVectors is the number of logit vectors per stage.
const samplerVectors = 1000

// pTolerance is the largest |Δp| allowed between the two sides.
const pTolerance = 1e-6

// mt19937 is the 32-bit Mersenne Twister as std::mt19937.
type mt19937 struct {
	s [624]uint32
	i int
}

func newMT19937(seed uint32) *mt19937 {
	m := &mt19937{i: 624}
	m.s[0] = seed
	for i := 1; i < 624; i++ {
		m.s[i] = 1812433253*(m.s[i-1]^(m.s[i-1]>>30)) + uint32(i)
	}
	return m
}

func (m *mt19937) next() uint32 {
	if m.i == 624 {
		for i := range 624 {
			y := m.s[i]&0x80000000 | m.s[(i+1)%624]&0x7fffffff
			v := m.s[(i+397)%624] ^ y>>1
			if y&1 != 0 {
				v ^= 0x9908b0df
			}
			m.s[i] = v
		}
		m.i = 0
	}
	y := m.s[m.i]
	m.i++
	y ^= y >> 11
	y ^= y << 7 & 0x9d2c5680
	y ^= y << 15 & 0xefc60000
	return y ^ y>>18
}

// float is std::uniform_real_distribution<float>(0, 1): libstdc++'s
// generate_canonical<float, 24>, one output.
func (m *mt19937) float() float64 {
	f := float32(m.next()) / 0x1p32
	if f >= 1 {
		f = math.Nextafter32(1, 0)
	}
	return float64(f)
}

// double is generate_canonical<double, 53> (uniform_real_distribution<
// double>, discrete_distribution): two outputs, the first the low part.
func (m *mt19937) double() float64 {
	lo := float64(m.next())
	d := (lo + float64(m.next())*0x1p32) / 0x1p64
	if d >= 1 {
		d = math.Nextafter(1, 0)
	}
	return d
}

func TestMT19937(t *testing.T) {
	m := newMT19937(5489) // the standard's 10,000th output check
	for range 9999 {
		m.next()
	}
	assert.Equal(t, uint32(4123659995), m.next())
}

// llamaSteps applies llama.cpp's samplers, in order, to logits (in id
// order, unsorted, as llama_sampler_sample builds the array) and returns
// each remaining candidate's probability and the selected id.
func llamaSteps(smpls []llama.Sampler, logits []float32) (map[int32]float64, int32) {
	data := make([]llama.TokenData, len(logits))
	for i, l := range logits {
		data[i] = llama.TokenData{Id: llama.Token(i), Logit: l}
	}
	arr := llama.TokenDataArray{Data: &data[0], Size: uint64(len(data)), Selected: -1}
	for _, s := range smpls {
		llama.SamplerApply(s, &arr)
	}
	out := unsafe.Slice(arr.Data, arr.Size)
	probs := map[int32]float64{}
	for _, d := range out {
		if d.P > 0 {
			probs[int32(d.Id)] = float64(d.P)
		}
	}
	if arr.Selected < 0 {
		return probs, -1
	}
	return probs, int32(out[arr.Selected].Id)
}

// chainStep runs ch over logits (full logits) and returns the
// probabilities of the candidates it chose among and the chosen id.
func chainStep(ch *standard.Chain, logits []float32) (map[int32]float64, int32) {
	id := ch.Sample(-1, nil, append([]float32(nil), logits...), len(logits))
	ids, vals, temp := ch.Candidates()
	p := make([]float64, len(vals))
	sum := abi.Softmax(p, vals, temp)
	probs := map[int32]float64{}
	for i, v := range p {
		if v > 0 {
			probs[ids[i]] = v / sum
		}
	}
	return probs, id
}

// newChain is the native standard chain of config over nVocab ids, turn
// started, fed uniforms by u.
func newChain(t *testing.T, config string, nVocab int, u func() float64) *standard.Chain {
	t.Helper()
	cfg, err := standard.ParseConfig([]byte(config))
	require.NoError(t, err, config)
	ch, err := standard.NewChain(cfg, nVocab)
	require.NoError(t, err, config)
	ch.Reset(1, nil)
	ch.SetUniforms(u)
	return ch
}

// samePick compares one vector's outcome on both sides: the candidates
// (ids with p > 0), their probabilities and the chosen id.
func samePick(t *testing.T, what string, wantP map[int32]float64, wantID int32, gotP map[int32]float64, gotID int32) {
	t.Helper()
	require.Equal(t, len(wantP), len(gotP), "%s: candidates", what)
	for id, p := range wantP {
		q, ok := gotP[id]
		require.True(t, ok, "%s: id %d is llama.cpp's candidate only", what, id)
		require.InDelta(t, p, q, pTolerance, "%s: p of id %d", what, id)
	}
	require.Equal(t, wantID, gotID, "%s: the drawn id", what)
}

// gaussLogits are n logits N(0, scale²) from r.
func gaussLogits(r *rand.Rand, n int, scale float64) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(scale * r.NormFloat64())
	}
	return out
}

// stageCase is one parameter set of a stage: this side's config and
// llama.cpp's samplers (the stage seeded with seed, the draw with seed+1).
type stageCase struct {
	config string
	llama  func(seed uint32) []llama.Sampler
	// uniforms replays the uniforms llama.cpp draws for one vector, in
	// order, from the stage's stream (stage) and the draw's (dist).
	uniforms func(stage, dist *mt19937) []float64
}

// sortAll is llama.cpp's top-k keeping all n candidates: a sort, so that
// llama_sampler_dist, which draws in the array's order, walks the
// candidates in this side's order (by logit; where top-n-sigma or XTC
// leaves the array unsorted, a draw in id order would pick another token
// for the same uniform).
func sortAll(n int32) llama.Sampler { return llama.SamplerInitTopK(n) }

// distOnly: the stage draws nothing; the draw one double.
func distOnly(_, dist *mt19937) []float64 { return []float64{dist.double()} }

// runStage runs each case over its share of samplerVectors vectors of
// nVocab logits from gen, and returns how many of them changed (given
// the logits and llama.cpp's probabilities) judges the stage to have
// changed: the test's check that its vectors exercise the stage.
func runStage(t *testing.T, cases []stageCase, nVocab int, gen func(r *rand.Rand) []float32,
	changed func(logits []float32, probs map[int32]float64) bool) int {
	reftest.Lib(t) // the libraries loaded: llama's samplers bound
	r := rand.New(rand.NewPCG(23, 1))
	hits := 0
	for k, c := range cases {
		seed := uint32(1000 + 2*k)
		smpls := c.llama(seed)
		t.Cleanup(func() {
			for _, s := range smpls {
				llama.SamplerFree(s)
			}
		})
		stage, dist := newMT19937(seed), newMT19937(seed+1)
		var pending []float64
		ch := newChain(t, c.config, nVocab, func() float64 {
			require.NotEmpty(t, pending, "%s: a uniform llama.cpp did not draw", c.config)
			u := pending[0]
			pending = pending[1:]
			return u
		})
		for v := range samplerVectors / len(cases) {
			logits := gen(r)
			wantP, wantID := llamaSteps(smpls, logits)
			pending = c.uniforms(stage, dist)
			gotP, gotID := chainStep(ch, logits)
			require.Empty(t, pending, "%s vector %d: uniforms llama.cpp drew and this side did not", c.config, v)
			samePick(t, fmt.Sprintf("%s vector %d", c.config, v), wantP, wantID, gotP, gotID)
			if changed(logits, wantP) {
				hits++
			}
		}
	}
	return hits
}

// TestSamplerTopNSigma: top-n-sigma (first in the chain: its statistics
// over every logit), then the draw at T = 1.
func TestSamplerTopNSigma(t *testing.T) {
	var cases []stageCase
	for _, n := range []float32{0.5, 1, 1.5, 2.5} {
		cases = append(cases, stageCase{
			config: fmt.Sprintf(`{"samplers":["top_n_sigma"],"top_n_sigma":%v}`, n),
			llama: func(seed uint32) []llama.Sampler {
				return []llama.Sampler{llama.SamplerInitTopNSigma(n), sortAll(512), llama.SamplerInitDist(seed + 1)}
			},
			uniforms: distOnly,
		})
	}
	masked := runStage(t, cases, 512, func(r *rand.Rand) []float32 { return gaussLogits(r, 512, 0.5+3*r.Float64()) },
		func(logits []float32, probs map[int32]float64) bool { return len(probs) < len(logits) })
	assert.Equal(t, samplerVectors, masked, "every vector loses candidates")
}

// TestSamplerXTC: XTC's coin from its own stream, then the draw at T = 1.
// Probabilities and thresholds are float32-exact, so that the float
// comparisons of llama.cpp and the float64 ones here meet the same values.
func TestSamplerXTC(t *testing.T) {
	var cases []stageCase
	for _, pt := range [][2]float32{{0.5, 0.0625}, {1, 0.125}, {0.75, 0.25}, {1, 0.03125}} {
		cases = append(cases, stageCase{
			config: fmt.Sprintf(`{"samplers":["xtc"],"xtc_probability":%v,"xtc_threshold":%v}`, pt[0], pt[1]),
			llama: func(seed uint32) []llama.Sampler {
				return []llama.Sampler{llama.SamplerInitXTC(pt[0], pt[1], 0, seed), sortAll(256), llama.SamplerInitDist(seed + 1)}
			},
			uniforms: func(stage, dist *mt19937) []float64 { return []float64{stage.float(), dist.double()} },
		})
	}
	cut := runStage(t, cases, 256, func(r *rand.Rand) []float32 { return gaussLogits(r, 256, 1+4*r.Float64()) },
		func(logits []float32, probs map[int32]float64) bool { return len(probs) < len(logits) })
	assert.Greater(t, cut, samplerVectors/4, "XTC removes the top choices of many vectors")
	assert.Less(t, cut, samplerVectors, "and the coin keeps them in others")
}

// TestSamplerDynatemp: the dynamic temperature (llama_sampler_temp_ext),
// then the draw.
func TestSamplerDynatemp(t *testing.T) {
	var cases []stageCase
	for _, c := range [][3]float32{{0.75, 0.5, 1}, {1, 0.25, 2}, {0.5, 1, 0.5}, {1.25, 0.75, 0}} {
		cases = append(cases, stageCase{
			config: fmt.Sprintf(`{"samplers":["temperature"],"temperature":%v,"dynatemp_range":%v,"dynatemp_exponent":%v}`, c[0], c[1], c[2]),
			llama: func(seed uint32) []llama.Sampler {
				return []llama.Sampler{llama.SamplerInitTempExt(c[0], c[1], c[2]), llama.SamplerInitDist(seed + 1)}
			},
			uniforms: distOnly,
		})
	}
	runStage(t, cases, 256, func(r *rand.Rand) []float32 { return gaussLogits(r, 256, 0.5+3*r.Float64()) },
		func([]float32, map[int32]float64) bool { return false })
}

// TestSamplerMirostat: Mirostat (v1) after the temperature, as llama.cpp's
// common sampler chains it for mirostat 1 (temp, then mirostat with m =
// 100), over one turn per case: mu carries from vector to vector on both
// sides, and the candidates Mirostat keeps each step (its k) show that it
// agrees. Mirostat draws from its own stream, and only among two
// candidates or more (std::discrete_distribution of one draws nothing):
// the replay hands out a double whenever the chain asks.
func TestSamplerMirostat(t *testing.T) {
	const nVocab = 1000
	var cases []stageCase
	for _, c := range [][3]float32{{0.8, 5, 0.1}, {1, 3, 0.2}, {1.5, 6, 0.05}, {0.6, 4, 0.3}} {
		cases = append(cases, stageCase{
			config: fmt.Sprintf(`{"mirostat":1,"temperature":%v,"mirostat_tau":%v,"mirostat_eta":%v}`, c[0], c[1], c[2]),
			llama: func(seed uint32) []llama.Sampler {
				return []llama.Sampler{llama.SamplerInitTemp(c[0]), llama.SamplerInitMirostat(nVocab, seed, c[1], c[2], 100)}
			},
		})
	}
	reftest.Lib(t) // the libraries loaded: llama's samplers bound
	r := rand.New(rand.NewPCG(23, 2))
	sizes := map[string]int{}
	for k, c := range cases {
		seed := uint32(2000 + k)
		smpls := c.llama(seed)
		t.Cleanup(func() {
			for _, s := range smpls {
				llama.SamplerFree(s)
			}
		})
		stream := newMT19937(seed)
		drawn := 0
		ch := newChain(t, c.config, nVocab, func() float64 { drawn++; return stream.double() })
		for v := range samplerVectors / len(cases) {
			logits := gaussLogits(r, nVocab, 0.5+2.5*r.Float64())
			wantP, wantID := llamaSteps(smpls, logits)
			before := drawn
			gotP, gotID := chainStep(ch, logits)
			what := fmt.Sprintf("%s vector %d", c.config, v)
			if len(wantP) == 1 {
				require.Equal(t, before, drawn, "%s: one candidate, no uniform", what)
			}
			samePick(t, what, wantP, wantID, gotP, gotID)
			switch n := len(wantP); {
			case n == 1:
				sizes["1"]++
			case n <= 100:
				sizes["2-100"]++
			default:
				sizes[">100"]++
			}
		}
	}
	t.Logf("Mirostat's k over %d vectors: %v", samplerVectors, sizes)
	assert.Greater(t, sizes["2-100"], samplerVectors/4, "the vectors exercise the truncation")
}
