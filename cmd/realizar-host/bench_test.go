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
	"github.com/realizar-host/realizar-host/plugins"
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

// TestParallelRoundMatchesGenerate: the sequences driven through shared
// batched passes generate what each generates alone, with the prompts in one
// pass and chunked over several (3 × 300 tokens > prefillPassTokens), and
// only the one-token decode passes are counted.
func TestParallelRoundMatchesGenerate(t *testing.T) {
	ctx := context.Background()
	mf := &modelFlags{path: storiesModel(t)}
	m, err := loadModel(mf, nil)
	require.NoError(t, err)
	defer m.Close()
	h, err := host.New(ctx, host.NewConfig())
	require.NoError(t, err)
	defer h.Close(ctx)
	pl, err := loadPolicy(ctx, h, plugins.GreedyBuiltin, abi.KindSampler, nil, "bench")
	require.NoError(t, err)
	sampler, err := host.NewSampler(m.tok, pl)
	require.NoError(t, err)
	defer sampler.Close()
	alone, err := engine.NewSession(m.fwd, m.tok, engine.WithSampler(sampler))
	require.NoError(t, err)

	tests := []struct {
		name            string
		seqs, prompt    int
		gen             int
		wantPrefillPass int // passes over the prompts
	}{
		{"prompts in one pass", 3, 24, 6, 1},
		{"chunked prompts", 3, 300, 6, 2},
		{"one sequence", 1, 16, 4, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seqs, err := newBenchSeqs(m, mf, pl, tt.seqs, tt.prompt)
			defer closeBenchSeqs(seqs)
			require.NoError(t, err)
			seed := uint64(0)
			cfg := engine.GenerateConfig{MaxTokens: tt.gen, IgnoreEOG: true, Seed: &seed}
			for round := range 2 { // the second round starts from a used cache
				turns, decoded, wall, err := parallelRound(seqs, cfg, tt.prompt)
				require.NoError(t, err)
				require.Len(t, turns, tt.seqs)
				assert.Equal(t, tt.seqs*(tt.gen-1), decoded, "round %d: one token per sequence per decode pass", round)
				assert.Positive(t, wall)
				for i, got := range turns {
					alone.Forget()
					want, err := alone.Generate(seqs[i].prompt, cfg)
					require.NoError(t, err)
					assert.Equal(t, want.Tokens, got.Tokens, "round %d, sequence %d", round, i)
					assert.Equal(t, tt.prompt, got.Timings.PrefillTokens)
					assert.Equal(t, tt.gen-1, got.Timings.DecodeForwards)
					assert.Equal(t, engine.StopMaxTokens, got.Stop)
				}
				for i, q := range seqs {
					assert.Equal(t, tt.wantPrefillPass, q.fwd.BatchedPrefills()/(round+1), "sequence %d", i)
				}
			}
		})
	}
}
