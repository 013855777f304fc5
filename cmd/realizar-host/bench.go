package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/engine"
	"github.com/realizar-host/realizar-host/forward"
	"github.com/realizar-host/realizar-host/host"
	"github.com/realizar-host/realizar-host/internal/plugins"
	"github.com/realizar-host/realizar-host/internal/plugins/chain"
	"github.com/realizar-host/realizar-host/internal/serving"
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
		asJSON, spec         bool
		draftModel           string
	)
	cmd := &cobra.Command{
		Use:   "bench --model M.gguf [--threads T] [--prompt-tokens P] [--gen-tokens G] [--repetitions R] [--parallel N] [--spec [--draft-model D.gguf]] [--json]",
		Short: "Measure prefill and decode speed over repeated runs",
		Long: "Run R turns (after one warm-up) of a P-token prompt followed by G generated tokens, with the\n" +
			"embedded greedy sampler and end-of-generation ignored so every run generates G tokens; print\n" +
			"the median, minimum and maximum of the prefill and decode speeds. Every run prefills the\n" +
			"whole prompt (nothing is reused from the run before).\n\n" +
			"--parallel N then runs B turns at once on the serving core that serve runs (B places, its\n" +
			"batched passes), for B = 1, 2, 4, ... up to N (and N itself), each turn with its own prompt\n" +
			"and the turns starting to decode together, and prints the median aggregate and per-sequence\n" +
			"decode speeds of each B: the tokens of the passes of one-token decodes alone over their wall\n" +
			"time (the prefill passes are not counted), as llama.cpp's llama-batched-bench does.\n\n" +
			"--spec then runs R+1 rounds (the first a warm-up) of speculative decoding on the same prompt:\n" +
			"plain, a prediction equal to the plain answer's tokens, the same with every 20th token changed,\n" +
			"an unrelated prediction (nothing to draft) and n-gram lookup, one after another in each round;\n" +
			"each mode's decode speed is its decode phase's tokens over its wall time (forward, policies and\n" +
			"drafting together), with the median of its ratios to the same round's plain turn. Every mode\n" +
			"must generate the plain turn's tokens. --draft-model adds the draft model's greedy drafts as a mode.",
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
			case spec && genTok < 2:
				return usage(errors.New("--spec needs --gen-tokens >= 2: the decode passes are those after the first generated token"))
			case draftModel != "" && !spec:
				return usage(errors.New("--draft-model needs --spec"))
			}
			m, err := loadModel(&mf, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer m.Close()
			if n := m.fwd.ContextLength(); promptTokens+genTok > n {
				return &cmdError{code: exitContext, err: fmt.Errorf("%d prompt + %d generated tokens exceed the context of %d: %w",
					promptTokens, genTok, n, forward.ErrContextExceeded)}
			}
			res, err := bench(cmd.Context(), m, promptTokens, genTok, reps)
			if err != nil {
				return err
			}
			if spec {
				dl, err := benchDraftModel(draftModel, &mf, m, cmd.ErrOrStderr())
				if err != nil {
					return err
				}
				defer dl.Close()
				if res.Spec, err = benchSpec(cmd.Context(), m, dl, promptTokens, genTok, reps); err != nil {
					return err
				}
			}
			if spec && parallel > 0 {
				if res.SpecParallel, err = benchSpecParallel(cmd.Context(), m, &mf, parallel, promptTokens, genTok, reps); err != nil {
					return err
				}
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
	cmd.Flags().BoolVar(&spec, "spec", false, "also measure speculative decoding (predictions and lookup) against plain decoding, side by side")
	registerDraftModel(cmd, &draftModel)
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
	// Spec is --spec's figures, one entry per draft source (plain first).
	Spec []specPace `json:"spec,omitempty"`
	// SpecParallel is --spec with --parallel N: N sequences at once on
	// the serving core, with lookup and without.
	SpecParallel *specParallel `json:"spec_parallel,omitempty"`
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

// benchSession is a Session over m with the embedded greedy sampler, the
// one every bench mode decodes with; closeSess releases the sampler and
// its host.
func benchSession(ctx context.Context, m *loaded) (sess *engine.Session, closeSess func(), err error) {
	h, pl, err := benchGreedy(ctx)
	if err != nil {
		return nil, nil, err
	}
	sampler, err := host.NewSampler(m.tok, pl)
	if err != nil {
		h.Close(ctx)
		return nil, nil, badPlugin(err)
	}
	sess, err = engine.NewSession(m.fwd, m.tok, engine.WithSampler(sampler))
	if err != nil {
		sampler.Close()
		h.Close(ctx)
		return nil, nil, failure(err)
	}
	return sess, func() { sampler.Close(); h.Close(ctx) }, nil
}

// bench runs reps+1 turns and summarizes all but the first. The Session
// forgets its state before each, so every run prefills the whole prompt.
func bench(ctx context.Context, m *loaded, promptTokens, genTokens, reps int) (*benchResult, error) {
	sess, closeSess, err := benchSession(ctx, m)
	if err != nil {
		return nil, err
	}
	defer closeSess()
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
	pl, err := loadPolicy(ctx, h, chain.Part{Ref: plugins.GreedyBuiltin, Param: "bench"}, abi.KindSampler)
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
	writeSpec(w, r.Spec)
	if p := r.SpecParallel; p != nil {
		fmt.Fprintf(w, "spec parallel %d: plain %.1f tok/s, lookup %.1f tok/s (%.2fx), drafts %d accepted / %d\n",
			p.Sequences, p.Plain, p.Lookup, p.Ratio, p.Accepted, p.Drafted)
	}
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

// benchBatchTokens is the rows one pass of --parallel's cores processes
// (serving.Config.BatchTokens): enough for a round's prompts to prefill in
// few passes, no more (the pass's scratch grows with its rows).
const benchBatchTokens = 512

// benchTenant is the one tenant of --parallel's turns.
const benchTenant = "bench"

// benchParallel measures batched decode for each sequence count b of sizes
// on the serving core the server runs: for each, a core of b places, one
// warm-up round and reps measured rounds, and the median of their
// aggregate decode speeds.
func benchParallel(ctx context.Context, m *loaded, mf *modelFlags, sizes []int, promptTokens, genTokens, reps int) ([]parallelPace, error) {
	h, pl, err := benchGreedy(ctx)
	if err != nil {
		return nil, err
	}
	defer h.Close(ctx)
	var out []parallelPace
	for _, b := range sizes {
		a, err := parallelAggregate(ctx, m, mf, pl, b, promptTokens, genTokens, reps)
		if err != nil {
			return nil, err
		}
		out = append(out, parallelPace{Sequences: b, Aggregate: a, PerSequence: a / float64(b)})
	}
	return out, nil
}

// parallelAggregate is the median aggregate decode speed of b sequences at
// once: a core of b places (each a forward of its own over m's weights,
// kept from round to round), one warm-up round and reps measured rounds of
// b turns, sequence i with the bench prompt rotated by i.
func parallelAggregate(ctx context.Context, m *loaded, mf *modelFlags, pl *host.Plugin, b, promptTokens, genTokens, reps int) (float64, error) {
	var passes decodePasses
	core, err := newBenchCore(m, mf, b, passes.add)
	if err != nil {
		return 0, err
	}
	defer core.Close()
	prompts := make([][]int32, b)
	for i := range prompts {
		prompts[i] = benchPromptAt(m.tok, promptTokens, i)
	}
	var agg []float64
	for r := 0; r <= reps; r++ {
		passes.reset()
		if _, err := parallelRound(ctx, core, m.tok, pl, prompts, genTokens, nil); err != nil {
			return 0, err
		}
		tokens, wall := passes.sum()
		if r > 0 { // round 0 warms up
			agg = append(agg, tokPerSec(tokens, wall))
		}
	}
	return newSpread(agg).Median, nil
}

// newBenchCore is a serving core of b places for --parallel, each place a
// forward of its own over m's weights (on the device under --gpu), that
// reports its passes to onPass; the caller closes it.
func newBenchCore(m *loaded, mf *modelFlags, b int, onPass func(serving.PassStats)) (*serving.Core, error) {
	core, err := serving.New(serving.Model{Forward: m.fwd, NewForward: func() (forward.ArchForward, error) { return m.newSequence(mf) },
		KVBytesPerPosition: m.model.KVBytesPerPosition(), Vocab: m.tok},
		serving.Config{Parallel: b, BatchTokens: max(benchBatchTokens, b), Queue: b, OnPass: onPass})
	if err != nil {
		return nil, failure(err)
	}
	return core, nil
}

// decodePasses sums the passes a core reports in which every span was a
// one-token decode: their tokens and wall time (the prefill passes, and
// those that mix prompts and decodes, are not counted).
type decodePasses struct {
	mu     sync.Mutex
	tokens int
	wall   time.Duration
}

// add is the core's Config.OnPass.
func (p *decodePasses) add(s serving.PassStats) {
	if !s.Decode {
		return
	}
	p.mu.Lock()
	p.tokens += s.Rows
	p.wall += s.Took
	p.mu.Unlock()
}

func (p *decodePasses) reset() {
	p.mu.Lock()
	p.tokens, p.wall = 0, 0
	p.mu.Unlock()
}

// sum is the decode passes' tokens and wall time since the last reset;
// after a round's turns have ended it holds all of their passes (the core
// reports a pass before answering it).
func (p *decodePasses) sum() (int, time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.tokens, p.wall
}

// parallelRound starts one turn per prompt on core at once (the same
// tenant; end-of-generation ignored, so each generates genTokens), each
// with a greedy sampler of its own (a plugin instance serves one turn at a
// time), and returns their turns once all have ended. A turn that failed,
// was interrupted or did not prefill its whole prompt fails the round.
//
// The turns wait for each other at their first token (firstToken), so
// that the core decodes them together, as b sequences at once, none of
// them beside the others' prompts.
//
// newDraft, when not nil, gives each turn a drafter of its own (bench
// --spec).
func parallelRound(ctx context.Context, core *serving.Core, tok *tokenizer.Tokenizer, pl *host.Plugin, prompts [][]int32, genTokens int, newDraft func() engine.Drafter) ([]engine.Turn, error) {
	gate := newFirstToken(len(prompts))
	var samplers []*host.Sampler
	defer func() {
		for _, s := range samplers {
			_ = s.Close()
		}
	}()
	seed := uint64(0)
	started := make([]*serving.Turn, 0, len(prompts))
	var err error
	for _, prompt := range prompts {
		sampler, serr := host.NewSampler(tok, pl)
		if serr != nil {
			err = badPlugin(serr)
			break
		}
		samplers = append(samplers, sampler)
		ticket, aerr := core.Admit(benchTenant)
		if aerr != nil {
			err = failure(aerr)
			break
		}
		gated := gate.sampler(sampler)
		gen := engine.GenerateConfig{IgnoreEOG: true, Seed: &seed, Sampler: gated}
		if newDraft != nil {
			gen.Draft = newDraft()
		}
		t, serr := ticket.Start(ctx, serving.Request{Prompt: prompt, MaxTokens: genTokens, Generate: gen})
		if serr != nil {
			err = turnError(serr)
			break
		}
		started = append(started, t)
		go func() { // a turn that ends without a token holds no one
			<-t.Done()
			gated.leave()
		}()
	}
	for range len(prompts) - len(started) {
		gate.arrive() // the turns never started
	}
	if err != nil {
		for _, t := range started {
			t.Cancel(err)
		}
	}
	// Every started turn ends before its sampler closes, also after a
	// failure.
	turns := make([]engine.Turn, 0, len(started))
	for i, t := range started {
		res, rerr := t.Result()
		turns = append(turns, res.Turn)
		switch {
		case err != nil:
		case res.Turn.Stop == engine.StopCancelled || errors.Is(rerr, engine.ErrCancelled):
			err = &cmdError{code: exitInterrupted, err: errors.New("interrupted")}
		case rerr != nil:
			err = turnError(rerr)
		default:
			err = checkPrefill(res.Turn, len(prompts[i]), fmt.Sprintf("parallel sequence %d of %d", i+1, len(prompts)))
		}
	}
	return turns, err
}

// firstToken holds each turn of a round at its first token until every
// turn has come to its own or ended. Turns started together reach the
// core's passes a little apart, and the core prefills a prompt that comes
// late beside the sequences already decoding, a few rows a pass (as a
// server must, to keep their pace): without the gate, the first turns of
// a round decoded beside the others' prompts and ended before them, and
// few passes decoded all of them at once. With it, the prompts prefill in
// passes of their own, and the decode passes that follow hold the round's
// sequences together.
type firstToken struct {
	mu      sync.Mutex
	left    int
	open    chan struct{}
	waiting int           // turns held at the gate, not yet through it
	through chan struct{} // closed when they all are
}

func newFirstToken(n int) *firstToken {
	g := &firstToken{left: n, open: make(chan struct{}), through: make(chan struct{})}
	if n == 0 {
		close(g.open)
	}
	return g
}

// sampler is s held at the gate before its first token.
func (g *firstToken) sampler(s engine.Sampler) *gatedSampler {
	return &gatedSampler{Sampler: s, gate: g}
}

// wait holds a turn at the gate until every turn has arrived. The last to
// arrive opens it and goes on once the others have gone through: the
// turns held longest are those the core stopped waiting for when it
// prefilled the later prompts without them, and a first decode pass
// started by the last turn alone would leave them behind.
func (g *firstToken) wait() {
	g.mu.Lock()
	g.left--
	if g.left > 0 {
		g.waiting++
		g.mu.Unlock()
		<-g.open
		g.mu.Lock()
		if g.waiting--; g.waiting == 0 {
			close(g.through)
		}
		g.mu.Unlock()
		return
	}
	none := g.waiting == 0
	close(g.open)
	g.mu.Unlock()
	if !none {
		<-g.through
	}
}

// arrive counts one turn at the gate.
func (g *firstToken) arrive() {
	g.mu.Lock()
	if g.left--; g.left == 0 {
		close(g.open)
	}
	g.mu.Unlock()
}

// gatedSampler is a turn's sampler behind its round's firstToken gate.
type gatedSampler struct {
	engine.Sampler
	gate *firstToken
	once sync.Once
}

// Sample waits for the round's other turns before the first token.
func (s *gatedSampler) Sample(logits []float32) (int32, error) {
	s.once.Do(s.gate.wait)
	return s.Sampler.Sample(logits)
}

// leave counts the turn at the gate without waiting (it has ended); after
// its first token it does nothing.
func (s *gatedSampler) leave() { s.once.Do(s.gate.arrive) }
