package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/engine"
	"github.com/realizar-host/realizar-host/host"
	"github.com/realizar-host/realizar-host/plugins"
	"github.com/realizar-host/realizar-host/tokenizer"
)

// benchText is cycled to make a prompt of any length.
const benchText = "The quick brown fox jumps over the lazy dog. Once upon a time, in a land far away, " +
	"there lived a curious child who liked to count the stars and name every one of them. "

func newBenchCmd() *cobra.Command {
	var (
		mf                   modelFlags
		promptTokens, genTok int
		reps, parallel       int
		asJSON               bool
	)
	cmd := &cobra.Command{
		Use:   "bench --model M.gguf [--threads T] [--prompt-tokens P] [--gen-tokens G] [--repetitions R] [--parallel N] [--json]",
		Short: "Measure prefill and decode speed over repeated runs",
		Long: "Run R turns (after one warm-up) of a P-token prompt followed by G generated tokens, with the\n" +
			"embedded greedy sampler and end-of-generation ignored so every run generates G tokens; print\n" +
			"the median, minimum and maximum of the prefill and decode speeds. Every run prefills the\n" +
			"whole prompt (nothing is reused from the run before).\n\n" +
			"--parallel N then decodes B sequences at once in batched passes, for B = 1, 2, 4, ... up to\n" +
			"N (and N itself), and prints the median aggregate and per-sequence decode speeds of each B\n" +
			"(the prefill passes are not counted), as llama.cpp's llama-batched-bench does.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := mf.resolve(); err != nil {
				return err
			}
			for _, f := range []struct {
				name string
				v    int
			}{{"--prompt-tokens", promptTokens}, {"--gen-tokens", genTok}, {"--repetitions", reps}} {
				if f.v < 1 {
					return usage(fmt.Errorf("%s must be >= 1, not %d", f.name, f.v))
				}
			}
			switch {
			case parallel < 0:
				return usage(fmt.Errorf("--parallel %d is negative (0 is off)", parallel))
			case parallel > 0 && genTok < 2:
				return usage(errors.New("--parallel needs --gen-tokens >= 2: the decode passes are those after the first generated token"))
			}
			m, err := loadModel(&mf, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer m.Close()
			if n := m.fwd.ContextLength(); promptTokens+genTok > n {
				return &cmdError{code: exitContext, err: fmt.Errorf("%d prompt + %d generated tokens exceed the context of %d: %w",
					promptTokens, genTok, n, engine.ErrContextExceeded)}
			}
			res, err := bench(cmd.Context(), m, promptTokens, genTok, reps)
			if err != nil {
				return err
			}
			if parallel > 0 {
				if res.Parallel, err = benchParallel(cmd.Context(), m, &mf, parallelSizes(parallel), promptTokens, genTok, reps); err != nil {
					return err
				}
			}
			res.Model, res.Threads = mf.path, mf.threads
			if res.Threads <= 0 { // the model's default: one per usable CPU
				res.Threads = runtime.GOMAXPROCS(0)
			}
			if asJSON {
				return encodeJSON(cmd, res)
			}
			res.writeText(cmd.OutOrStdout())
			return nil
		},
	}
	mf.register(cmd)
	cmd.Flags().IntVar(&promptTokens, "prompt-tokens", 128, "prompt length in tokens")
	cmd.Flags().IntVar(&genTok, "gen-tokens", 32, "tokens generated per run")
	cmd.Flags().IntVar(&reps, "repetitions", 5, "measured runs (after one warm-up run)")
	cmd.Flags().IntVar(&parallel, "parallel", 0, "also measure batched decode of 1, 2, 4, ... up to N sequences at once (0: off)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	return cmd
}

// benchResult is bench's report; speeds in tokens per second.
type benchResult struct {
	Model        string `json:"model"`
	Threads      int    `json:"threads"` // worker threads used
	Backend      string `json:"backend"`
	PromptTokens int    `json:"prompt_tokens"`
	GenTokens    int    `json:"gen_tokens"`
	// PrefillTokens is the tokens each measured run prefilled (the whole
	// prompt: bench refuses a run that reused part of it).
	PrefillTokens int       `json:"prefill_tokens"`
	Prefill       spread    `json:"prefill_tok_per_s"`
	Decode        spread    `json:"decode_tok_per_s"`
	Policies      float64   `json:"policy_us_per_step"` // median
	Runs          []runPace `json:"runs"`
	// Parallel is --parallel's figures, one entry per sequence count.
	Parallel []parallelPace `json:"parallel,omitempty"`
}

// parallelPace is the batched decode speed of Sequences sequences at once
// (medians over the measured rounds).
type parallelPace struct {
	Sequences   int     `json:"sequences"`
	Aggregate   float64 `json:"aggregate_tok_per_s"`    // decode tokens of all sequences per second
	PerSequence float64 `json:"per_sequence_tok_per_s"` // Aggregate / Sequences
}

type spread struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
}

type runPace struct {
	Prefill float64 `json:"prefill_tok_per_s"`
	Decode  float64 `json:"decode_tok_per_s"`
}

func newSpread(xs []float64) spread {
	s := slices.Clone(xs)
	slices.Sort(s)
	mid := s[len(s)/2]
	if len(s)%2 == 0 {
		mid = (s[len(s)/2-1] + mid) / 2
	}
	return spread{Median: mid, Min: s[0], Max: s[len(s)-1]}
}

// bench runs reps+1 turns and summarizes all but the first. The Session
// forgets its state before each, so every run prefills the whole prompt.
func bench(ctx context.Context, m *loaded, promptTokens, genTokens, reps int) (*benchResult, error) {
	h, pl, err := benchGreedy(ctx)
	if err != nil {
		return nil, err
	}
	defer h.Close(ctx)
	sampler, err := host.NewSampler(m.tok, pl)
	if err != nil {
		return nil, badPlugin(err)
	}
	defer sampler.Close()
	sess, err := engine.NewSession(m.fwd, m.tok, engine.WithSampler(sampler))
	if err != nil {
		return nil, failure(err)
	}
	prompt := benchPrompt(m.tok, promptTokens)
	seed := uint64(0)
	cfg := engine.GenerateConfig{MaxTokens: genTokens, IgnoreEOG: true, Seed: &seed, Cancel: engine.FromContext(ctx)}
	res := &benchResult{PromptTokens: promptTokens, GenTokens: genTokens}
	var pre, dec, pol []float64
	for r := 0; r <= reps; r++ {
		sess.Forget() // no prefix from the run before: prefill all of the prompt
		t, err := sess.Generate(prompt, cfg)
		if err != nil {
			return nil, turnError(err)
		}
		if t.Stop == engine.StopCancelled {
			return nil, &cmdError{code: exitInterrupted, err: errors.New("interrupted")}
		}
		if r == 0 {
			continue // warm-up
		}
		if err := checkPrefill(t, promptTokens, fmt.Sprintf("run %d", r)); err != nil {
			return nil, err
		}
		res.PrefillTokens = t.Timings.PrefillTokens
		tm := t.Timings
		p := runPace{Prefill: tokPerSec(tm.PrefillTokens, tm.Prefill), Decode: tokPerSec(tm.DecodeForwards, tm.Decode)}
		res.Runs = append(res.Runs, p)
		pre, dec = append(pre, p.Prefill), append(dec, p.Decode)
		pol = append(pol, microsPerStep(tm.Policies, t.Generated))
	}
	res.Prefill, res.Decode, res.Policies = newSpread(pre), newSpread(dec), newSpread(pol).Median
	res.Backend = backendName(m.fwd.Notices())
	return res, nil
}

// benchGreedy starts a plugin host and loads the embedded greedy sampler,
// bench's policy, into it; the caller closes the host.
func benchGreedy(ctx context.Context) (*host.Host, *host.Plugin, error) {
	h, err := host.New(ctx, cliHostConfig())
	if err != nil {
		return nil, nil, failure(err)
	}
	pl, err := loadPolicy(ctx, h, plugins.GreedyBuiltin, abi.KindSampler, nil, "bench")
	if err != nil {
		_ = h.Close(ctx)
		return nil, nil, err
	}
	return h, pl, nil
}

// checkPrefill refuses a turn that did not prefill all of its want-token
// prompt: its prefill speed would be that of the few tokens it did forward.
func checkPrefill(t engine.Turn, want int, what string) error {
	if got := t.Timings.PrefillTokens; got < want {
		return failure(fmt.Errorf("bench: %s prefilled %d of its %d prompt tokens (%d reused): its prefill speed would not be the prompt's",
			what, got, want, t.Reused))
	}
	return nil
}

// backendName is the backend a forward's Notices name in their first line
// ("Backend: cpu-avx2" gives "cpu-avx2"), or "unknown".
func backendName(notices []string) string {
	if len(notices) == 0 {
		return "unknown"
	}
	name, _ := strings.CutPrefix(notices[0], "Backend: ")
	return name
}

// benchPrompt is BOS (when the vocabulary adds one) followed by benchText's
// tokens, cycled to n tokens in all.
func benchPrompt(tok *tokenizer.Tokenizer, n int) []int32 { return benchPromptAt(tok, n, 0) }

// benchPromptAt is benchPrompt with benchText's tokens rotated left by
// offset: the prompts of different offsets differ (up to the text's length
// in tokens), so no two sequences of --parallel share a prompt.
func benchPromptAt(tok *tokenizer.Tokenizer, n, offset int) []int32 {
	text := tok.Encode(benchText, tokenizer.EncodeOptions{})
	if len(text) == 0 {
		text = []int32{0}
	}
	k := offset % len(text)
	text = append(slices.Clone(text[k:]), text[:k]...)
	out := make([]int32, 0, n)
	if tok.AddBOS() {
		out = append(out, tok.BOS())
	}
	for len(out) < n {
		out = append(out, text[:min(len(text), n-len(out))]...)
	}
	return out
}

func (r *benchResult) writeText(w io.Writer) {
	runs := "runs"
	if len(r.Runs) == 1 {
		runs = "run"
	}
	fmt.Fprintf(w, "%s | backend %s | %d %s\n", r.Model, r.Backend, len(r.Runs), runs)
	fmt.Fprintf(w, "prefill %4d tok: %8.1f tok/s median (%.1f – %.1f)\n", r.PromptTokens, r.Prefill.Median, r.Prefill.Min, r.Prefill.Max)
	fmt.Fprintf(w, "decode  %4d tok: %8.1f tok/s median (%.1f – %.1f)\n", r.GenTokens, r.Decode.Median, r.Decode.Min, r.Decode.Max)
	fmt.Fprintf(w, "policies: %.1f µs/step median\n", r.Policies)
	for _, p := range r.Parallel {
		fmt.Fprintf(w, "parallel %d: aggregate %.1f tok/s, per sequence %.1f tok/s\n", p.Sequences, p.Aggregate, p.PerSequence)
	}
}

// parallelSizes is --parallel n's sequence counts: the powers of two up to
// n, and n itself when it is not one.
func parallelSizes(n int) []int {
	var sizes []int
	for b := 1; b <= n; b *= 2 {
		sizes = append(sizes, b)
	}
	if sizes[len(sizes)-1] != n {
		sizes = append(sizes, n)
	}
	return sizes
}

// prefillPassTokens caps the prompt tokens of all sequences in one batched
// pass (the pass's scratch grows with its rows).
const prefillPassTokens = 512

// benchSeq is one sequence of --parallel: a forward of its own over the
// loaded weights (its own KV cache), a Session with its own greedy sampler,
// and its prompt.
type benchSeq struct {
	fwd     *engine.StepForward
	sess    *engine.Session
	sampler *host.Sampler
	prompt  []int32
}

// benchParallel measures batched decode for each sequence count of sizes:
// for each, one warm-up round and reps measured rounds, and the medians of
// their aggregate decode speeds.
func benchParallel(ctx context.Context, m *loaded, mf *modelFlags, sizes []int, promptTokens, genTokens, reps int) ([]parallelPace, error) {
	h, pl, err := benchGreedy(ctx)
	if err != nil {
		return nil, err
	}
	defer h.Close(ctx)
	seqs, err := newBenchSeqs(m, mf, pl, sizes[len(sizes)-1], promptTokens)
	defer closeBenchSeqs(seqs)
	if err != nil {
		return nil, err
	}
	seed := uint64(0)
	cfg := engine.GenerateConfig{MaxTokens: genTokens, IgnoreEOG: true, Seed: &seed, Cancel: engine.FromContext(ctx)}
	var out []parallelPace
	for _, b := range sizes {
		var agg []float64
		for r := 0; r <= reps; r++ {
			_, tokens, wall, err := parallelRound(seqs[:b], cfg, promptTokens)
			if err != nil {
				return nil, err
			}
			if r > 0 { // round 0 warms up
				agg = append(agg, tokPerSec(tokens, wall))
			}
		}
		a := newSpread(agg).Median
		out = append(out, parallelPace{Sequences: b, Aggregate: a, PerSequence: a / float64(b)})
	}
	return out, nil
}

// newBenchSeqs makes n sequences over m's weights, each with a sampler of
// the plugin pl and the bench prompt rotated by its index. The sequences
// made before an error are returned with it, for closeBenchSeqs.
func newBenchSeqs(m *loaded, mf *modelFlags, pl *host.Plugin, n, promptTokens int) ([]benchSeq, error) {
	seqs := make([]benchSeq, 0, n)
	for i := range n {
		var fwd *engine.StepForward
		var err error
		if m.gpu != nil {
			fwd, err = m.newGPUForward(mf) // a KV cache of its own on the device
		} else {
			fwd, err = m.forward(m.model.NewStep(), mf)
		}
		if err != nil {
			return seqs, failure(err)
		}
		// One sampler per Session: a plugin instance serves one turn at a time.
		sampler, err := host.NewSampler(m.tok, pl)
		if err != nil {
			_ = fwd.Close()
			return seqs, badPlugin(err)
		}
		seqs = append(seqs, benchSeq{fwd: fwd, sampler: sampler, prompt: benchPromptAt(m.tok, promptTokens, i)})
		if seqs[i].sess, err = engine.NewSession(fwd, m.tok, engine.WithSampler(sampler)); err != nil {
			return seqs, failure(err)
		}
	}
	return seqs, nil
}

// closeBenchSeqs closes the sequences' samplers and forwards (a GPU
// sequence's device memory).
func closeBenchSeqs(seqs []benchSeq) {
	for _, q := range seqs {
		if q.sampler != nil {
			_ = q.sampler.Close()
		}
		_ = q.fwd.Close()
	}
}

// parallelRound runs one turn on every sequence at once, driving the Runs
// through shared batched passes (engine.ForwardBatch): the prompts first,
// in chunks of at most prefillPassTokens tokens per pass, then one decode
// token per sequence per pass. It returns the tokens of the passes in which
// every span was a one-token decode and the wall time of those passes, and
// the sequences' turns.
func parallelRound(seqs []benchSeq, cfg engine.GenerateConfig, promptTokens int) (turns []engine.Turn, decoded int, wall time.Duration, err error) {
	runs := make([]*engine.Run, 0, len(seqs))
	defer func() { // every Run ends exactly once, also after a failure
		for i, run := range runs {
			t, rerr := run.Result()
			turns = append(turns, t)
			switch {
			case err != nil:
			case rerr != nil:
				err = turnError(rerr)
			case t.Stop == engine.StopCancelled:
				err = &cmdError{code: exitInterrupted, err: errors.New("interrupted")}
			default:
				err = checkPrefill(t, promptTokens, fmt.Sprintf("parallel sequence %d of %d", i+1, len(seqs)))
			}
		}
	}()
	for _, q := range seqs {
		q.sess.Forget()
		run, err := q.sess.Begin(q.prompt, cfg)
		if err != nil {
			return nil, 0, 0, turnError(err)
		}
		runs = append(runs, run)
	}
	// chunked[i]: sequence i's prompt is part way through its forward, which
	// holds seqs[i].fwd.Held() of its tokens.
	chunked := make([]bool, len(seqs))
	spans := make([]engine.Span, 0, len(seqs))
	owner := make([]int, 0, len(seqs))
	for {
		spans, owner = spans[:0], owner[:0]
		decodeOnly := true
		for i, run := range runs {
			tokens, start, ok := run.Next()
			if !ok {
				continue
			}
			if chunked[i] {
				start = seqs[i].fwd.Held()
			}
			if len(tokens)-start > 1 {
				decodeOnly = false
			}
			spans = append(spans, engine.Span{Fwd: seqs[i].fwd, Tokens: tokens, Start: start})
			owner = append(owner, i)
		}
		if len(spans) == 0 {
			return nil, decoded, wall, nil
		}
		if !decodeOnly {
			per := max(1, prefillPassTokens/len(spans))
			for j := range spans {
				spans[j].Max = per
			}
		}
		t0 := time.Now()
		engine.ForwardBatch(spans)
		took := time.Since(t0)
		if decodeOnly {
			decoded, wall = decoded+len(spans), wall+took
		}
		for j, sp := range spans {
			i := owner[j]
			if chunked[i] = sp.Err == nil && sp.Logits == nil; chunked[i] {
				continue // the rest of the prompt goes in the next pass
			}
			runs[i].Feed(sp.Logits, sp.Took, sp.Err)
		}
	}
}
