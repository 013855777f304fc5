package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/realizar-host/realizar-host/engine"
	"github.com/realizar-host/realizar-host/internal/draft"
)

// specPace is one draft source's decode speed in bench --spec: medians
// over the measured rounds, each round's ratio taken against the plain
// turn of the same round (the modes of a round run one after another).
type specPace struct {
	Mode     string  `json:"mode"`
	Decode   float64 `json:"decode_tok_per_s"` // DecodeTokens / DecodeWall, median
	Ratio    float64 `json:"ratio"`            // against plain, median of the rounds' ratios
	Drafted  int     `json:"drafted"`          // of the last round
	Accepted int     `json:"accepted"`
	Passes   int     `json:"passes"`
}

// specMode is a draft source bench --spec measures; draft makes the
// round's drafter from the plain turn's answer (nil: plain decoding).
type specMode struct {
	name  string
	draft func(answer []int32, vocab int) engine.Drafter
}

// specModes are bench --spec's draft sources, plain first.
var specModes = []specMode{
	{"plain", func([]int32, int) engine.Drafter { return nil }},
	{"prediction = answer", func(a []int32, _ int) engine.Drafter {
		return draft.NewPrediction(a, draft.PredictionOptions{})
	}},
	{"prediction, every 20th token changed", func(a []int32, vocab int) engine.Drafter {
		p := slices.Clone(a)
		for i := 19; i < len(p); i += 20 {
			p[i] = (p[i] + 1) % int32(vocab)
		}
		return draft.NewPrediction(p, draft.PredictionOptions{})
	}},
	{"prediction unrelated (nothing to draft)", func(a []int32, vocab int) engine.Drafter {
		p := slices.Clone(a)
		for i := range p {
			p[i] = (p[i] + int32(vocab)/2 + int32(i)) % int32(vocab)
		}
		return draft.NewPrediction(p, draft.PredictionOptions{})
	}},
	{"lookup", func([]int32, int) engine.Drafter { return draft.NewLookup(draft.LookupOptions{}) }},
}

// benchSpec runs reps+1 rounds (the first a warm-up) of every specMode on
// the same prompt with the greedy sampler, generating genTokens each, and
// checks that every mode generates the plain turn's tokens.
func benchSpec(ctx context.Context, m *loaded, dl *draftLoaded, promptTokens, genTokens, reps int) ([]specPace, error) {
	specModes := specModesWith(dl)
	sess, closeSess, err := benchSession(ctx, m)
	if err != nil {
		return nil, err
	}
	defer closeSess()
	prompt := benchPrompt(m.tok, promptTokens)
	seed := uint64(0)
	rates := make([][]float64, len(specModes))
	ratios := make([][]float64, len(specModes))
	out := make([]specPace, len(specModes))
	var answer []int32
	for r := 0; r <= reps; r++ {
		var plain float64
		for i, mode := range specModes {
			sess.Forget()
			cfg := engine.GenerateConfig{MaxTokens: genTokens, IgnoreEOG: true, Seed: &seed, Cancel: engine.FromContext(ctx),
				Draft: mode.draft(answer, m.tok.Size())}
			t, err := sess.Generate(prompt, cfg)
			if err != nil {
				return nil, turnError(err)
			}
			if t.Stop == engine.StopCancelled {
				return nil, &cmdError{code: exitInterrupted, err: errors.New("interrupted")}
			}
			if i == 0 {
				answer = slices.Clone(t.GeneratedTokens())
			} else if !slices.Equal(answer, t.GeneratedTokens()) {
				return nil, failure(fmt.Errorf("bench --spec: %s generated other tokens than plain decoding", mode.name))
			}
			rate := tokPerSec(t.Timings.DecodeTokens, t.Timings.DecodeWall)
			if i == 0 {
				plain = rate
			}
			out[i].Drafted, out[i].Accepted, out[i].Passes = t.Drafts.Drafted, t.Drafts.Accepted, t.Drafts.Passes
			if r == 0 {
				continue // warm-up
			}
			rates[i] = append(rates[i], rate)
			ratios[i] = append(ratios[i], rate/plain)
		}
	}
	for i, mode := range specModes {
		out[i].Mode, out[i].Decode, out[i].Ratio = mode.name, newSpread(rates[i]).Median, newSpread(ratios[i]).Median
	}
	return out, nil
}

// writeSpec prints bench --spec's table.
func writeSpec(w io.Writer, paces []specPace) {
	for _, p := range paces {
		fmt.Fprintf(w, "spec %-40s %8.1f tok/s  %5.2fx  drafts %d accepted / %d in %s\n",
			p.Mode+":", p.Decode, p.Ratio, p.Accepted, p.Drafted, passes(p.Passes))
	}
}

// specParallel is bench --spec --parallel N's figures: the aggregate
// decode speed of N sequences at once with lookup and without, each the
// round's decode tokens over its longest decode phase (the turns start
// decoding together), medians over the measured rounds, and the median of
// the rounds' ratios.
type specParallel struct {
	Sequences int     `json:"sequences"`
	Plain     float64 `json:"plain_tok_per_s"`
	Lookup    float64 `json:"lookup_tok_per_s"`
	Ratio     float64 `json:"ratio"`
	Drafted   int     `json:"drafted"` // the last round's, all sequences
	Accepted  int     `json:"accepted"`
}

// benchSpecParallel runs reps+1 rounds (the first a warm-up) of b turns at
// once on one serving core, plain and with lookup in each round, lookup
// first in odd rounds.
func benchSpecParallel(ctx context.Context, m *loaded, mf *modelFlags, b, promptTokens, genTokens, reps int) (*specParallel, error) {
	h, pl, err := benchGreedy(ctx)
	if err != nil {
		return nil, err
	}
	defer h.Close(ctx)
	core, err := newBenchCore(m, mf, b, nil)
	if err != nil {
		return nil, err
	}
	defer core.Close()
	prompts := make([][]int32, b)
	for i := range prompts {
		prompts[i] = benchPromptAt(m.tok, promptTokens, i)
	}
	lookup := func() engine.Drafter { return draft.NewLookup(draft.LookupOptions{}) }
	out := &specParallel{Sequences: b}
	var plain, looked, ratios []float64
	for r := 0; r <= reps; r++ {
		var rates [2]float64
		modes := []func() engine.Drafter{nil, lookup}
		for k := range modes {
			// Odd rounds run lookup first: a mode that always ran second
			// measured 2% slower with no drafter at all (plain against
			// plain, 8 sequences, tinyllama-1b: 1.01, 0.98, 0.93).
			i := k
			if r%2 == 1 {
				i = len(modes) - 1 - k
			}
			nd := modes[i]
			turns, err := parallelRound(ctx, core, m.tok, pl, prompts, genTokens, nd)
			if err != nil {
				return nil, err
			}
			tokens, wall := 0, time.Duration(0)
			drafted, accepted := 0, 0
			for _, t := range turns {
				tokens += t.Timings.DecodeTokens
				wall = max(wall, t.Timings.DecodeWall)
				drafted, accepted = drafted+t.Drafts.Drafted, accepted+t.Drafts.Accepted
			}
			rates[i] = tokPerSec(tokens, wall)
			if i == 1 {
				out.Drafted, out.Accepted = drafted, accepted
			}
		}
		if r == 0 {
			continue // warm-up
		}
		plain, looked, ratios = append(plain, rates[0]), append(looked, rates[1]), append(ratios, rates[1]/rates[0])
	}
	out.Plain, out.Lookup, out.Ratio = newSpread(plain).Median, newSpread(looked).Median, newSpread(ratios).Median
	return out, nil
}
