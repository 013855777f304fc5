package guest

import "github.com/realizar-host/realizar-host/abi"

// SelectTop writes the min(k, len(logits)) best entries of logits (the id
// is the index) into ids and vals in the contract order (abi.Before) and
// returns their number: the first stage of a top-k sampler over full
// logits. k >= 1; ids and vals hold at least k entries. The scan does eight
// entries per loop iteration, because a guest pays for every iteration
// (ABI §6). The C SDK's realizar_select_top gives the same answer (any
// correct selection does: the order is total).
func SelectTop(logits []float32, k int, ids []int32, vals []float32) int {
	n := len(logits)
	k = min(k, n)
	if k <= 0 {
		return 0
	}
	ids, vals = ids[:k], vals[:k]
	for i := range k {
		ids[i], vals[i] = int32(i), logits[i]
	}
	for i := k/2 - 1; i >= 0; i-- {
		siftDown(ids, vals, i, k)
	}
	i := k
	// Ids ascend, so an entry beats the root exactly when its logit is
	// greater (or the root is NaN and the entry is not).
	for ; i+8 <= n; i += 8 {
		t := vals[0]
		l := logits[i : i+8 : i+8]
		if t == t && !(l[0] > t || l[1] > t || l[2] > t || l[3] > t || l[4] > t || l[5] > t || l[6] > t || l[7] > t) {
			continue
		}
		for j, v := range l {
			offer(ids, vals, int32(i+j), v)
		}
	}
	for ; i < n; i++ {
		offer(ids, vals, int32(i), logits[i])
	}
	abi.SortCandidates(ids, vals)
	return k
}

// offer puts (id, l) into the heap if it sorts before the root.
func offer(ids []int32, vals []float32, id int32, l float32) {
	if abi.Before(id, l, ids[0], vals[0]) {
		ids[0], vals[0] = id, l
		siftDown(ids, vals, 0, len(ids))
	}
}

// siftDown restores the heap below root in ids[:n]: each parent sorts after
// (or equal to) its children, so the root is the entry that sorts last.
func siftDown(ids []int32, vals []float32, root, n int) {
	for {
		child := 2*root + 1
		if child >= n {
			return
		}
		if child+1 < n && abi.Before(ids[child], vals[child], ids[child+1], vals[child+1]) {
			child++
		}
		if !abi.Before(ids[root], vals[root], ids[child], vals[child]) {
			return
		}
		ids[root], ids[child] = ids[child], ids[root]
		vals[root], vals[child] = vals[child], vals[root]
		root = child
	}
}
