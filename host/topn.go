package host

import "github.com/realizar-host/realizar-host/abi"

// topN writes the k best candidates of logits into ids and vals (each of
// length >= k), in the contract's order (logit descending, then id
// ascending; NaN last), and returns their count min(k, len(logits)). It
// keeps a heap of the k best seen so far whose root is the worst of them,
// so it costs O(n log k) and allocates nothing.
func topN(logits []float32, k int, ids []int32, vals []float32) int {
	if k > len(logits) {
		k = len(logits)
	}
	if k == 0 {
		return 0
	}
	ids, vals = ids[:k], vals[:k]
	for i := 0; i < k; i++ {
		ids[i], vals[i] = int32(i), logits[i]
	}
	for i := k/2 - 1; i >= 0; i-- {
		siftWorst(ids, vals, i)
	}
	worst := vals[0]
	for i := k; i < len(logits); i++ {
		l := logits[i]
		// Fast reject: a later id ties lose, so only a strictly greater
		// logit (or any number when the worst kept is NaN) gets in.
		if !(l > worst) && (worst == worst || l != l) {
			continue
		}
		ids[0], vals[0] = int32(i), l
		siftWorst(ids, vals, 0)
		worst = vals[0]
	}
	abi.SortCandidates(ids, vals)
	return k
}

// siftWorst restores the heap below root: each parent sorts after (is
// worse than or equal to) its children.
func siftWorst(ids []int32, vals []float32, root int) {
	n := len(ids)
	for {
		c := 2*root + 1
		if c >= n {
			return
		}
		if c+1 < n && abi.Before(ids[c], vals[c], ids[c+1], vals[c+1]) {
			c++
		}
		if !abi.Before(ids[root], vals[root], ids[c], vals[c]) {
			return
		}
		ids[root], ids[c] = ids[c], ids[root]
		vals[root], vals[c] = vals[c], vals[root]
		root = c
	}
}
