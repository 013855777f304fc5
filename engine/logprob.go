package engine

import (
	"math"
	"slices"
)

// logSumExp returns log(sum(exp(logits))), computed in float64 with the
// maximum subtracted first so that large logits do not overflow. -Inf logits
// contribute nothing; an all -Inf (or empty) input returns -Inf.
func logSumExp(logits []float32) float64 {
	m := math.Inf(-1)
	for _, v := range logits {
		m = max(m, float64(v))
	}
	if math.IsInf(m, -1) {
		return m
	}
	var sum float64
	for _, v := range logits {
		sum += math.Exp(float64(v) - m)
	}
	return m + math.Log(sum)
}

// LogSoftmaxAt returns log(softmax(logits)[id]), the natural-log probability
// of id under logits ([n_vocab]float32). It is what perplexity sums over a
// Score. id must be in [0, len(logits)).
func LogSoftmaxAt(logits []float32, id int32) float64 {
	return float64(logits[id]) - logSumExp(logits)
}

// stepLogprobs returns the log-probability of chosen under logits and, when
// top > 0, the top most likely ids (most likely first, ties by lower id).
func stepLogprobs(logits []float32, chosen int32, top int) StepLogprobs {
	lse := logSumExp(logits)
	out := StepLogprobs{Token: chosen, Logprob: float32(float64(logits[chosen]) - lse)}
	if top <= 0 {
		return out
	}
	ids := topK(logits, top)
	out.Top = make([]TokenLogprob, len(ids))
	for i, id := range ids {
		out.Top[i] = TokenLogprob{Token: id, Logprob: float32(float64(logits[id]) - lse)}
	}
	return out
}

// topK returns the ids of the k largest logits, largest first, ties broken
// by the lower id. It keeps a sorted window of k candidates, so it costs
// O(n·log k) comparisons plus O(k) moves for each id that enters the window.
func topK(logits []float32, k int) []int32 {
	k = min(k, len(logits))
	if k <= 0 {
		return nil
	}
	better := func(a, b int32) bool { // a ranks before b
		return logits[a] > logits[b] || (logits[a] == logits[b] && a < b)
	}
	best := make([]int32, 0, k)
	for i := range logits {
		id := int32(i)
		if len(best) == k && !better(id, best[k-1]) {
			continue
		}
		at, _ := slices.BinarySearchFunc(best, id, func(e, t int32) int {
			if better(e, t) {
				return -1
			}
			return 1
		})
		if len(best) == k {
			best = best[:k-1]
		}
		best = slices.Insert(best, at, id)
	}
	return best
}
