package draft

import "github.com/realizar-host/realizar-host/engine"

// LookupOptions configures NewLookup. The zero value is the defaults.
type LookupOptions struct {
	// MinNgram and MaxNgram bound the length of the trailing n-gram looked
	// up, in tokens: the longest that occurred before wins (default 2 and
	// 4; 1 <= MinNgram <= MaxNgram).
	MinNgram, MaxNgram int
	// MaxDraft is the longest draft (default DefaultLookupDraft).
	MaxDraft int
}

// Lookup drafts by prompt lookup: it finds the most recent earlier
// occurrence of the sequence's trailing n-gram (the longest of
// MaxNgram..MinNgram tokens that occurred) in the sequence's own prompt and
// output, and drafts the tokens that followed it, as many as its length
// allows (the expected-gain rule, up to DefaultLookupDraft, with a rate
// of acceptance for each n-gram length: on stories260K's looping story a
// 4-gram's continuation was accepted where a bigram's mostly was not,
// and one rate for both kept the 4-grams' drafts short). The tokens
// that followed run on into the trailing n-gram itself and the draft's own
// tokens, as an overlapping copy does: text that loops with a period of p
// tokens drafts a whole draft, not p tokens. Where nothing repeats it
// drafts nothing, and the verify pass is a plain step.
//
// A Lookup serves one sequence at a time and keeps no text between turns
// (Reset forgets everything). Not safe for concurrent use.
type Lookup struct {
	minN, maxN int
	length     length
}

var _ engine.DraftPeeker = (*Lookup)(nil)

// NewLookup returns a Lookup with opts; out-of-range n-gram lengths are
// clamped (MinNgram to >= 1, MaxNgram to >= MinNgram).
func NewLookup(opts LookupOptions) *Lookup {
	minN, maxN := opts.MinNgram, opts.MaxNgram
	if minN <= 0 {
		minN = 2
	}
	if maxN <= 0 {
		maxN = 4
	}
	maxN = max(maxN, minN)
	if opts.MaxDraft <= 0 {
		opts.MaxDraft = DefaultLookupDraft
	}
	d := &Lookup{minN: minN, maxN: maxN, length: newLength(opts.MaxDraft, 0, true)}
	d.length.setClasses(maxN - minN + 1)
	return d
}

// Reset starts a turn; the prompt is read from Draft's tokens.
func (d *Lookup) Reset([]int32) { d.length.Reset() }

// Accepted adapts the draft length.
func (d *Lookup) Accepted(drafted, accepted int) { d.length.Accepted(drafted, accepted) }

// Draft appends to dst the tokens that followed the latest earlier
// occurrence of tokens' longest trailing n-gram, up to the adapted length
// and limit: tokens[at], tokens[at+1], … and past the end of tokens the
// draft's own tokens (the copy overlaps what it writes).
func (d *Lookup) Draft(dst, tokens []int32, limit int) []int32 {
	if d.length.Paused() || len(tokens) <= d.minN {
		return dst
	}
	at, n := lookup(tokens, d.minN, d.maxN)
	if at < 0 {
		return dst
	}
	d.length.Use(n - d.minN)
	k := d.length.Next(limit)
	base := len(dst)
	for j := range k {
		if i := at + j; i < len(tokens) {
			dst = append(dst, tokens[i])
		} else {
			dst = append(dst, dst[base+i-len(tokens)])
		}
	}
	return dst
}

// Peek returns the token a draft after tokens would start with: the one
// that followed the latest earlier occurrence of the trailing n-gram
// (engine.DraftPeeker). It changes nothing.
func (d *Lookup) Peek(tokens []int32) (int32, bool) {
	if len(tokens) <= d.minN {
		return 0, false
	}
	at, _ := lookup(tokens, d.minN, d.maxN)
	if at < 0 {
		return 0, false
	}
	return tokens[at], true // at < len(tokens): it follows an earlier n-gram
}

// lookup finds where the latest earlier occurrence of tokens' trailing
// n-gram (the longest of maxN..minN that occurred) ends: at is the index of
// the token that followed it, n its length; at = -1 when none of minN
// tokens occurred before.
func lookup(tokens []int32, minN, maxN int) (at, n int) {
	end := len(tokens)
	maxN = min(maxN, end-1)
	at = -1
	last := tokens[end-1]
	// i is the index of an occurrence's last token; the trailing n-gram
	// itself ends at end-1 and is not an earlier occurrence.
	for i := end - 2; i >= minN-1; i-- {
		if tokens[i] != last {
			continue
		}
		l := 1
		for l < maxN && i-l >= 0 && tokens[i-l] == tokens[end-1-l] {
			l++
		}
		if l >= minN && l > n {
			at, n = i+1, l
			if n == maxN {
				break
			}
		}
	}
	return at, n
}
