package draft_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/engine"
	"github.com/realizar-host/realizar-host/engine/enginetest"
	"github.com/realizar-host/realizar-host/forward"
	"github.com/realizar-host/realizar-host/gguf"
	"github.com/realizar-host/realizar-host/internal/draft"
	"github.com/realizar-host/realizar-host/internal/fixture"
	"github.com/realizar-host/realizar-host/internal/testenv"
	"github.com/realizar-host/realizar-host/model"
	"github.com/realizar-host/realizar-host/tokenizer"
)

// spmVocab is a small SentencePiece vocabulary: <unk> <s> </s> and
// letters, with edit applied to its spec.
func spmVocab(t *testing.T, edit func(*tokenizer.Spec)) *tokenizer.Tokenizer {
	t.Helper()
	tokens := []string{"<unk>", "<s>", "</s>", "▁a", "▁b", "▁c", "a", "b", "c"}
	spec := tokenizer.NewSpec(tokenizer.ModelSPM, tokens)
	spec.Types = []int32{2, 3, 3, 1, 1, 1, 1, 1, 1}
	spec.UNK, spec.BOS, spec.EOS = 0, 1, 2
	if edit != nil {
		edit(&spec)
	}
	tok, err := tokenizer.New(spec)
	require.NoError(t, err)
	return tok
}

// TestCheckVocab: the same vocabulary passes; a different count, a token's
// text, a special id or the end-of-generation set is refused, naming it.
func TestCheckVocab(t *testing.T) {
	target := spmVocab(t, nil)
	tests := []struct {
		name string
		edit func(*tokenizer.Spec)
		want string // "" when accepted
	}{
		{"the same", nil, ""},
		{"the same with other scores", func(s *tokenizer.Spec) { s.Scores = make([]float32, len(s.Tokens)) }, ""},
		{"one token more", func(s *tokenizer.Spec) {
			s.Tokens = append(s.Tokens, "d")
			s.Types = append(s.Types, 1)
		}, "10 tokens, the target has 9"},
		{"a token's text", func(s *tokenizer.Spec) { s.Tokens[7] = "x" }, `token 7 is "x", the target's is "b" (1 of 9 tokens differ)`},
		{"BOS", func(s *tokenizer.Spec) { s.BOS = 2 }, "BOS is 2, the target's is 1"},
		{"EOS", func(s *tokenizer.Spec) { s.EOS = 1 }, "EOS is 1, the target's is 2"},
		{"EOT", func(s *tokenizer.Spec) { s.EOT = 8 }, "EOT is 8, the target's is absent"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := draft.CheckVocab(target, spmVocab(t, tt.edit))
			if tt.want == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, draft.ErrVocabMismatch)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	t.Run("end of generation", func(t *testing.T) {
		other := spmVocab(t, func(s *tokenizer.Spec) { s.EOM = 8 })
		err := draft.CheckVocab(target, other)
		require.ErrorIs(t, err, draft.ErrVocabMismatch)
		assert.Contains(t, err.Error(), "end-of-generation ids [2 8], the target's are [2]")
	})
}

// fixtureModel writes preset c with the llama vocabulary and loads it.
func fixtureModel(t *testing.T, c fixture.Config) (*model.Model, *tokenizer.Tokenizer) {
	t.Helper()
	vocab, err := fixture.LlamaVocab()
	require.NoError(t, err)
	defer vocab.Close()
	p := filepath.Join(t.TempDir(), c.Name+".gguf")
	require.NoError(t, fixture.GenerateFile(p, c, vocab))
	return openModel(t, p)
}

func openModel(t *testing.T, path string) (*model.Model, *tokenizer.Tokenizer) {
	t.Helper()
	f, err := gguf.Open(path)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	tok, err := tokenizer.FromGGUF(f)
	require.NoError(t, err)
	m, err := model.Load(f, model.Options{Threads: 2})
	require.NoError(t, err)
	t.Cleanup(func() { m.Close() })
	return m, tok
}

// draftModel is m as a draft model (its weights shared with whoever else
// uses m).
func draftModel(t *testing.T, m *model.Model, tok *tokenizer.Tokenizer) *draft.Model {
	t.Helper()
	dm, err := draft.NewModel(draft.ModelConfig{NewSequence: func() forward.Sequence { return m.NewSequence() },
		ContextLength: m.Config().ContextLength, EOG: tok.EOG()})
	require.NoError(t, err)
	return dm
}

func stepForward(t *testing.T, m *model.Model) *forward.SequenceForward {
	t.Helper()
	f, err := forward.NewSequenceForward(m.NewSequence(), forward.Options{Arch: m.Config().Arch, ModelContext: m.Config().ContextLength})
	require.NoError(t, err)
	return f
}

// countingStep is a Sequence that calls after on every step.
type countingStep struct {
	forward.Sequence
	after func()
}

func (s countingStep) Step(token int32, position int) ([]float32, error) {
	defer s.after()
	return s.Sequence.Step(token, position)
}

// TestModelDrafter: a model as its own draft is accepted almost whole;
// another random-weight model of the same vocabulary little; the greedy
// text is the plain one either way; a drafter's cache resumes at what it
// holds across turns; cancellation between two draft steps ends the turn
// at its next step with a prefix of the plain text.
func TestModelDrafter(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: writes two fixtures")
	}
	target, tok := fixtureModel(t, fixture.Tiny())
	other, otherTok := fixtureModel(t, fixture.Odd())
	require.NoError(t, draft.CheckVocab(tok, otherTok))
	sess, err := engine.NewSession(stepForward(t, target), tok, engine.WithSampler(enginetest.Greedy{}))
	require.NoError(t, err)
	prompt := tok.Encode("Once upon a time, there was a little", tokenizer.EncodeOptions{AddSpecial: true})
	gen := func(d engine.Drafter, cancel *engine.CancelToken) engine.Turn {
		sess.Forget()
		turn, err := sess.Generate(prompt, engine.GenerateConfig{MaxTokens: 120, IgnoreEOG: true, Draft: d, Cancel: cancel})
		require.NoError(t, err)
		return turn
	}
	plain := gen(nil, nil)
	require.Equal(t, 120, plain.Generated)

	self := draftModel(t, target, tok)
	d := self.Drafter(draft.ModelOptions{})
	turn := gen(d, nil)
	assert.Equal(t, plain.GeneratedTokens(), turn.GeneratedTokens())
	require.NoError(t, d.Err)
	assert.GreaterOrEqual(t, float64(turn.Drafts.Accepted), 0.9*float64(turn.Drafts.Drafted), "self-draft: %+v", turn.Drafts)
	assert.Less(t, turn.Timings.DecodeForwards, plain.Timings.DecodeForwards/3, "self-draft: forwards")

	// The same drafter, a second turn: its cache holds the first turn's
	// tokens and catches up from there.
	turn = gen(d, nil)
	assert.Equal(t, plain.GeneratedTokens(), turn.GeneratedTokens())

	od := draftModel(t, other, otherTok).Drafter(draft.ModelOptions{})
	turn = gen(od, nil)
	assert.Equal(t, plain.GeneratedTokens(), turn.GeneratedTokens())
	require.NoError(t, od.Err)
	assert.Positive(t, turn.Drafts.Drafted)
	assert.Less(t, float64(turn.Drafts.Accepted), 0.5*float64(turn.Drafts.Drafted), "another model: %+v", turn.Drafts)

	t.Run("cancelled mid-draft", func(t *testing.T) {
		cancel := engine.NewCancelToken()
		steps := 0
		dm, err := draft.NewModel(draft.ModelConfig{ContextLength: target.Config().ContextLength, EOG: tok.EOG(),
			NewSequence: func() forward.Sequence {
				return countingStep{Sequence: target.NewSequence(), after: func() {
					if steps++; steps == 20 {
						cancel.Cancel()
					}
				}}
			}})
		require.NoError(t, err)
		turn := gen(dm.Drafter(draft.ModelOptions{Cancel: cancel}), cancel)
		assert.Equal(t, engine.StopCancelled, turn.Stop)
		assert.ErrorIs(t, turn.Cause, engine.ErrCancelled)
		assert.Equal(t, 20, steps, "no draft step after the cancellation")
		require.Positive(t, turn.Generated)
		assert.Equal(t, plain.GeneratedTokens()[:turn.Generated], turn.GeneratedTokens())
	})
}

// A draft model's context bounds its drafts; a failed draft step drafts
// nothing and the turn goes on plainly.
func TestModelDrafterLimits(t *testing.T) {
	_, err := draft.NewModel(draft.ModelConfig{ContextLength: 8})
	require.ErrorIs(t, err, engine.ErrBadConfig)
	m, tok := openModel(t, testenv.Stories())
	dm, err := draft.NewModel(draft.ModelConfig{NewSequence: func() forward.Sequence { return m.NewSequence() }, ContextLength: 6, EOG: tok.EOG()})
	require.NoError(t, err)
	d := dm.Drafter(draft.ModelOptions{MaxDraft: 8})
	d.Reset(nil)
	assert.Len(t, d.Draft(nil, []int32{1, 2, 3}, 8), 3, "up to the draft model's context of 6")
	assert.Empty(t, d.Draft(nil, []int32{1, 2, 3, 4, 5, 6}, 8), "at its context")
	d = dm.Drafter(draft.ModelOptions{MaxDraft: 8})
	d.Reset(nil)
	assert.Empty(t, d.Draft(nil, []int32{1, 99999}, 8), "a token outside the vocabulary")
	assert.ErrorIs(t, d.Err, forward.ErrBadToken)
}

// Drafters of one Model drafting at the same time (a server's sequences)
// share its batched passes and draft what each drafts alone.
func TestModelDraftersConcurrent(t *testing.T) {
	m, tok := openModel(t, testenv.Stories())
	dm := draftModel(t, m, tok)
	prompts := make([][]int32, 6)
	for i := range prompts {
		prompts[i] = tok.Encode(fmt.Sprintf("Once upon a time, %d little birds", i+1), tokenizer.EncodeOptions{AddSpecial: true})
	}
	// Each sequence drafts three times, its tokens growing by a draft's
	// first token and one the draft did not foresee (a rejection).
	rounds := func(d *draft.ModelDrafter, tokens []int32) [][]int32 {
		d.Reset(tokens)
		var out [][]int32
		for range 3 {
			got := d.Draft(nil, tokens, 8)
			out = append(out, got)
			if len(got) > 0 {
				tokens = append(tokens, got[0], (got[0]+1)%int32(tok.Size()))
			}
		}
		return out
	}
	alone := make([][][]int32, len(prompts))
	for i, p := range prompts {
		alone[i] = rounds(dm.Drafter(draft.ModelOptions{MaxDraft: 8}), slices.Clone(p))
		require.NotEmpty(t, alone[i][0])
	}
	together := make([][][]int32, len(prompts))
	var wg sync.WaitGroup
	for i, p := range prompts {
		wg.Go(func() { together[i] = rounds(dm.Drafter(draft.ModelOptions{MaxDraft: 8}), slices.Clone(p)) })
	}
	wg.Wait()
	assert.Equal(t, alone, together)
}

// ReserveKV sizes a drafter's cache for the turn (within the draft model's
// context) and says its bytes; drafting within it never grows the cache
// past them (on demand it grows to 256 positions at least).
func TestModelDrafterReserveKV(t *testing.T) {
	m, tok := openModel(t, testenv.Stories())
	per := m.KVBytesPerPosition()
	var seqs []*model.Sequence
	dm, err := draft.NewModel(draft.ModelConfig{NewSequence: func() forward.Sequence {
		s := m.NewSequence()
		seqs = append(seqs, s)
		return s
	}, ContextLength: 100, EOG: tok.EOG(), KVBytesPerPosition: per})
	require.NoError(t, err)
	prompt := tok.Encode("Once upon a time", tokenizer.EncodeOptions{AddSpecial: true})

	d := dm.Drafter(draft.ModelOptions{MaxDraft: 8})
	assert.Equal(t, 40*per, d.ReserveKV(40))
	d.Reset(prompt)
	require.NotEmpty(t, d.Draft(nil, prompt, 8))
	require.Len(t, seqs, 1)
	assert.Equal(t, 40*per, seqs[0].CacheBytes())
	assert.Equal(t, 100*per, d.ReserveKV(500), "at most the draft model's context")
	assert.Equal(t, 100*per, seqs[0].CacheBytes(), "a cache made is grown")

	d = dm.Drafter(draft.ModelOptions{MaxDraft: 8})
	d.Reset(prompt)
	require.NotEmpty(t, d.Draft(nil, prompt, 8))
	assert.Equal(t, 256*per, seqs[1].CacheBytes(), "unreserved: grown on demand to 256 positions")

	_, err = draft.NewModel(draft.ModelConfig{NewSequence: func() forward.Sequence { return m.NewSequence() }, ContextLength: 8, KVBytesPerPosition: -1})
	require.ErrorIs(t, err, engine.ErrBadConfig)
}
