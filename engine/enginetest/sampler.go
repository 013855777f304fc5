package enginetest

import (
	"errors"
	"math"
	"math/rand/v2"
)

// Greedy is the reference greedy sampler: the id of the largest logit, the
// lowest id on ties. It ignores the seed.
type Greedy struct{}

// Name is "greedy".
func (Greedy) Name() string { return "greedy" }

// Reset does nothing.
func (Greedy) Reset(uint64, []int32) error { return nil }

// Sample returns the argmax of logits.
func (Greedy) Sample(logits []float32) (int32, error) {
	if len(logits) == 0 {
		return 0, errors.New("greedy: no logits")
	}
	best, top := 0, logits[0]
	for i, v := range logits {
		if v > top {
			best, top = i, v
		}
	}
	return int32(best), nil
}

// Accept does nothing.
func (Greedy) Accept(int32) {}

// Temperature is a reference non-greedy sampler: it draws from
// softmax(logits / T) with a PCG generator seeded by the turn's seed, so the
// same seed gives the same tokens. T must be > 0.
type Temperature struct {
	T   float64
	rng *rand.Rand
	p   []float64
}

// Name is "temperature".
func (s *Temperature) Name() string { return "temperature" }

// Reset seeds the generator.
func (s *Temperature) Reset(seed uint64, _ []int32) error {
	if !(s.T > 0) {
		return errors.New("temperature: T must be > 0")
	}
	s.rng = rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	return nil
}

// Sample draws one id.
func (s *Temperature) Sample(logits []float32) (int32, error) {
	if s.rng == nil {
		return 0, errors.New("temperature: Sample before Reset")
	}
	if len(logits) == 0 {
		return 0, errors.New("temperature: no logits")
	}
	m := math.Inf(-1)
	for _, v := range logits {
		m = max(m, float64(v))
	}
	s.p = s.p[:0]
	var sum float64
	for _, v := range logits {
		e := math.Exp((float64(v) - m) / s.T)
		s.p = append(s.p, e)
		sum += e
	}
	u := s.rng.Float64() * sum
	for i, e := range s.p {
		if u < e {
			return int32(i), nil
		}
		u -= e
	}
	return int32(len(s.p) - 1), nil
}

// Accept does nothing.
func (s *Temperature) Accept(int32) {}
