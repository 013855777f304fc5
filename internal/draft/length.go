package draft

import "github.com/realizar-host/realizar-host/abi"

// Length adapts a drafter's draft length to recent acceptance, so that a
// source that keeps missing costs few verify rows while one that keeps
// hitting drafts long. The zero value is not usable: use NewLength.
//
// A fully accepted draft doubles the length (up to Max); a partly accepted
// one sets it to the accepted count plus one; a draft of which nothing was
// accepted halves it and pauses drafting for a number of calls that doubles
// with each such miss in a row (up to MaxPause), and any acceptance ends
// the streak.
type length struct {
	// Max is the longest draft, in tokens (>= 1).
	Max int
	// maxPause is the most Draft calls skipped after misses in a row.
	maxPause int

	n      int // the current length, 1 <= n <= Max
	misses int // drafts in a row of which nothing was accepted
	pause  int // Draft calls still to skip
}

// Defaults of NewLength's zero arguments.
const (
	// MaxDraft bounds a draft's length where a user sets it (run, chat
	// and serve --draft-max, a request's realizar.speculative.draft_max):
	// a verify span is one sequence's rows of a pass, and the pass's rows
	// are bounded by --batch-tokens anyway. It is the ABI's (a drafter
	// plugin's output region holds abi.MaxDraft ids).
	MaxDraft = abi.MaxDraft
	// DefaultMaxDraft is the longest draft when none is given: 8 tokens
	// (a verify pass of 9 rows on the CPU forward).
	DefaultMaxDraft = 8
	// defaultStart is the first draft's length.
	defaultStart = 4
	// defaultMaxPause is the longest pause after misses: 16 calls.
	defaultMaxPause = 16
)

// NewLength returns a Length drafting up to maxDraft tokens (0:
// DefaultMaxDraft) that pauses at most maxPause calls (0: DefaultMaxPause;
// < 0: never pauses).
func newLength(maxDraft, maxPause int) length {
	if maxDraft <= 0 {
		maxDraft = DefaultMaxDraft
	}
	if maxPause == 0 {
		maxPause = defaultMaxPause
	}
	return length{Max: maxDraft, maxPause: max(maxPause, 0), n: min(defaultStart, maxDraft)}
}

// Reset starts over (a new turn).
func (l *length) Reset() {
	l.n, l.misses, l.pause = min(defaultStart, l.Max), 0, 0
}

// Next returns the length of the next draft, at most limit; 0 while the
// drafter pauses (each call counts one paused call).
func (l *length) Next(limit int) int {
	if l.pause > 0 {
		l.pause--
		return 0
	}
	return min(l.n, limit)
}

// Accepted records the outcome of a draft of drafted tokens.
func (l *length) Accepted(drafted, accepted int) {
	switch {
	case drafted <= 0:
		return
	case accepted >= drafted:
		l.n, l.misses = min(2*l.n, l.Max), 0
	case accepted > 0:
		l.n, l.misses = max(accepted+1, 1), 0
	default:
		l.n = max(l.n/2, 1)
		l.misses++
		l.pause = min(1<<min(l.misses-1, 30), l.maxPause)
	}
}
