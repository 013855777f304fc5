package draft

import "github.com/realizar-host/realizar-host/abi"

// length adapts a drafter's draft length to recent acceptance, so that a
// source that keeps missing costs few verify rows while one that keeps
// hitting drafts long. The zero value is not usable: use newLength.
//
// It has two rules for how long a draft is:
//
//   - by halving and doubling (a draft model's, whose every drafted token
//     costs a draft forward): a fully accepted draft doubles the length
//     (up to Max), a partly accepted one sets it to the accepted count
//     plus one;
//   - by the expected gain (a prediction's and lookup's, whose drafts cost
//     nothing to make): the length k that maximizes the tokens a verify
//     pass is expected to yield per unit of its cost, (1 + p + … + p^k) /
//     (1 + verifyRowCost·k), where p is the share of drafted tokens
//     accepted so far (a decayed count, see rate). A mismatch in a
//     prediction is mostly one replaced token, after which the
//     prediction matches again: the halving rule cut the next draft to
//     what was accepted and paid several short passes to grow back, this
//     one keeps drafting as long as the acceptance pays for.
//
// Under both, a draft of which nothing was accepted pauses drafting for a
// number of calls that doubles with each such miss in a row (up to
// maxPause; by the expected gain from the second miss in a row, a single
// one being mostly a replaced token at the draft's start), and any
// acceptance ends the streak.
type length struct {
	// Max is the longest draft, in tokens (>= 1).
	Max int
	// maxPause is the most Draft calls skipped after misses in a row.
	maxPause int
	// byGain chooses the length by the expected gain.
	byGain bool

	n      int // the current length (halving rule), 1 <= n <= Max
	misses int // drafts in a row of which nothing was accepted
	pause  int // Draft calls still to skip

	// rates are the expected-gain rule's counts, one per class of draft
	// (Lookup's: the length of the n-gram matched), and class the one of
	// the draft being made.
	rates []rate
	class int
}

// rate is the decayed counts of drafted tokens accepted and of drafts cut
// short by a rejected token.
type rate struct{ hits, breaks float64 }

// Defaults of newLength's zero arguments.
const (
	// MaxDraft bounds a draft's length where a user sets it (run, chat
	// and serve --draft-max, a request's realizar.speculative.draft_max):
	// a verify span is one sequence's rows of a pass, and the pass's rows
	// are bounded by --batch-tokens anyway. It is the ABI's (a drafter
	// plugin's output region holds abi.MaxDraft ids).
	MaxDraft = abi.MaxDraft
	// DefaultMaxDraft is a draft model's longest draft when none is given:
	// 8 tokens (a verify pass of 9 rows on the CPU forward).
	DefaultMaxDraft = 8
	// DefaultLookupDraft is Lookup's longest draft when none is given:
	// MaxDraft, 32 tokens. Text that repeats (a loop, a quoted passage)
	// is accepted in long runs, and the expected-gain rule drafts less
	// where it is not.
	DefaultLookupDraft = MaxDraft
	// defaultStart is the first draft's length under the halving rule.
	defaultStart = 4
	// defaultMaxPause is the longest pause after misses: 16 calls.
	defaultMaxPause = 16
)

// The expected-gain rule's constants.
const (
	// verifyRowCost is what one more row adds to a verify pass, as a share
	// of a one-row pass: 0.2, measured on the 1.1B Q4_K_M fixture with 2
	// threads on AVX-512 (BenchmarkVerifyFile's CPU time: 17 rows cost
	// 4.4× one, 33 rows 7.6×). Where rows cost less (a wider machine, the
	// GPU) the lengths chosen are shorter than the best, never wrong.
	verifyRowCost = 0.2
	// gainDecay weighs the counts of earlier drafts at each new one, so
	// that the rate follows the text: about the last ten drafts count.
	gainDecay = 0.9
	// priorHits and priorBreaks start a turn at a rate of 0.85 with the
	// weight of four drafted tokens: a first draft of 4 or 5 tokens,
	// longer within a draft or two where they are accepted.
	priorHits, priorBreaks = 3.4, 0.6
)

// newLength returns a length drafting up to maxDraft tokens (0:
// DefaultMaxDraft) by the halving rule (byGain false) or the expected
// gain, that pauses at most maxPause calls (0: defaultMaxPause; < 0: never
// pauses).
func newLength(maxDraft, maxPause int, byGain bool) length {
	if maxDraft <= 0 {
		maxDraft = DefaultMaxDraft
	}
	if maxPause == 0 {
		maxPause = defaultMaxPause
	}
	l := length{Max: maxDraft, maxPause: max(maxPause, 0), byGain: byGain, rates: make([]rate, 1)}
	l.Reset()
	return l
}

// setClasses gives the expected-gain rule n >= 1 classes of drafts, each
// with an acceptance rate of its own (Use picks one), and resets.
func (l *length) setClasses(n int) {
	l.rates = make([]rate, max(n, 1))
	l.Reset()
}

// Use makes the next draft, and the Accepted after it, of class c
// (clamped to the classes there are).
func (l *length) Use(c int) { l.class = min(max(c, 0), len(l.rates)-1) }

// Paused reports whether the drafter skips this call (counting it as one
// paused call): Next does it first, a drafter that must look before it
// knows the class calls it itself.
func (l *length) Paused() bool {
	if l.pause > 0 {
		l.pause--
		return true
	}
	return false
}

// Reset starts over (a new turn).
func (l *length) Reset() {
	l.n, l.misses, l.pause = min(defaultStart, l.Max), 0, 0
	for i := range l.rates {
		l.rates[i] = rate{priorHits, priorBreaks}
	}
	l.class = 0
}

// Next returns the length of the next draft, at most limit; 0 while the
// drafter pauses (each call counts one paused call).
func (l *length) Next(limit int) int {
	if l.Paused() {
		return 0
	}
	if l.byGain {
		return bestLength(l.rate(), min(l.Max, limit))
	}
	return min(l.n, limit)
}

// rate is the share of drafted tokens accepted in the current class, over
// the decayed counts.
func (l *length) rate() float64 {
	r := l.rates[l.class]
	return r.hits / (r.hits + r.breaks)
}

// bestLength is the draft length in [min(1, most), most] that maximizes
// the tokens expected of a verify pass per unit of its cost when each
// drafted token is accepted with probability p (given the ones before
// it): (1 + p + … + p^k) / (1 + verifyRowCost·k). It is at least 1 where
// most is: a drafter that drafts at all probes, and misses pause it.
func bestLength(p float64, most int) int {
	if most <= 0 {
		return 0
	}
	best, bestGain := 1, 0.0
	sum, pk := 1.0, 1.0
	for k := 1; k <= most; k++ {
		pk *= p
		sum += pk
		// float64(…) keeps each product rounded on its own (no fused
		// multiply-add), as the lookup plugin's C computes it.
		if g := sum / (1 + float64(verifyRowCost*float64(k))); g > bestGain {
			best, bestGain = k, g
		}
	}
	return best
}

// Accepted records the outcome of a draft of drafted tokens.
func (l *length) Accepted(drafted, accepted int) {
	if drafted <= 0 {
		return
	}
	if accepted > 0 {
		l.misses = 0
	} else {
		l.misses++
	}
	streak := l.misses // drafts in a row that nothing of was accepted
	if l.byGain {
		r := &l.rates[l.class]
		r.hits = float64(gainDecay*r.hits) + float64(accepted)
		r.breaks *= gainDecay
		if accepted < drafted {
			r.breaks++
		}
		// A single miss is mostly a replaced token at the draft's start:
		// the rate has counted it; pause from the second.
		streak--
	} else {
		switch {
		case accepted >= drafted:
			l.n = min(2*l.n, l.Max)
		case accepted > 0:
			l.n = accepted + 1
		default:
			l.n = max(l.n/2, 1)
		}
	}
	if streak > 0 {
		l.pause = min(1<<min(streak-1, 30), l.maxPause)
	}
}
