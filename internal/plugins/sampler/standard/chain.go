package standard

import (
	"math"

	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/abi/guest"
)

// Chain is the standard sampler's state for one instance: its config, the
// penalty window and scratch sized at creation, so Sample allocates
// nothing. Not safe for concurrent use.
type Chain struct {
	cfg    Config
	nVocab int
	topN   int

	bias    []float32 // dense, n_vocab; nil without logit_bias
	biasIDs []int32   // distinct ids with a bias, in config order

	penOn    bool
	counts   []int32 // occurrences of each id in the window
	ring     []int32 // the window, when RepeatLastN > 0
	ringHead int
	ringLen  int
	distinct []int32 // ids with counts > 0

	ids, ids2, tidx []int32
	vals, vals2     []float32
	probs, tkeys    []float64
	rkeys, rkeys2   []uint64 // radix sort, full mode only

	sigmaCut float64 // top-n-sigma's threshold this step (full mode)

	order    []byte // the stages that run, in order (stage codes; no penalties or dry)
	kEarly   bool   // top-k comes before any stage that needs the candidates past it
	sigmaAll bool   // top-n-sigma comes before any stage that drops candidates

	mirostat bool      // Mirostat (v1) replaces stages 2-9
	mu       float64   // Mirostat's threshold, in bits
	mt       []float64 // Mirostat's t_i = Log((i+2)/(i+1)), i < MirostatM-1

	rng      abi.RNG
	uniforms func() float64 // SetUniforms; nil: rng
	lastN    int            // the candidates the last step chose among (Candidates)
	lastT    float64        // and their temperature
	ready    bool
}

// mirostatM is the number of candidates Mirostat estimates its Zipf
// exponent from (llama.cpp's m, which its common sampler fixes at 100).
const mirostatM = 100

// NewChain checks cfg and sizes a Chain for a vocabulary of nVocab ids.
func NewChain(cfg Config, nVocab int) (*Chain, error) {
	if err := cfg.Check(nVocab); err != nil {
		return nil, err
	}
	listed, err := stages(cfg.Samplers)
	if err != nil {
		return nil, err
	}
	cfg = neutralize(cfg, listed)
	c := &Chain{cfg: cfg, nVocab: nVocab, mirostat: cfg.Mirostat == 1}
	if c.mirostat {
		c.mt = make([]float64, mirostatM-1)
		for i := range c.mt {
			c.mt[i] = guest.Log(float64(i+2) / float64(i+1))
		}
	}
	if !c.mirostat {
		c.order, c.kEarly, c.sigmaAll = plan(cfg, listed)
	}
	penListed := hasStage(listed, stagePenalties)
	c.penOn = penListed && cfg.RepeatLastN != 0 && (cfg.RepeatPenalty != 1 || cfg.PresencePenalty != 0 || cfg.FrequencyPenalty != 0)
	for _, b := range cfg.LogitBias {
		if c.bias == nil {
			c.bias = make([]float32, nVocab)
		}
		if !containsID(c.biasIDs, b.ID) {
			c.biasIDs = append(c.biasIDs, b.ID)
		}
		c.bias[b.ID] = c.bias[b.ID] + b.Value
	}
	c.topN = c.chooseTopN()
	n := nVocab
	if c.topN > 0 {
		n = c.topN
	}
	c.ids, c.ids2, c.tidx = make([]int32, n), make([]int32, n), make([]int32, n)
	c.vals, c.vals2 = make([]float32, n), make([]float32, n)
	c.probs, c.tkeys = make([]float64, n), make([]float64, n)
	if c.topN == 0 {
		c.rkeys, c.rkeys2 = make([]uint64, n), make([]uint64, n)
	}
	if c.penOn {
		c.counts = make([]int32, nVocab)
		if cfg.RepeatLastN > 0 {
			c.ring = make([]int32, cfg.RepeatLastN)
			c.distinct = make([]int32, 0, cfg.RepeatLastN)
		} else {
			c.distinct = make([]int32, 0, nVocab)
		}
	}
	return c, nil
}

// neutralize turns off the values of the stages the order does not list:
// top_n_sigma 0, top_k 0, typical_p 1, top_p 1, min_p 0, xtc_probability
// 0, and temperature 1 without a dynamic range (the draw at T = 1).
// (Penalties are off through penOn.) With Mirostat every stage is off but
// the temperature, without a dynamic range.
func neutralize(cfg Config, listed []byte) Config {
	if cfg.Mirostat == 1 {
		cfg.TopNSigma, cfg.TopK, cfg.TypicalP, cfg.TopP, cfg.MinP, cfg.XTCProbability = 0, 0, 1, 1, 0, 0
		cfg.DynatempRange = 0
		cfg.RepeatPenalty, cfg.PresencePenalty, cfg.FrequencyPenalty = 1, 0, 0
		return cfg
	}
	off := func(st byte) bool { return !hasStage(listed, st) }
	if off(stageSigma) {
		cfg.TopNSigma = 0
	}
	if off(stageTopK) {
		cfg.TopK = 0
	}
	if off(stageTypical) {
		cfg.TypicalP = 1
	}
	if off(stageTopP) {
		cfg.TopP = 1
	}
	if off(stageMinP) {
		cfg.MinP = 0
	}
	if off(stageXTC) {
		cfg.XTCProbability = 0
	}
	if off(stageTemp) {
		cfg.Temperature, cfg.DynatempRange = 1, 0
	}
	return cfg
}

// plan is the order of the stages that run (listed and on: top_n_sigma >
// 0, top_k > 0, typical_p < 1, top_p < 1, min_p > 0, xtc_probability > 0,
// temperature listed); kEarly when top-k runs before typical-p, top-p,
// min-p, XTC and a dynamic temperature (so only the top_k best candidates
// matter: the top-N mode and a selection instead of a sort); sigmaAll when
// top-n-sigma runs before every stage that drops candidates (top-k,
// typical-p, top-p, min-p, XTC: its mean and deviation are then over every
// logit, in id order).
func plan(cfg Config, listed []byte) (order []byte, kEarly, sigmaAll bool) {
	wide, dropped := false, false // a stage that needs every candidate, one that drops some, so far
	for _, st := range listed {
		on := false
		switch st {
		case stageSigma:
			on = cfg.TopNSigma > 0
		case stageTopK:
			on = cfg.TopK > 0
		case stageTypical:
			on = cfg.TypicalP < 1
		case stageTopP:
			on = cfg.TopP < 1
		case stageMinP:
			on = cfg.MinP > 0
		case stageXTC:
			on = cfg.XTCProbability > 0
		case stageTemp:
			on = true
		}
		if !on {
			continue
		}
		order = append(order, st)
		switch st {
		case stageSigma:
			sigmaAll = !dropped
		case stageTopK:
			kEarly, dropped = !wide, true
		case stageTemp:
			wide = wide || cfg.DynatempRange > 0
		default:
			wide, dropped = true, true
		}
	}
	return order, kEarly, sigmaAll
}

func containsID(ids []int32, id int32) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// chooseTopN decides the input mode. The host can hand over the top N
// candidates of the raw logits (after processors) instead of all of them.
// That is exact when the top_k best adjusted candidates are sure to be
// among them:
//
//   - no adjustment may raise a logit (no positive logit_bias, no
//     repeat_penalty < 1, no negative presence or frequency penalty): an id
//     outside the raw top N then stays below every unadjusted id inside it;
//   - N = top_k + (the number of ids an adjustment may lower: every distinct
//     id of the penalty window, at most repeat_last_n, and every id with a
//     negative bias), so at least top_k inside ids are not lowered.
//
// Greedy (temperature 0 without a dynamic range) needs one candidate
// instead of top_k. Mirostat takes the full logits (its top-k is known
// only at the step). When N would exceed abi.MaxTopN, top_k is 0
// (disabled) or not kEarly in the order, the window is the whole context (repeat_last_n = -1) or
// top-n-sigma is on (its mean and deviation are over every logit), the
// sampler takes the full logits.
func (c *Chain) chooseTopN() int {
	cfg := c.cfg
	raises := cfg.RepeatPenalty < 1 || cfg.PresencePenalty < 0 || cfg.FrequencyPenalty < 0
	lowered := 0
	if c.penOn {
		lowered = cfg.RepeatLastN
		if cfg.RepeatLastN < 0 {
			lowered = c.nVocab
		}
	}
	for _, id := range c.biasIDs {
		switch b := c.bias[id]; {
		case b > 0:
			raises = true
		case b < 0:
			lowered++
		}
	}
	want := cfg.TopK
	if !c.kEarly {
		want = 0
	}
	if c.greedy() {
		want = 1
	} else if c.mirostat {
		want = 0
	}
	if want < 1 || (c.penOn && raises) || (len(c.biasIDs) > 0 && raises) || cfg.TopNSigma > 0 {
		return 0
	}
	if n := want + lowered; n <= abi.MaxTopN {
		return n
	}
	return 0
}

// greedy reports whether the chain picks its first candidate without a
// draw: temperature 0 and no dynamic temperature.
func (c *Chain) greedy() bool { return c.cfg.Temperature <= 0 && c.cfg.DynatempRange <= 0 }

// TopN is the mode for realizar_init: 0 for the full logits, else the
// number of candidates.
func (c *Chain) TopN() int { return c.topN }

// Reset starts a turn: the RNG from seed, the penalty window from the last
// repeat_last_n tokens of prompt (all of them for -1), Mirostat's mu at
// 2·mirostat_tau.
func (c *Chain) Reset(seed uint64, prompt []int32) {
	c.rng = abi.NewRNG(seed)
	c.mu = 2 * c.cfg.MirostatTau
	c.ready = true
	if !c.penOn {
		return
	}
	for _, id := range c.distinct {
		c.counts[id] = 0
	}
	c.distinct = c.distinct[:0]
	c.ringLen, c.ringHead = 0, 0
	if n := c.cfg.RepeatLastN; n > 0 && len(prompt) > n {
		prompt = prompt[len(prompt)-n:]
	}
	for _, id := range prompt {
		c.push(id)
	}
}

// push adds id (the newest token) to the penalty window.
func (c *Chain) push(id int32) {
	if !c.penOn || id < 0 || int(id) >= c.nVocab {
		return
	}
	if n := len(c.ring); n > 0 {
		if c.ringLen == n {
			c.countOut(c.ring[c.ringHead])
			c.ring[c.ringHead] = id
			c.ringHead++
			if c.ringHead == n {
				c.ringHead = 0
			}
		} else {
			at := c.ringHead + c.ringLen
			if at >= n {
				at -= n
			}
			c.ring[at] = id
			c.ringLen++
		}
	}
	if c.counts[id] == 0 {
		c.distinct = append(c.distinct, id)
	}
	c.counts[id]++
}

func (c *Chain) countOut(id int32) {
	c.counts[id]--
	if c.counts[id] != 0 {
		return
	}
	for k, x := range c.distinct {
		if x == id {
			last := len(c.distinct) - 1
			c.distinct[k] = c.distinct[last]
			c.distinct = c.distinct[:last]
			return
		}
	}
}

// penalize applies the repeat, frequency and presence penalties to a logit
// whose id occurs count > 0 times in the window, in float32 as llama.cpp
// does: the repeat penalty divides a positive logit and multiplies a
// non-positive one, once per distinct id; then
// logit - (count·frequency + presence).
func (c *Chain) penalize(l float32, count int32) float32 {
	if l <= 0 {
		l = float32(l * c.cfg.RepeatPenalty)
	} else {
		l = float32(l / c.cfg.RepeatPenalty)
	}
	return l - (float32(float32(count)*c.cfg.FrequencyPenalty) + c.cfg.PresencePenalty)
}

// Sample runs the chain and returns the chosen id (-1 before Reset or with
// no candidates). prev is the token accepted since the last call (-1 at the
// first step). In top-N mode ids and logits are the region's two halves and
// count the host's entry count; in full mode ids is nil and logits the
// n_vocab logits. The region is modified (the host never reads it back).
//
// The chain, each stage on the candidates left by the previous one; stages
// 2-8 run in the order of the samplers config (the default is the order
// below, llama.cpp's), those not listed or off not at all:
//
//  1. logit bias, then penalties (float32; when penalties is listed), then
//     the contract order; greedy (temperature listed and 0, no dynamic
//     range) returns the first candidate without drawing;
//  2. top-n-sigma (> 0, full logits): when no stage before it drops
//     candidates, over the adjusted logits in id order, else over the
//     candidates in their order, skipping -Inf, mean m = Σl/k and deviation
//     σ = Sqrt(Σ(l-m)²/k) in float64, the maximum M over the non-NaN ones;
//     a candidate whose logit is below M - top_n_sigma·σ becomes -Inf in
//     its place;
//  3. top-k: the first top_k (0 keeps all);
//  4. typical-p (< 1): p = Softmax(T)/sum, H = Σ -p·Log(p) over p > 0,
//     order by |-Log(p) - H| then position, keep up to the first cumulative
//     p > typical_p, back into the contract order;
//  5. top-p (< 1): p = Softmax(T)/sum; keep up to the first i with
//     Σ_{j<=i} p_j >= top_p;
//  6. min-p (> 0): keep the prefix with Softmax(T)_i >= min_p · Softmax_0;
//  7. XTC (xtc_probability > 0, two candidates or more): one uniform u; if
//     u <= xtc_probability, p = Softmax(T)/sum and, with j the last index
//     of the prefix with p >= xtc_threshold, drop the first j candidates;
//  8. the temperature sets T (1 before this stage, and throughout when it
//     is not listed) to temperature; with dynatemp_range > 0 and two
//     candidates or more, p = Softmax(T=1)/sum, H = Σ -p·Log(p) over p >
//     0, and T = lo + (hi - lo)·Pow(H / Log(n), dynatemp_exponent) with lo
//     = max(0, temperature - range), hi = temperature + range (Pow(x, e) =
//     Exp(e·Log(x)), 1 for e = 0, 0 for x = 0); T <= 0, or one candidate,
//     returns the first;
//  9. Softmax at T, one uniform, abi.Draw.
//
// Stages 4-8 are skipped when every candidate has probability 0. A stage
// after the temperature sees its probabilities at T, as llama.cpp's see
// the logits it has divided by T.
//
// With mirostat 1, stage 1 is the logit bias alone (greedy: temperature 0)
// and stages 2-9 are Mirostat's step at T = temperature (mirostatStep).
func (c *Chain) Sample(prev int32, ids []int32, logits []float32, count int) int32 {
	if !c.ready {
		guest.LogMsg(abi.LogError, "standard: sample before reset")
		return -1
	}
	c.push(prev)
	n := c.candidates(ids, logits, count)
	if n <= 0 {
		return -1
	}
	if c.greedy() {
		return c.first()
	}
	if c.mirostat {
		return c.mirostatStep(n, logits)
	}
	t := 1.0 // the temperature the stages see: 1 until the temperature stage
	for _, st := range c.order {
		switch st {
		case stageSigma:
			if !c.sigmaAll {
				c.sigmaCut = c.sigmaCutOf(c.vals[:n])
			}
			c.sigma(n)
		case stageTopK:
			n = min(n, c.cfg.TopK)
		case stageTypical:
			n = c.typical(n, t)
		case stageTopP:
			n = c.nucleus(n, t)
		case stageMinP:
			n = c.minimum(n, t)
		case stageXTC:
			if n >= 2 {
				n = c.xtc(n, t, c.uniform())
			}
		case stageTemp:
			t = c.cfg.Temperature
			if c.cfg.DynatempRange > 0 {
				if n < 2 {
					return c.first()
				}
				if t = c.dynamicTemperature(n); t <= 0 {
					return c.first()
				}
			}
		}
	}
	c.lastN, c.lastT = n, t
	sum := abi.Softmax(c.probs[:n], c.vals[:n], t)
	return c.ids[abi.Draw(c.probs[:n], sum, c.uniform())]
}

// first is the step's choice without a draw: the first candidate.
func (c *Chain) first() int32 {
	c.lastN, c.lastT = 1, 1
	return c.ids[0]
}

// uniform is the step's next uniform: the turn's RNG, or SetUniforms'.
func (c *Chain) uniform() float64 {
	if c.uniforms != nil {
		return c.uniforms()
	}
	return c.rng.Uniform()
}

// SetUniforms makes u the source of every uniform the chain draws from now
// on (XTC's coin, then the draw; Mirostat's draw), in place of the turn's
// seeded RNG, which Reset no longer restores; nil restores the RNG. For
// tests that feed another sampler's uniforms (llama.cpp's, whose RNG
// differs): u must return values in [0, 1).
func (c *Chain) SetUniforms(u func() float64) { c.uniforms = u }

// Candidates are the candidates the last Sample chose among, in contract
// order with their adjusted logits (after every stage; -Inf where
// top-n-sigma masked one), and the temperature t of their draw: their
// probabilities are abi.Softmax at t over the sum. One candidate (t = 1)
// when the step took the first without drawing. The slices are the
// chain's scratch, valid until the next Sample; empty before the first.
func (c *Chain) Candidates() (ids []int32, logits []float32, t float64) {
	return c.ids[:c.lastN], c.vals[:c.lastN], c.lastT
}

// ln2 is Log(2), for Mirostat's surprise in bits.
const ln2 = 0x1.62e42fefa39efp-1

// mirostatStep is Mirostat (v1) as llama.cpp's llama_sampler_mirostat at
// T = temperature, over the n candidates: the best min(MirostatM,
// n_vocab) of the adjusted full logits, in contract order. The Zipf
// exponent s = Σ t_i·b_i / Σ t_i² over i < min(MirostatM, n) - 1, with
// t_i = Log((i+2)/(i+1)) and b_i = (l_i - l_{i+1})/T (llama.cpp's
// Log(p_i/p_{i+1})); ε = s - 1; k = Pow(ε·Exp(mu·ln 2) / (1 - Exp(-ε·Log(
// n_vocab))), 1/s), truncated, at least 1 (NaN: 1) and at most n_vocab
// (llama.cpp converts k to a 32-bit int: from 2^31 on, x86's INT_MIN,
// which keeps one candidate; here every one); keep the best k candidates;
// p = Softmax(T) over them, one uniform and abi.Draw when k >= 2 (none
// for one, as llama.cpp's discrete_distribution), the chosen j; mu = mu -
// eta·(-Log(p_j/sum)/ln 2 - tau). When every kept probability is 0 the
// first is chosen and mu stays.
func (c *Chain) mirostatStep(n int, logits []float32) int32 {
	t := c.cfg.Temperature
	m := min(n, mirostatM)
	num, den := 0.0, 0.0
	for i := 0; i < m-1; i++ {
		b := (float64(c.vals[i]) - float64(c.vals[i+1])) / t
		num = num + c.mt[i]*b
		den = den + c.mt[i]*c.mt[i]
	}
	s := num / den
	eps := s - 1
	x := eps * abi.Exp(c.mu*ln2) / (1 - abi.Exp(-eps*guest.Log(float64(c.nVocab))))
	k := 1
	switch kf := pow(x, 1/s); {
	case kf >= float64(c.nVocab):
		k = c.nVocab
	case kf >= 1:
		k = int(kf)
	}
	switch {
	case k <= n:
		n = k
	case k*8 < c.nVocab:
		n = guest.SelectTop(logits, k, c.ids, c.vals)
	default:
		n = c.sortAll(logits)
		n = min(n, k)
	}
	probs := c.probs[:n]
	sum := abi.Softmax(probs, c.vals[:n], t)
	if !(sum > 0) {
		return c.first()
	}
	j := 0
	if n >= 2 {
		j = abi.Draw(probs, sum, c.uniform())
	}
	c.mu = c.mu - c.cfg.MirostatEta*(-guest.Log(probs[j]/sum)/ln2-c.cfg.MirostatTau)
	c.lastN, c.lastT = n, t
	return c.ids[j]
}

// sigmaCutOf is top-n-sigma's threshold over the adjusted logits (id order):
// the maximum minus top_n_sigma deviations (NaN when a logit is NaN, which
// keeps every candidate).
func (c *Chain) sigmaCutOf(logits []float32) float64 {
	mx, sum, k := math.Inf(-1), 0.0, 0
	for _, l := range logits {
		if float64(l) == math.Inf(-1) {
			continue
		}
		if float64(l) > mx {
			mx = float64(l)
		}
		sum = sum + float64(l)
		k++
	}
	if k == 0 {
		return math.Inf(-1)
	}
	mean, acc := sum/float64(k), 0.0
	for _, l := range logits {
		if float64(l) == math.Inf(-1) {
			continue
		}
		d := float64(l) - mean
		acc = acc + d*d
	}
	return mx - c.cfg.TopNSigma*math.Sqrt(acc/float64(k))
}

// sigma masks (sets to -Inf, keeping their place, as llama.cpp does) the
// candidates below the step's sigmaCut: a prefix stays.
func (c *Chain) sigma(n int) {
	for i := range n {
		if float64(c.vals[i]) < c.sigmaCut {
			c.vals[i] = float32(math.Inf(-1))
		}
	}
}

// xtc is the XTC stage at temperature t with the step's uniform u.
func (c *Chain) xtc(n int, t, u float64) int {
	if u > c.cfg.XTCProbability {
		return n
	}
	probs := c.probs[:n]
	sum := abi.Softmax(probs, c.vals[:n], t)
	if !(sum > 0) {
		return n
	}
	last := 0
	for i, p := range probs {
		if !(p/sum >= c.cfg.XTCThreshold) {
			break
		}
		last = i
	}
	if last == 0 {
		return n
	}
	copy(c.ids, c.ids[last:n])
	copy(c.vals, c.vals[last:n])
	return n - last
}

// dynamicTemperature is the step's temperature from the entropy of the n
// >= 2 candidates (stage 8), or the configured one when every probability
// is 0.
func (c *Chain) dynamicTemperature(n int) float64 {
	cfg := &c.cfg
	probs := c.probs[:n]
	sum := abi.Softmax(probs, c.vals[:n], 1)
	if !(sum > 0) {
		return cfg.Temperature
	}
	h := 0.0
	for _, p := range probs {
		if p = p / sum; p > 0 {
			h = h - p*guest.Log(p)
		}
	}
	lo, hi := max(0, cfg.Temperature-cfg.DynatempRange), cfg.Temperature+cfg.DynatempRange
	return lo + (hi-lo)*pow(h/guest.Log(float64(n)), cfg.DynatempExponent)
}

// pow is x^e for x >= 0 in the contract's arithmetic: Exp(e·Log(x)); 1 for
// e = 0, 0 for x = 0 (e > 0).
func pow(x, e float64) float64 {
	switch {
	case e == 0:
		return 1
	case !(x > 0):
		return 0
	}
	return abi.Exp(e * guest.Log(x))
}

// candidates fills c.ids/c.vals in contract order after bias and penalties.
func (c *Chain) candidates(ids []int32, logits []float32, count int) int {
	if c.topN > 0 {
		n := min(count, c.topN)
		moved := false
		for i := range n {
			id, l := ids[i], logits[i]
			if id < 0 || int(id) >= c.nVocab {
				id = 0 // cannot happen: the host selects
			}
			if c.bias != nil {
				l = l + c.bias[id]
				moved = true
			}
			if c.penOn && c.counts[id] > 0 {
				l = c.penalize(l, c.counts[id])
				moved = true
			}
			c.ids[i], c.vals[i] = id, l
		}
		if moved {
			if (len(c.distinct)+len(c.biasIDs))*n <= 65536 {
				insertionSort(c.ids[:n], c.vals[:n])
			} else {
				abi.SortCandidates(c.ids[:n], c.vals[:n])
			}
		}
		return n
	}
	for _, id := range c.biasIDs {
		logits[id] = logits[id] + c.bias[id]
	}
	if c.penOn {
		for _, id := range c.distinct {
			logits[id] = c.penalize(logits[id], c.counts[id])
		}
	}
	if c.cfg.TopNSigma > 0 && c.sigmaAll {
		c.sigmaCut = c.sigmaCutOf(logits)
	}
	switch {
	case c.greedy():
		return guest.SelectTop(logits, 1, c.ids, c.vals)
	case c.mirostat:
		return guest.SelectTop(logits, mirostatM, c.ids, c.vals)
	case c.kEarly && c.cfg.TopK < c.nVocab:
		return guest.SelectTop(logits, c.cfg.TopK, c.ids, c.vals)
	}
	return c.sortAll(logits)
}

// sortAll fills c.ids/c.vals with the n_vocab logits in contract order
// (full mode) and returns n_vocab.
func (c *Chain) sortAll(logits []float32) int {
	for i, l := range logits {
		c.ids[i], c.rkeys[i] = int32(i), orderKey(l)
	}
	radix(c.rkeys, c.ids, c.rkeys2, c.ids2, 32)
	for i, id := range c.ids {
		c.vals[i] = logits[id]
	}
	return c.nVocab
}

func insertionSort(ids []int32, vals []float32) {
	for i := 1; i < len(ids); i++ {
		id, l := ids[i], vals[i]
		j := i
		for j > 0 && abi.Before(id, l, ids[j-1], vals[j-1]) {
			ids[j], vals[j] = ids[j-1], vals[j-1]
			j--
		}
		ids[j], vals[j] = id, l
	}
}

func (c *Chain) typical(n int, t float64) int {
	probs := c.probs[:n]
	sum := abi.Softmax(probs, c.vals[:n], t)
	if !(sum > 0) {
		return n
	}
	h := 0.0
	for i, p := range probs {
		p = p / sum
		probs[i] = p
		if p > 0 {
			h = h - float64(p*guest.Log(p))
		}
	}
	for i, p := range probs {
		c.tkeys[i] = math.Abs(-guest.Log(p) - h)
		c.tidx[i] = int32(i)
	}
	if c.rkeys != nil {
		// full mode: radix on the bits of the non-negative scores
		for i, k := range c.tkeys[:n] {
			c.rkeys[i] = math.Float64bits(k)
		}
		radix(c.rkeys[:n], c.tidx[:n], c.rkeys2[:n], c.ids2[:n], 64)
		for i, k := range c.rkeys[:n] {
			c.tkeys[i] = math.Float64frombits(k)
		}
	} else {
		sortKeys(c.tkeys[:n], c.tidx[:n])
	}
	cum, last := 0.0, n
	for j := range n {
		cum = cum + probs[c.tidx[j]]
		if cum > c.cfg.TypicalP {
			last = j + 1
			break
		}
	}
	for j := range last {
		c.ids2[j], c.vals2[j] = c.ids[c.tidx[j]], c.vals[c.tidx[j]]
	}
	copy(c.ids, c.ids2[:last])
	copy(c.vals, c.vals2[:last])
	abi.SortCandidates(c.ids[:last], c.vals[:last])
	return last
}

func (c *Chain) nucleus(n int, t float64) int {
	probs := c.probs[:n]
	sum := abi.Softmax(probs, c.vals[:n], t)
	if !(sum > 0) {
		return n
	}
	cum := 0.0
	for i, p := range probs {
		cum = cum + p/sum
		if cum >= c.cfg.TopP {
			return i + 1
		}
	}
	return n
}

func (c *Chain) minimum(n int, t float64) int {
	probs := c.probs[:n]
	sum := abi.Softmax(probs, c.vals[:n], t)
	if !(sum > 0) {
		return n
	}
	thr := float64(c.cfg.MinP * probs[0])
	for i := 1; i < n; i++ {
		if probs[i] < thr {
			return i
		}
	}
	return n
}

// radix sorts (key, val) pairs by key ascending, stably, in passes of 11
// bits from bit 0 below bits; the result ends in key and val. A full
// vocabulary costs a few O(n) passes instead of n log n compares (a guest
// pays for every loop iteration, ABI §6).
func radix(key []uint64, val []int32, tkey []uint64, tval []int32, bits int) {
	var count [2048]int32
	passes := 0
	for shift := 0; shift < bits; shift += 11 {
		count = [2048]int32{}
		for _, k := range key {
			count[(k>>shift)&2047]++
		}
		sum := int32(0)
		for b, c := range count {
			count[b] = sum
			sum += c
		}
		for i, k := range key {
			at := count[(k>>shift)&2047]
			count[(k>>shift)&2047]++
			tkey[at], tval[at] = k, val[i]
		}
		key, tkey = tkey, key
		val, tval = tval, val
		passes++
	}
	if passes%2 == 1 {
		copy(tkey, key)
		copy(tval, val)
	}
}

// orderKey maps a logit to a key whose ascending order is the contract
// order's (logit descending, NaN last, -0 as +0); ties keep their input
// order, which is id order in full mode.
func orderKey(l float32) uint64 {
	if l != l {
		return 0xffffffff
	}
	if l == 0 {
		l = 0
	}
	b := math.Float32bits(l)
	asc := b | 0x80000000
	if b&0x80000000 != 0 {
		asc = ^b
	}
	return uint64(^asc)
}

// sortKeys sorts idx by (key ascending, index ascending), keys moving along.
func sortKeys(keys []float64, idx []int32) {
	less := func(a, b int) bool {
		return keys[a] < keys[b] || (keys[a] == keys[b] && idx[a] < idx[b])
	}
	n := len(keys)
	sift := func(root, end int) {
		for {
			ch := 2*root + 1
			if ch >= end {
				return
			}
			if ch+1 < end && less(ch, ch+1) {
				ch++
			}
			if !less(root, ch) {
				return
			}
			keys[root], keys[ch] = keys[ch], keys[root]
			idx[root], idx[ch] = idx[ch], idx[root]
			root = ch
		}
	}
	for i := n/2 - 1; i >= 0; i-- {
		sift(i, n)
	}
	for end := n - 1; end > 0; end-- {
		keys[0], keys[end] = keys[end], keys[0]
		idx[0], idx[end] = idx[end], idx[0]
		sift(0, end)
	}
}
