package serving

import "time"

// draftGate decides whether a pass takes the verify spans' drafts, from
// what passes cost and what drafts earn, both measured as the core runs.
//
// A pass of r rows costs about t(r) = a + b·r: a is what every pass pays
// whatever its rows (the weights read once), b what each row adds (its
// products and attention). With S decoding sequences, D draft rows of
// which A are accepted turn S tokens per t(S) into S+A tokens per
// t(S+D): more tokens a second exactly when A/D > b·S / (a + b·S), the
// share of the pass that grows with its rows. A lone sequence's pass is
// mostly a, so drafts pay at modest acceptance; a full pass (the 1.1B at
// 8 sequences on two Zen 5 cores: a 4-row pass already costs 2.2× a
// 1-row pass) is mostly b·S, and drafts cost nearly a full row each while
// earning less than one. So a pass of two or more decoding sequences
// takes a sequence's drafts only while its estimated acceptance exceeds
// that share, with a and b fitted (least squares, decayed) to the batched
// passes' rows and wall times.
//
// A sequence's estimate is its own acceptance (accepted / verified
// drafts, decayed: an exact prediction keeps drafting where lookup on
// unrepeating text stops) drawn toward the core's, all sequences'
// verified drafts pooled, by gatePrior drafts' weight. The pool is what
// a turn that has drafted little is judged by: a turn's own count alone
// reached its warm-up only after gateMinDrafts drafts, which a short turn
// (64 tokens of lookup at 8 sequences: about 6) never did, so every
// sequence drafted whatever it cost. A sequence's first span of drafts is
// taken when, accepted whole, it would lift the estimate past the share,
// so that a sequence whose drafts are better than the pool's can show it;
// one that could not is cut, and the sequence is the pool's until passes
// thin out.
//
// A drafter that peeks (engine.DraftPeeker: lookup, a prediction) is
// measured without verify rows: at every step without drafts the core
// peeks at the token it would have drafted first and counts it as one
// drafted token, accepted when the step chose it (batcher.peeked). Such a
// sequence drafts beside others only after it has peeked, so it never
// pays a probe on no evidence — after a first peek that hit it probes as
// before (an exact prediction drafts from its second step), after one
// that missed it is judged by its estimate once it has peeked
// peekedFirst times — and a cut sequence's estimate keeps following its
// text:
// a verified draft alone stopped changing once the gate cut it, so a
// sequence cut early stayed cut when its text began to repeat. A peek
// measures the first draft token only, which is accepted at least as
// often as the ones after it: the estimate leans towards drafting, and
// the drafts then verified correct it.
//
// A lone decoding sequence always may: its drafter adapts its own draft
// length. Until the cost line and the pool are measured (gateMinPasses
// passes of at least two row counts, gateMinDrafts drafts) every pass
// may.
//
// Not safe for concurrent use: the batcher holds its lock.
type draftGate struct {
	// Decayed moments of the passes' (rows, seconds).
	n, sr, st, srr, srt float64
	// pool is every sequence's drafts, verified and accepted.
	pool acceptance
}

// acceptance is decayed draft rows verified, and accepted of them (one
// sequence's, or the pool's).
type acceptance struct {
	drafted, accepted float64
	// probed: the sequence's first span of drafts has come to a pass
	// (allow judges it by what it would show), or its peeks stand for it.
	probed bool
	// peeks is the sequence's peeks measured (batcher.peeked), and missed
	// whether one of them missed.
	peeks  int
	missed bool
}

const (
	// gateDecay weighs the passes and drafts measured: each one's weight
	// falls by this factor per later one (about the last 50 count).
	gateDecay = 0.98
	// gateMinPasses and gateMinDrafts are the measurements the gate
	// needs (in decayed weight) before it closes.
	gateMinPasses = 8
	gateMinDrafts = 16
	// gatePrior is the weight, in drafts, of the pool's acceptance in a
	// sequence's estimate: a first draft of 4 fully accepted puts an
	// estimate halfway between the pool's rate and 1.
	gatePrior = 4
	// peekedFirst is the peeks a sequence whose drafter peeks measures
	// before it drafts beside other sequences once one peek missed: its
	// own weight then equals the pool's in its estimate (gatePrior).
	peekedFirst = gatePrior
)

// pass records a batched pass of rows rows that took took.
func (g *draftGate) pass(rows int, took time.Duration) {
	r, t := float64(rows), took.Seconds()
	g.n = g.n*gateDecay + 1
	g.sr = g.sr*gateDecay + r
	g.st = g.st*gateDecay + t
	g.srr = g.srr*gateDecay + r*r
	g.srt = g.srt*gateDecay + r*t
}

// verified records a sequence's verify span's outcome, accepted of drafted
// drafts, in its acceptance ac and the pool.
func (g *draftGate) verified(ac *acceptance, drafted, accepted int) {
	ac.verified(drafted, accepted)
	g.pool.verified(drafted, accepted)
}

// verified records a verify span's outcome: accepted of drafted drafts.
func (ac *acceptance) verified(drafted, accepted int) {
	if drafted <= 0 {
		return
	}
	ac.drafted = ac.drafted*gateDecay + float64(drafted)
	ac.accepted = ac.accepted*gateDecay + float64(min(accepted, drafted))
}

// fit is the cost line's a and b (seconds, seconds per row); ok is false
// until the passes measured span at least two row counts.
func (g *draftGate) fit() (a, b float64, ok bool) {
	if g.n < gateMinPasses {
		return 0, 0, false
	}
	den := g.n*g.srr - g.sr*g.sr
	if den <= 1e-9*g.n*g.n { // one row count: no slope to fit
		return 0, 0, false
	}
	b = (g.n*g.srt - g.sr*g.st) / den
	a = (g.st - b*g.sr) / g.n
	return max(a, 0), max(b, 0), true
}

// share is the part of a pass of rows rows that its rows cost, b·r / t(r),
// and whether it is measured.
func (g *draftGate) share(rows int) (float64, bool) {
	a, b, ok := g.fit()
	if !ok || a+b <= 0 {
		return 0, false
	}
	r := float64(rows)
	return b * r / (a + b*r), true
}

// estimate is a sequence's acceptance ac drawn toward the pool's rate.
func (g *draftGate) estimate(ac acceptance) float64 {
	pool := g.pool.accepted / g.pool.drafted
	return (ac.accepted + gatePrior*pool) / (ac.drafted + gatePrior)
}

// allow reports whether a pass with decodes decoding sequences takes the
// drafts drafts of a sequence whose acceptance is ac: by its estimate, or
// for its first span by the estimate it would have were they all
// accepted.
func (g *draftGate) allow(decodes int, ac acceptance, drafts int) bool {
	if decodes < 2 || g.pool.drafted < gateMinDrafts {
		return true
	}
	s, ok := g.share(decodes)
	if !ok {
		return true
	}
	if !ac.probed {
		ac.verified(drafts, drafts)
	}
	return g.estimate(ac) > s
}
