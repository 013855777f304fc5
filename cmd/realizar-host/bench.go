package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/engine"
	"github.com/realizar-host/realizar-host/host"
	"github.com/realizar-host/realizar-host/tokenizer"
)

// benchText is cycled to make a prompt of any length.
const benchText = "The quick brown fox jumps over the lazy dog. Once upon a time, in a land far away, " +
	"there lived a curious child who liked to count the stars and name every one of them. "

func newBenchCmd() *cobra.Command {
	var (
		mf                   modelFlags
		promptTokens, genTok int
		reps                 int
		asJSON               bool
	)
	cmd := &cobra.Command{
		Use:   "bench --model M.gguf [--threads T] [--prompt-tokens P] [--gen-tokens G] [--repetitions R] [--json]",
		Short: "Measure prefill and decode speed over repeated runs",
		Long: "Run R turns (after one warm-up) of a P-token prompt followed by G generated tokens, with the\n" +
			"embedded greedy sampler and end-of-generation ignored so every run generates G tokens; print\n" +
			"the median, minimum and maximum of the prefill and decode speeds.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := mf.resolve(); err != nil {
				return err
			}
			if promptTokens < 1 || genTok < 1 || reps < 1 {
				return usage(errors.New("--prompt-tokens, --gen-tokens and --repetitions must be >= 1"))
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
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	return cmd
}

// benchResult is bench's report; speeds in tokens per second.
type benchResult struct {
	Model        string    `json:"model"`
	Threads      int       `json:"threads"` // worker threads used
	Backend      string    `json:"backend"`
	PromptTokens int       `json:"prompt_tokens"`
	GenTokens    int       `json:"gen_tokens"`
	Prefill      spread    `json:"prefill_tok_per_s"`
	Decode       spread    `json:"decode_tok_per_s"`
	Policies     float64   `json:"policy_us_per_step"` // median
	Runs         []runPace `json:"runs"`
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

// bench runs reps+1 turns and summarizes all but the first.
func bench(ctx context.Context, m *loaded, promptTokens, genTokens, reps int) (*benchResult, error) {
	h, err := host.New(ctx, host.NewConfig())
	if err != nil {
		return nil, failure(err)
	}
	defer h.Close(ctx)
	pl, err := loadPolicy(ctx, h, builtinGreedy, abi.KindSampler, nil, "bench")
	if err != nil {
		return nil, err
	}
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
func benchPrompt(tok *tokenizer.Tokenizer, n int) []int32 {
	text := tok.Encode(benchText, tokenizer.EncodeOptions{})
	if len(text) == 0 {
		text = []int32{0}
	}
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
	fmt.Fprintf(w, "%s | backend %s | %d runs\n", r.Model, r.Backend, len(r.Runs))
	fmt.Fprintf(w, "prefill %4d tok: %8.1f tok/s median (%.1f – %.1f)\n", r.PromptTokens, r.Prefill.Median, r.Prefill.Min, r.Prefill.Max)
	fmt.Fprintf(w, "decode  %4d tok: %8.1f tok/s median (%.1f – %.1f)\n", r.GenTokens, r.Decode.Median, r.Decode.Min, r.Decode.Max)
	fmt.Fprintf(w, "policies: %.1f µs/step median\n", r.Policies)
}
