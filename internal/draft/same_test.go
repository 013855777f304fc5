package draft_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/engine"
	"github.com/realizar-host/realizar-host/engine/enginetest"
	"github.com/realizar-host/realizar-host/forward"
	"github.com/realizar-host/realizar-host/gguf"
	"github.com/realizar-host/realizar-host/host"
	"github.com/realizar-host/realizar-host/internal/draft"
	"github.com/realizar-host/realizar-host/internal/fixture"
	"github.com/realizar-host/realizar-host/internal/plugins"
	"github.com/realizar-host/realizar-host/internal/serving"
	"github.com/realizar-host/realizar-host/internal/testenv"
	"github.com/realizar-host/realizar-host/model"
	"github.com/realizar-host/realizar-host/tokenizer"
)

// sameTokens is the budget of each turn the equivalence test compares.
const sameTokens = 200

// recorder wraps a turn's sampler chain and stop policy and records every
// call the Session makes into them, with a hash of the logits each Sample
// receives: the calls a policy plugin sees.
type recorder struct {
	calls []string
}

type recSampler struct {
	engine.Sampler
	r *recorder
}

func (s recSampler) Reset(seed uint64, prompt []int32) error {
	s.r.calls = append(s.r.calls, fmt.Sprintf("reset %d %v", seed, prompt))
	return s.Sampler.Reset(seed, prompt)
}

func (s recSampler) Sample(logits []float32) (int32, error) {
	h := fnv.New64a()
	var b [4]byte
	for _, v := range logits {
		binary.LittleEndian.PutUint32(b[:], math.Float32bits(v))
		_, _ = h.Write(b[:])
	}
	id, err := s.Sampler.Sample(logits)
	s.r.calls = append(s.r.calls, fmt.Sprintf("sample %x -> %d %v", h.Sum64(), id, err))
	return id, err
}

func (s recSampler) Accept(id int32) {
	s.r.calls = append(s.r.calls, fmt.Sprintf("accept %d", id))
	s.Sampler.Accept(id)
}

type recStop struct {
	engine.StopPolicy
	r *recorder
}

func (p recStop) Reset() error {
	p.r.calls = append(p.r.calls, "stop reset")
	return p.StopPolicy.Reset()
}

func (p recStop) Check(id int32, piece []byte) (engine.Decision, error) {
	d, err := p.StopPolicy.Check(id, piece)
	p.r.calls = append(p.r.calls, fmt.Sprintf("check %d %q -> %+v %v", id, piece, d, err))
	return d, err
}

// policyCase is one embedded policy set: processors (name and config),
// the sampler, an optional stop policy.
type policyCase struct {
	name      string
	procs     [][2]string
	sampler   string
	samplerCf string
	stop      string
	stopCf    string
	seed      uint64
}

func policyCases(tok *tokenizer.Tokenizer) []policyCase {
	jsonMode := string(plugins.JSONMode{EOG: tok.EOG(), Control: tok.Control(), MaxTokens: sameTokens}.Config())
	schema := string(plugins.Grammar{JSONSchema: []byte(`{"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer"}},"required":["name","age"],"additionalProperties":false}`)}.Config())
	gbnf := string(plugins.Grammar{GBNF: `root ::= "Once" ( " " [a-z]+ )+ "."`}.Config())
	stages := `{"temperature":0.9,"top_k":40,"top_p":0.95,"min_p":0.02,"typical_p":0.95,"repeat_penalty":1.1,"repeat_last_n":64,"presence_penalty":0.1,"frequency_penalty":0.1,"xtc_probability":0.3,"xtc_threshold":0.1,"dynatemp_range":0.2,"top_n_sigma":3}`
	return []policyCase{
		{name: "greedy", sampler: plugins.GreedyBuiltin},
		{name: "standard seeded, every stage on", sampler: plugins.StandardBuiltin, samplerCf: stages, seed: 7},
		{name: "standard defaults", sampler: plugins.StandardBuiltin, samplerCf: `{}`, seed: 11},
		{name: "mirostat", sampler: plugins.StandardBuiltin, samplerCf: `{"mirostat":1,"mirostat_tau":3,"temperature":1}`, seed: 5},
		{name: "mirostat-v2", sampler: plugins.MirostatV2Builtin, samplerCf: `{"tau":4}`, seed: 5},
		{name: "dry", procs: [][2]string{{plugins.DRYBuiltin, `{"dry_multiplier":0.8,"dry_allowed_length":2}`}}, sampler: plugins.StandardBuiltin, samplerCf: `{"temperature":0.7}`, seed: 3},
		{name: "json mode", procs: [][2]string{{plugins.JSONBuiltin, jsonMode}}, sampler: plugins.StandardBuiltin, samplerCf: `{"temperature":0.8}`, seed: 9},
		{name: "json schema", procs: [][2]string{{plugins.GrammarBuiltin, schema}}, sampler: plugins.GreedyBuiltin},
		{name: "gbnf", procs: [][2]string{{plugins.GrammarBuiltin, gbnf}}, sampler: plugins.StandardBuiltin, samplerCf: `{"temperature":1}`, seed: 2},
		{name: "stop strings", sampler: plugins.StandardBuiltin, samplerCf: `{"temperature":0.8}`, seed: 4, stop: plugins.StringsBuiltin, stopCf: `{"stop":[" the ","."]}`},
	}
}

// sameModels are the models of the equivalence test: stories260K and the
// tiny, qwen2-tiny and qwen3moe-tiny fixtures (written with the llama
// vocabulary, which the forward does not read).
func sameModels(t *testing.T) map[string]string {
	paths := map[string]string{"stories260K": testenv.Stories()}
	vocab, err := fixture.LlamaVocab()
	require.NoError(t, err)
	defer vocab.Close()
	dir := t.TempDir()
	for _, c := range []fixture.Config{fixture.Tiny(), fixture.Qwen2Tiny(), fixture.Qwen3MoETiny()} {
		p := filepath.Join(dir, c.Name+".gguf")
		require.NoError(t, fixture.GenerateFile(p, c, vocab))
		paths[c.Name] = p
	}
	return paths
}

// TestSpeculativeSameTurn: for every embedded sampler, processor and stop
// policy, a turn with each draft source (lookup, predictions, the model as
// its own draft model and another of the same vocabulary) gives the plain turn's token ids,
// text, logprobs and stop reason, and the policies see the plain turn's
// calls, in order, with the same logits (bit for bit): on the Session
// alone (Generate) and on the serving core that serve runs, amid other
// sequences' decode rows and prompt chunks in the same batched passes.
func TestSpeculativeSameTurn(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the equivalence test runs about 430 turns of 200 tokens")
	}
	ctx := context.Background()
	// The test compares calls, not their speed: a loaded machine must not
	// turn a step into a timeout.
	h, err := host.New(ctx, host.NewConfig().WithLimits(host.Limits{CallTimeout: time.Minute}))
	require.NoError(t, err)
	defer h.Close(ctx)
	// The other draft model: random weights of another shape over the
	// llama vocabulary, which the fixtures share.
	other, otherTok := fixtureModel(t, fixture.Odd())
	for name, path := range sameModels(t) {
		t.Run(name, func(t *testing.T) {
			f, err := gguf.Open(path)
			require.NoError(t, err)
			defer f.Close()
			tok, err := tokenizer.FromGGUF(f)
			require.NoError(t, err)
			m, err := model.Load(f, model.Options{Threads: 2})
			require.NoError(t, err)
			defer m.Close()
			newFwd := func() (forward.ArchForward, error) {
				return forward.NewSequenceForward(m.NewSequence(), forward.Options{Arch: m.Config().Arch, ModelContext: m.Config().ContextLength})
			}
			first, err := newFwd()
			require.NoError(t, err)
			fwd := first.(*forward.SequenceForward)
			text := tok.Renderer(tokenizer.RenderOptions{})
			prompt := tok.Encode("Once upon a time, there was a little", tokenizer.EncodeOptions{AddSpecial: true})
			core, err := serving.New(serving.Model{Forward: fwd, NewForward: newFwd, Vocab: text}, serving.Config{Parallel: 3, BatchTokens: 16})
			require.NoError(t, err)
			defer core.Close()
			// The model as its own draft model, and another one where the
			// vocabulary is the same.
			drafts := map[string]*draft.Model{"draft model": draftModel(t, m, tok)}
			if draft.CheckVocab(tok, otherTok) == nil {
				drafts["other draft model"] = draftModel(t, other, otherTok)
			}
			for _, pc := range policyCases(tok) {
				t.Run(pc.name, func(t *testing.T) {
					sameTurns(t, h, fwd, core, tok, text, prompt, pc, drafts)
				})
			}
		})
	}
}

func load(t *testing.T, h *host.Host, name, config string, kind abi.Kind) *host.Plugin {
	t.Helper()
	wasm, err := plugins.Builtin(name)
	require.NoError(t, err)
	opts := host.LoadOptions{Kind: kind}
	if config != "" {
		opts.Config = []byte(config)
	}
	if name == plugins.GrammarBuiltin {
		opts.Limits = host.Limits{MemoryPages: plugins.GrammarMemoryPages, InitTimeout: plugins.GrammarInitTimeout}
	}
	p, err := h.Load(context.Background(), wasm, opts)
	require.NoError(t, err)
	return p
}

func sameTurns(t *testing.T, h *host.Host, fwd *forward.SequenceForward, core *serving.Core, tok *tokenizer.Tokenizer, text engine.Vocab, prompt []int32, pc policyCase, drafts map[string]*draft.Model) {
	var procs []*host.Plugin
	for _, p := range pc.procs {
		procs = append(procs, load(t, h, p[0], p[1], abi.KindProcessor))
	}
	sampler, err := host.NewSampler(tok, load(t, h, pc.sampler, pc.samplerCf, abi.KindSampler), procs...)
	require.NoError(t, err)
	rec := &recorder{}
	opts := []engine.Option{engine.WithSampler(recSampler{sampler, rec})}
	var stopPolicy engine.StopPolicy
	if pc.stop != "" {
		stop, err := host.NewStopPolicy(tok, load(t, h, pc.stop, pc.stopCf, abi.KindStop))
		require.NoError(t, err)
		stopPolicy = recStop{stop, rec}
		opts = append(opts, engine.WithStopPolicy(stopPolicy))
	}
	sess, err := engine.NewSession(fwd, text, opts...)
	require.NoError(t, err)
	defer sess.Close()

	turn := func(d engine.Drafter) (engine.Turn, []string) {
		sess.Forget()
		rec.calls = nil
		seed := pc.seed
		got, err := sess.Generate(prompt, engine.GenerateConfig{MaxTokens: sameTokens, Seed: &seed, TopLogprobs: 2, Draft: d})
		require.NoError(t, err)
		return got, rec.calls
	}
	// served is the turn on the serving core, started beside two plain
	// greedy turns of other prompts (their decode rows and prompt chunks
	// share its passes; --batch-tokens 16 cuts some drafts).
	served := func(d engine.Drafter) (engine.Turn, []string) {
		rec.calls = nil
		seed := pc.seed
		cfg := engine.GenerateConfig{Seed: &seed, TopLogprobs: 2, Draft: d, Sampler: recSampler{sampler, rec}, Stop: stopPolicy}
		var others []*serving.Turn
		for i := range 2 {
			other := append(slices.Clone(prompt[:1]), tok.Encode(fmt.Sprintf(" A tale %d of a dog and a cat who met by the river", i), tokenizer.EncodeOptions{})...)
			others = append(others, startTurn(t, core, serving.Request{Prompt: other, MaxTokens: 48,
				Generate: engine.GenerateConfig{Sampler: enginetest.Greedy{}, IgnoreEOG: true}}))
		}
		res, err := startTurn(t, core, serving.Request{Prompt: prompt, MaxTokens: sameTokens, Generate: cfg}).Result()
		require.NoError(t, err)
		for _, o := range others {
			_, err := o.Result()
			require.NoError(t, err)
		}
		return res.Turn, rec.calls
	}
	plain, calls := turn(nil)
	require.Positive(t, plain.Generated)
	// The prediction: the plain answer with every 9th token replaced, and
	// a token inserted and one deleted further on.
	pred := append([]int32(nil), plain.GeneratedTokens()...)
	for i := 4; i < len(pred); i += 9 {
		pred[i] = (pred[i] + 1) % int32(tok.Size())
	}
	if len(pred) > 60 {
		pred = append(pred[:30], append([]int32{pred[10]}, pred[30:]...)...)
		pred = append(pred[:50], pred[51:]...)
	}
	sources := map[string]func() engine.Drafter{
		"lookup":     func() engine.Drafter { return draft.NewLookup(draft.LookupOptions{}) },
		"prediction": func() engine.Drafter { return draft.NewPrediction(pred, draft.PredictionOptions{}) },
		"exact prediction": func() engine.Drafter {
			return draft.NewPrediction(plain.GeneratedTokens(), draft.PredictionOptions{})
		},
	}
	// The reference drafter plugin, one instance for the Session's turns
	// (reset at each), as run and chat keep it.
	plug, err := host.NewDrafter(tok, load(t, h, plugins.LookupBuiltin, "", abi.KindDrafter))
	require.NoError(t, err)
	defer plug.Close()
	sources["plugin lookup"] = func() engine.Drafter { return plug }
	for name, dm := range drafts {
		sources[name] = func() engine.Drafter { return dm.Drafter(draft.ModelOptions{}) }
	}
	for _, name := range []string{"lookup", "prediction", "exact prediction", "plugin lookup", "draft model"} {
		sources["served "+name] = sources[name]
	}
	sources["served plain"] = func() engine.Drafter { return nil }
	for name, mk := range sources {
		spec, specCalls := turn(mk())
		if strings.HasPrefix(name, "served") {
			spec, specCalls = served(mk())
		}
		assert.Equal(t, plain.GeneratedTokens(), spec.GeneratedTokens(), "%s: token ids", name)
		assert.Equal(t, string(plain.Text), string(spec.Text), "%s: text", name)
		assert.Equal(t, plain.Logprobs, spec.Logprobs, "%s: logprobs", name)
		assert.Equal(t, plain.Stop, spec.Stop, "%s: stop reason", name)
		require.Equal(t, calls, specCalls, "%s: the policies' calls", name)
		if strings.HasSuffix(name, "plugin lookup") {
			require.NoError(t, plug.Err(), name)
		}
		if strings.HasSuffix(name, "exact prediction") && plain.Generated > 2 {
			assert.Positive(t, spec.Drafts.Accepted)
			assert.Equal(t, spec.Drafts.Drafted, spec.Drafts.Accepted, "an exact prediction is accepted whole: %+v of %d, stop %s", spec.Drafts, spec.Generated, spec.Stop)
			assert.Less(t, spec.Timings.DecodeForwards, plain.Timings.DecodeForwards, "fewer forwards")
		}
		// Greedy: the model as its own draft is accepted nearly whole
		// (its catch-up prefills sum in the batch orders, so a near tie
		// may go the other way), another random-weight model rarely.
		if pc.name == "greedy" && plain.Generated > 20 {
			switch name {
			case "draft model":
				assert.GreaterOrEqual(t, float64(spec.Drafts.Accepted), 0.9*float64(spec.Drafts.Drafted), "%s: %+v", name, spec.Drafts)
			case "other draft model":
				assert.Less(t, float64(spec.Drafts.Accepted), 0.5*float64(spec.Drafts.Drafted), "%s: %+v", name, spec.Drafts)
			}
		}
	}
}

// startTurn admits and starts req on core.
func startTurn(t *testing.T, core *serving.Core, req serving.Request) *serving.Turn {
	t.Helper()
	tk, err := core.Admit("t")
	require.NoError(t, err)
	turn, err := tk.Start(context.Background(), req)
	require.NoError(t, err)
	return turn
}
