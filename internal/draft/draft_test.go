package draft

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestLookup(t *testing.T) {
	tests := []struct {
		name   string
		tokens []int32
		limit  int
		want   []int32
	}{
		{"nothing repeats", []int32{1, 2, 3, 4, 5}, 8, nil},
		{"one token repeats: below MinNgram", []int32{1, 2, 3, 9, 2}, 8, nil},
		// A first draft is 5 tokens long (length's prior).
		{"bigram", []int32{1, 2, 3, 4, 9, 2, 3}, 8, []int32{4, 9, 2, 3, 4}},
		{"the latest occurrence", []int32{2, 3, 5, 2, 3, 6, 2, 3}, 8, []int32{6, 2, 3, 6, 2}},
		{"the longest n-gram wins over the latest", []int32{7, 2, 3, 5, 8, 2, 3, 6, 7, 2, 3}, 8, []int32{5, 8, 2, 3, 6}},
		{"limit", []int32{1, 2, 3, 4, 5, 6, 1, 2}, 2, []int32{3, 4}},
		{"a run", []int32{4, 4, 4}, 8, []int32{4, 4, 4, 4, 4}},
		{"a loop runs on into the draft", []int32{5, 6, 7, 5, 6}, 8, []int32{7, 5, 6, 7, 5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := NewLookup(LookupOptions{})
			d.Reset(nil)
			assert.Equal(t, tt.want, d.Draft(nil, tt.tokens, tt.limit))
		})
	}
}

// Length by the halving rule grows on full acceptance, shrinks to what
// was accepted, and pauses after misses, longer with each miss in a row.
func TestLength(t *testing.T) {
	l := newLength(8, 4, false)
	assert.Equal(t, 4, l.Next(100))
	assert.Equal(t, 3, l.Next(3), "capped by the limit")
	l.Accepted(4, 4)
	assert.Equal(t, 8, l.Next(100))
	l.Accepted(8, 8)
	assert.Equal(t, 8, l.Next(100), "at most Max")
	l.Accepted(8, 2)
	assert.Equal(t, 3, l.Next(100))
	l.Accepted(3, 0)
	assert.Equal(t, 0, l.Next(100), "one paused call after a miss")
	assert.Equal(t, 1, l.Next(100))
	l.Accepted(1, 0)
	assert.Equal(t, []int{0, 0, 1}, []int{l.Next(100), l.Next(100), l.Next(100)}, "two after the second in a row")
	l.Accepted(1, 0)
	l.Accepted(1, 0)
	l.Accepted(1, 0)
	paused := 0
	for l.Next(100) == 0 {
		paused++
	}
	assert.Equal(t, 4, paused, "at most MaxPause")
	l.Accepted(1, 1)
	assert.Equal(t, 2, l.Next(100))
	l.Reset()
	assert.Equal(t, 4, l.Next(100))
}

// A long draft after long accepted runs drafts as long: a lookup in a loop
// drafts its whole length, not the loop's period, and runs of accepted
// drafts grow it to the most.
func TestLookupLoop(t *testing.T) {
	d := NewLookup(LookupOptions{})
	tokens := []int32{1, 2, 3, 4, 5, 6, 7, 4, 5, 6, 7}
	d.Reset(tokens)
	assert.Equal(t, []int32{4, 5, 6, 7, 4}, d.Draft(nil, tokens, 100))
	var lengths []int
	for range 6 {
		got := d.Draft(nil, tokens, 100)
		d.Accepted(len(got), len(got))
		tokens = append(tokens, got...)
		lengths = append(lengths, len(got))
	}
	assert.Equal(t, 5, lengths[0])
	assert.IsIncreasing(t, lengths)
	assert.Equal(t, DefaultLookupDraft, lengths[len(lengths)-1])
	assert.Equal(t, []int32{4, 5, 6, 7, 4, 5, 6, 7, 4, 5}, d.Draft(nil, tokens[:11], 10))

	// A bigram's continuation has a rate of its own: the 4-grams' long
	// drafts do not make a bigram's long.
	assert.Equal(t, []int32{9, 1, 2, 7, 8}, d.Draft(nil, []int32{1, 2, 3, 4, 5, 6, 7, 4, 5, 6, 7, 8, 9, 1, 2, 7, 8}, 100))
}

// The expected-gain rule drafts the length that pays most per unit of a
// verify pass's cost: the most where every draft is accepted, one (a
// probe) where none is, and in between a length that grows with the rate.
func TestBestLength(t *testing.T) {
	assert.Equal(t, 32, bestLength(1, 32))
	assert.Equal(t, 7, bestLength(1, 7))
	assert.Equal(t, 1, bestLength(0, 32))
	assert.Equal(t, 0, bestLength(0.9, 0))
	assert.Equal(t, 5, bestLength(0.85, 32), "the prior's first draft")
	prev := 0
	for _, p := range []float64{0.3, 0.5, 0.7, 0.8, 0.9, 0.95, 0.98, 0.99} {
		k := bestLength(p, 32)
		assert.GreaterOrEqual(t, k, prev, "p=%v", p)
		prev = k
	}
	assert.InDelta(t, 10, bestLength(0.95, 32), 2, "one token in 20 rejected")
}

// A replaced token (a draft accepted up to it) costs the rest of that
// draft only: the expected-gain rule's next draft stays long where the
// halving rule's falls to what was accepted.
func TestLengthAfterAReplacedToken(t *testing.T) {
	gain, halving := newLength(32, 0, true), newLength(32, 0, false)
	for _, l := range []*length{&gain, &halving} {
		for range 3 {
			k := l.Next(100)
			l.Accepted(k, k)
		}
		l.Accepted(l.Next(100), 3)
	}
	assert.Equal(t, 4, halving.Next(100))
	assert.GreaterOrEqual(t, gain.Next(100), 10)
	gain.Reset()
	assert.Equal(t, 5, gain.Next(100), "Reset forgets the turn's rate")
	for range 3 {
		gain.Accepted(gain.Next(100), 0)
		for gain.Next(100) == 0 {
		}
	}
	assert.Equal(t, 1, gain.Next(100), "misses: probes of one")
}

// Prediction follows the output through the prediction and re-aligns
// after a replaced, an inserted and a deleted stretch.
func TestPrediction(t *testing.T) {
	pred := []int32{10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25}
	prompt := []int32{1, 2, 3}
	tests := []struct {
		name string
		out  []int32
		want []int32 // the next draft (limit 4)
	}{
		{"start", nil, []int32{10, 11, 12, 13}},
		{"agreeing", []int32{10, 11}, []int32{12, 13, 14, 15}},
		{"a replaced token", []int32{10, 11, 99}, []int32{13, 14, 15, 16}},
		// A one-token match nearby does not outweigh the run before a
		// first departure (it did: every later draft missed).
		{"a replaced token that repeats the one before", []int32{10, 11, 12, 13, 13}, []int32{15, 16, 17, 18}},
		{"an insertion, then the prediction again", []int32{10, 11, 98, 99, 12}, []int32{13, 14, 15, 16}},
		{"a deletion", []int32{10, 11, 16, 17}, []int32{18, 19, 20, 21}},
		{"a new token, then one matching far ahead", []int32{10, 11, 99, 24}, []int32{25}},
		{"past the end", append(append([]int32(nil), pred...), 5), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := NewPrediction(pred, PredictionOptions{MaxDraft: 4, Window: 16})
			d.Reset(prompt)
			tokens := append(append([]int32(nil), prompt...), tt.out...)
			assert.Equal(t, tt.want, d.Draft(nil, tokens, 100))
		})
	}
	t.Run("incremental", func(t *testing.T) {
		d := NewPrediction(pred, PredictionOptions{MaxDraft: 4})
		d.Reset(prompt)
		tokens := append([]int32(nil), prompt...)
		for _, tok := range []int32{10, 11, 99, 13} {
			tokens = append(tokens, tok)
			d.Draft(nil, tokens, 4)
		}
		assert.Equal(t, []int32{14, 15, 16, 17}, d.Draft(nil, tokens, 4))
	})
}

// TestPeek: a drafter's Peek is the first token its Draft would give, a
// paused Lookup's too, and peeking changes nothing a later Draft gives.
func TestPeek(t *testing.T) {
	type drafter interface {
		Draft(dst, tokens []int32, limit int) []int32
		Peek(tokens []int32) (int32, bool)
	}
	pred := []int32{10, 11, 12, 13, 14, 15, 16, 17}
	prompt := []int32{1, 2, 3}
	tests := []struct {
		name   string
		new    func() drafter
		tokens []int32
	}{
		{"lookup: nothing repeats", func() drafter { return NewLookup(LookupOptions{}) }, []int32{1, 2, 3, 4, 5}},
		{"lookup: a bigram", func() drafter { return NewLookup(LookupOptions{}) }, []int32{1, 2, 3, 4, 9, 2, 3}},
		{"lookup: a loop", func() drafter { return NewLookup(LookupOptions{}) }, []int32{5, 6, 7, 5, 6}},
		{"prediction: start", func() drafter { d := NewPrediction(pred, PredictionOptions{}); d.Reset(prompt); return d }, prompt},
		{"prediction: a replaced token", func() drafter { d := NewPrediction(pred, PredictionOptions{}); d.Reset(prompt); return d },
			[]int32{1, 2, 3, 10, 11, 99}},
		{"prediction: past the end", func() drafter { d := NewPrediction(pred, PredictionOptions{}); d.Reset(prompt); return d },
			append(append([]int32{1, 2, 3}, pred...), 5)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := tt.new().Draft(nil, tt.tokens, 8)
			d := tt.new()
			id, ok := d.Peek(tt.tokens)
			assert.Equal(t, len(want) > 0, ok)
			if ok {
				assert.Equal(t, want[0], id)
			}
			d.Peek(tt.tokens)
			assert.Equal(t, want, d.Draft(nil, tt.tokens, 8), "the draft after peeks")
		})
	}
	t.Run("a paused lookup peeks", func(t *testing.T) {
		d := NewLookup(LookupOptions{})
		tokens := []int32{1, 2, 3, 4, 9, 2, 3}
		d.length.pause = 2 // as after misses in a row
		id, ok := d.Peek(tokens)
		assert.Empty(t, d.Draft(nil, tokens, 8), "paused")
		assert.True(t, ok)
		assert.Equal(t, int32(4), id)
	})
}
