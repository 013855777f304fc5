package abi

// Before reports whether candidate a sorts before candidate b in the
// contract's order: logit descending, then id ascending. A NaN logit sorts
// after every other logit (NaNs among themselves by id). -Inf is an ordinary
// value below every finite one.
func Before(idA int32, logitA float32, idB int32, logitB float32) bool {
	nanA, nanB := logitA != logitA, logitB != logitB
	switch {
	case nanA != nanB:
		return nanB
	case !nanA && logitA != logitB:
		return logitA > logitB
	}
	return idA < idB
}

// SortCandidates sorts ids and logits (the same length; pairs move
// together) into the contract's order, in place, without allocating.
// Because the order is total, any correct sort gives the same result; this
// one is a heapsort.
func SortCandidates(ids []int32, logits []float32) {
	n := len(ids)
	logits = logits[:n]
	// Build a heap whose root sorts last, then move roots to the end.
	for i := n/2 - 1; i >= 0; i-- {
		siftDown(ids, logits, i, n)
	}
	for end := n - 1; end > 0; end-- {
		ids[0], ids[end] = ids[end], ids[0]
		logits[0], logits[end] = logits[end], logits[0]
		siftDown(ids, logits, 0, end)
	}
}

// siftDown restores the heap below root in ids[:n]: each parent sorts after
// (or equal to) its children.
func siftDown(ids []int32, logits []float32, root, n int) {
	for {
		child := 2*root + 1
		if child >= n {
			return
		}
		if child+1 < n && Before(ids[child], logits[child], ids[child+1], logits[child+1]) {
			child++
		}
		if !Before(ids[root], logits[root], ids[child], logits[child]) {
			return
		}
		ids[root], ids[child] = ids[child], ids[root]
		logits[root], logits[child] = logits[child], logits[root]
		root = child
	}
}

// Softmax writes the unnormalised probabilities of logits, which must
// already be in the contract's order, into probs (len(probs) >= len(logits))
// and returns their sum. temp > 0 is the temperature (1 for none):
//
//	m := float64(logits[0])
//	probs[i] = Exp((float64(logits[i]) - m) / temp)
//	sum = probs[0] + probs[1] + ... (left to right)
//
// all in binary64; a NaN logit gets probability 0. If logits is empty or logits[0] is -Inf or NaN, every
// probability is 0 and so is the sum. Normalised probabilities, where a
// policy needs them, are probs[i] / sum.
func Softmax(probs []float64, logits []float32, temp float64) (sum float64) {
	if len(logits) == 0 {
		return 0
	}
	m := float64(logits[0])
	if m != m || m < -maxFloat64 {
		for i := range logits {
			probs[i] = 0
		}
		return 0
	}
	probs = probs[:len(logits)]
	for i, l := range logits {
		if l != l {
			probs[i] = 0
			continue
		}
		p := Exp((float64(l) - m) / temp)
		probs[i] = p
		sum += p
	}
	return sum
}

const maxFloat64 = 0x1.fffffffffffffp1023

// Draw picks an index from probs (unnormalised, summing to sum, in the
// contract's order) with u from RNG.Uniform:
//
//	target := u * sum
//	cum := 0.0
//	for i: cum += probs[i]; if target < cum { return i }
//
// and, when rounding lets target reach the total, the last index whose
// probability is > 0 (0 if there is none).
func Draw(probs []float64, sum, u float64) int {
	target := u * sum
	cum := 0.0
	last := 0
	for i, p := range probs {
		cum += p
		if target < cum {
			return i
		}
		if p > 0 {
			last = i
		}
	}
	return last
}
