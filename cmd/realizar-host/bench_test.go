package main

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/engine"
	"github.com/realizar-host/realizar-host/host"
	"github.com/realizar-host/realizar-host/internal/plugins"
	"github.com/realizar-host/realizar-host/internal/plugins/chain"
	"github.com/realizar-host/realizar-host/internal/serving"
)

func TestParallelSizes(t *testing.T) {
	tests := []struct {
		n    int
		want []int
	}{
		{1, []int{1}},
		{2, []int{1, 2}},
		{3, []int{1, 2, 3}},
		{8, []int{1, 2, 4, 8}},
		{12, []int{1, 2, 4, 8, 12}},
	}
	for _, tt := range tests {
		t.Run(strconv.Itoa(tt.n), func(t *testing.T) {
			assert.Equal(t, tt.want, parallelSizes(tt.n))
		})
	}
}

func TestCheckPrefill(t *testing.T) {
	tests := []struct {
		name    string
		turn    engine.Turn
		wantErr string
	}{
		{"the whole prompt", engine.Turn{Timings: engine.Timings{PrefillTokens: 128}}, ""},
		// What bench measured before it forgot the warm-up's prompt: the
		// Session reused 127 tokens and re-forwarded one.
		{"a reused prompt", engine.Turn{Reused: 127, Timings: engine.Timings{PrefillTokens: 1}},
			"bench: run 1 prefilled 1 of its 128 prompt tokens (127 reused)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkPrefill(tt.turn, 128, "run 1")
			if tt.wantErr == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.wantErr)
			var ce *cmdError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, exitFailure, ce.code)
		})
	}
}

func TestBenchPromptAtDiffers(t *testing.T) {
	m, err := loadModel(&modelFlags{path: storiesModel(t)}, nil)
	require.NoError(t, err)
	defer m.Close()
	base := benchPrompt(m.tok, 32)
	require.Len(t, base, 32)
	assert.Equal(t, base, benchPromptAt(m.tok, 32, 0))
	for off := 1; off < 8; off++ {
		p := benchPromptAt(m.tok, 32, off)
		require.Len(t, p, 32)
		assert.NotEqual(t, base, p, "offset %d", off)
		if m.tok.AddBOS() {
			assert.Equal(t, m.tok.BOS(), p[0], "BOS stays first")
		}
	}
}

// TestBenchJSON: every measured run prefills the whole prompt, and
// --parallel N reports one entry per sequence count.
func TestBenchJSON(t *testing.T) {
	model := storiesModel(t)
	tests := []struct {
		name      string
		args      []string
		sequences []int
	}{
		{"one stream", nil, nil},
		{"parallel 2", []string{"--parallel", "2"}, []int{1, 2}},
		{"parallel 3", []string{"--parallel", "3"}, []int{1, 2, 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"bench", "-m", model, "--prompt-tokens", "24", "--gen-tokens", "4",
				"--repetitions", "2", "--json"}, tt.args...)
			out, stderr, code := runIn(t, "", args...)
			require.Equal(t, 0, code, stderr)
			var b benchResult
			require.NoError(t, json.Unmarshal([]byte(out), &b))
			assert.Equal(t, 24, b.PromptTokens)
			assert.Equal(t, b.PromptTokens, b.PrefillTokens, "every run prefills the whole prompt")
			assert.Len(t, b.Runs, 2)
			var doc map[string]any
			require.NoError(t, json.Unmarshal([]byte(out), &doc))
			assert.EqualValues(t, 24, doc["prefill_tokens"], "a top-level integer")
			require.Len(t, b.Parallel, len(tt.sequences))
			for i, p := range b.Parallel {
				assert.Equal(t, tt.sequences[i], p.Sequences)
				assert.Greater(t, p.Aggregate, 0.0)
				assert.Greater(t, p.PerSequence, 0.0)
				assert.InDelta(t, p.Aggregate/float64(p.Sequences), p.PerSequence, 1e-9)
			}
			if tt.sequences == nil {
				assert.NotContains(t, doc, "parallel")
			}
		})
	}
}

func TestBenchParallelText(t *testing.T) {
	model := storiesModel(t)
	out, stderr, code := runIn(t, "", "bench", "-m", model, "--prompt-tokens", "8", "--gen-tokens", "3",
		"--repetitions", "1", "--parallel", "2")
	require.Equal(t, 0, code, stderr)
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	require.Len(t, lines, 6, out)
	assert.Regexp(t, `^parallel 1: aggregate \d+\.\d tok/s, per sequence \d+\.\d tok/s$`, lines[4])
	assert.Regexp(t, `^parallel 2: aggregate \d+\.\d tok/s, per sequence \d+\.\d tok/s$`, lines[5])
}

func TestBenchParallelUsage(t *testing.T) {
	model := storiesModel(t)
	tests := []struct {
		name string
		args []string
		msg  string
	}{
		{"negative", []string{"--parallel", "-1"}, "--parallel -1 is negative"},
		{"one generated token", []string{"--parallel", "2", "--gen-tokens", "1"}, "--parallel needs --gen-tokens >= 2"},
		{"spec one generated token", []string{"--spec", "--gen-tokens", "1"}, "--spec needs --gen-tokens >= 2"},
		{"spec json one generated token", []string{"--spec", "--json", "--gen-tokens", "1"}, "--spec needs --gen-tokens >= 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := runIn(t, "", append([]string{"bench", "-m", model}, tt.args...)...)
			assert.Equal(t, exitUsage, code, stderr)
			assert.Contains(t, stderr, tt.msg)
			assert.Empty(t, stdout)
		})
	}
}

// TestParallelRoundMatchesGenerate: the turns of a round, driven through
// the serving core's shared batched passes, generate what each generates
// alone, with short prompts and prompts chunked over several passes (3 ×
// 300 tokens > benchBatchTokens), round after round on the same core's
// caches; every decode token goes in a pass of decodes alone (the turns
// wait for each other's prompts at their first token), and is counted.
func TestParallelRoundMatchesGenerate(t *testing.T) {
	ctx := context.Background()
	mf := &modelFlags{path: storiesModel(t)}
	m, err := loadModel(mf, nil)
	require.NoError(t, err)
	defer m.Close()
	h, err := host.New(ctx, host.NewConfig())
	require.NoError(t, err)
	defer h.Close(ctx)
	pl, err := loadPolicy(ctx, h, chain.Part{Ref: plugins.GreedyBuiltin, Param: "bench"}, abi.KindSampler)
	require.NoError(t, err)
	sampler, err := host.NewSampler(m.tok, pl)
	require.NoError(t, err)
	defer sampler.Close()
	alone, err := engine.NewSession(m.fwd, m.tok, engine.WithSampler(sampler))
	require.NoError(t, err)

	tests := []struct {
		name         string
		seqs, prompt int
		gen          int
	}{
		{"short prompts", 3, 24, 6},
		{"chunked prompts", 3, 300, 6},
		{"one sequence", 1, 16, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var passes decodePasses
			core, err := newBenchCore(m, mf, tt.seqs, passes.add)
			require.NoError(t, err)
			defer core.Close()
			prompts := make([][]int32, tt.seqs)
			for i := range prompts {
				prompts[i] = benchPromptAt(m.tok, tt.prompt, i)
			}
			seed := uint64(0)
			cfg := engine.GenerateConfig{MaxTokens: tt.gen, IgnoreEOG: true, Seed: &seed}
			for round := range 3 { // later rounds start from used caches
				passes.reset()
				turns, err := parallelRound(ctx, core, m.tok, pl, prompts, tt.gen, nil)
				require.NoError(t, err)
				require.Len(t, turns, tt.seqs)
				decoded, wall := passes.sum()
				assert.Equal(t, tt.seqs*(tt.gen-1), decoded, "round %d: every decode token in a decode pass", round)
				assert.Positive(t, wall)
				for i, got := range turns {
					alone.Forget()
					want, err := alone.Generate(prompts[i], cfg)
					require.NoError(t, err)
					assert.Equal(t, want.Tokens, got.Tokens, "round %d, sequence %d", round, i)
					assert.Equal(t, tt.prompt, got.Timings.PrefillTokens)
					assert.Equal(t, tt.gen-1, got.Timings.DecodeForwards)
					assert.Equal(t, engine.StopMaxTokens, got.Stop)
				}
			}
		})
	}
}

// TestParallelRoundInterrupted: an interrupted round is exitInterrupted, a
// turn that cannot start fails its round, and in both the round's turns,
// held at the first-token gate or not, all end.
func TestParallelRoundInterrupted(t *testing.T) {
	mf := &modelFlags{path: storiesModel(t)}
	m, err := loadModel(mf, nil)
	require.NoError(t, err)
	defer m.Close()
	h, err := host.New(context.Background(), host.NewConfig())
	require.NoError(t, err)
	defer h.Close(context.Background())
	pl, err := loadPolicy(context.Background(), h, chain.Part{Ref: plugins.GreedyBuiltin, Param: "bench"}, abi.KindSampler)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	core, err := newBenchCore(m, mf, 3, func(serving.PassStats) { cancel() }) // after the first pass
	require.NoError(t, err)
	defer core.Close()
	prompts := [][]int32{benchPromptAt(m.tok, 8, 0), benchPromptAt(m.tok, 8, 1), benchPromptAt(m.tok, 8, 2)}
	_, err = parallelRound(ctx, core, m.tok, pl, prompts, 4, nil)
	var ce *cmdError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, exitInterrupted, ce.code)
	// A turn that cannot start (its prompt fills the context) fails the
	// round; the turn started before it, held at the gate, ends too.
	long := benchPromptAt(m.tok, m.fwd.ContextLength(), 0)
	_, err = parallelRound(context.Background(), core, m.tok, pl, [][]int32{prompts[0], long, prompts[2]}, 4, nil)
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, exitContext, ce.code)
	// The core runs a round after them.
	turns, err := parallelRound(context.Background(), core, m.tok, pl, prompts, 4, nil)
	require.NoError(t, err)
	assert.Len(t, turns, 3)
}

// TestBenchSpec: --spec reports every draft source, plain first at ratio
// 1, with the drafts of an exact prediction all accepted (bench itself
// fails when a mode generates other tokens than plain decoding).
func TestBenchSpec(t *testing.T) {
	model := storiesModel(t)
	out, stderr, code := runIn(t, "", "bench", "-m", model, "--prompt-tokens", "16", "--gen-tokens", "24",
		"--repetitions", "1", "--spec", "--json")
	require.Equal(t, 0, code, stderr)
	var b benchResult
	require.NoError(t, json.Unmarshal([]byte(out), &b))
	require.Len(t, b.Spec, len(specModes))
	for i, p := range b.Spec {
		assert.Equal(t, specModes[i].name, p.Mode)
		assert.Greater(t, p.Decode, 0.0, p.Mode)
		assert.LessOrEqual(t, p.Accepted, p.Drafted, p.Mode)
	}
	assert.InDelta(t, 1, b.Spec[0].Ratio, 1e-9)
	assert.Zero(t, b.Spec[0].Drafted)
	exact := b.Spec[1]
	assert.Positive(t, exact.Accepted)
	assert.Equal(t, exact.Drafted, exact.Accepted, "an exact prediction is accepted whole")

	assert.Nil(t, b.SpecParallel, "only with --parallel")

	out, stderr, code = runIn(t, "", "bench", "-m", model, "--prompt-tokens", "8", "--gen-tokens", "8",
		"--repetitions", "1", "--spec", "--parallel", "2")
	require.Equal(t, 0, code, stderr)
	assert.Regexp(t, `(?m)^spec lookup: +\d+\.\d tok/s +\d+\.\d\dx  drafts \d+ accepted / \d+ in (1 pass|\d+ passes)$`, out)
	assert.Regexp(t, `(?m)^spec parallel 2: plain \d+\.\d tok/s, lookup \d+\.\d tok/s \(\d+\.\d\dx\), drafts \d+ accepted / \d+$`, out)
}
