package chain_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/engine/enginetest"
	"github.com/realizar-host/realizar-host/host"
	"github.com/realizar-host/realizar-host/internal/plugins"
	"github.com/realizar-host/realizar-host/internal/plugins/chain"
)

// loaded is one call of the test's Loader.
type loaded struct {
	ref  string
	kind abi.Kind
	min  host.Limits
}

// builtinLoader loads the embedded policies by name into h, recording
// each call.
func builtinLoader(t *testing.T, h *host.Host, calls *[]loaded) chain.Loader {
	return func(ctx context.Context, part chain.Part, kind abi.Kind) (*host.Plugin, error) {
		*calls = append(*calls, loaded{part.Ref, kind, part.MinLimits})
		wasm, err := plugins.Builtin(part.Ref)
		require.NoError(t, err, part.Ref)
		return h.Load(ctx, wasm, host.LoadOptions{Kind: kind, Config: part.Config, Limits: part.MinLimits})
	}
}

func newHost(t *testing.T) *host.Host {
	h, err := host.New(context.Background(), host.NewConfig())
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Close(context.Background()) })
	return h
}

func ptr[T any](v T) *T { return &v }

// TestBuildOrder: the caller's processors, then DRY, then the sampler,
// then the stop policies, each labelled and mapped to its Param; the
// same spec has the same Key, and Reuse is asked with it.
func TestBuildOrder(t *testing.T) {
	h := newHost(t)
	vocab := enginetest.NewCountingVocab(64, 0)
	var calls []loaded
	spec := chain.Spec{
		Processors: []chain.Part{{Ref: plugins.DRYBuiltin, Config: json.RawMessage(`{"dry_multiplier":0.5}`), Param: "own"}},
		DRY:        &chain.Part{Config: plugins.DRY{Multiplier: ptr(0.8)}.Config(), Param: "dry_multiplier"},
		Sampler:    chain.Part{Ref: plugins.GreedyBuiltin, Param: "sampler"},
		Stops:      []chain.Part{{Ref: plugins.StringsBuiltin, Config: plugins.StopStrings{Stop: []string{"x"}}.Config(), Param: "stop"}},
	}
	c, err := chain.Build(context.Background(), vocab, spec, builtinLoader(t, h, &calls), chain.Options{})
	require.NoError(t, err)
	defer c.Close()
	assert.Equal(t, []loaded{{plugins.DRYBuiltin, abi.KindProcessor, host.Limits{}}, {plugins.DRYBuiltin, abi.KindProcessor, host.Limits{}},
		{plugins.GreedyBuiltin, abi.KindSampler, host.Limits{}}, {plugins.StringsBuiltin, abi.KindStop, host.Limits{}}}, calls)
	require.Len(t, c.Labels, 4)
	assert.Equal(t, "own", c.Param(c.Labels[0]), "a label's first Param")
	assert.Equal(t, "sampler", c.Param(c.Labels[2]))
	assert.Equal(t, "stop", c.Param(c.Labels[3]))
	require.Len(t, c.Stops, 1)
	assert.Equal(t, c.Stops[0], c.StopPolicy())

	var asked string
	calls = nil
	c2, err := chain.Build(context.Background(), vocab, spec, builtinLoader(t, h, &calls), chain.Options{
		Reuse: func(key string) *host.Sampler { asked = key; return c.Sampler }})
	require.NoError(t, err)
	assert.Equal(t, c.Key, asked)
	assert.Same(t, c.Sampler, c2.Sampler, "kept")
	c2.Stops[0].Close()

	spec.DRY.Config = plugins.DRY{Multiplier: ptr(0.9)}.Config()
	c3, err := chain.Build(context.Background(), vocab, spec, builtinLoader(t, h, &calls), chain.Options{})
	require.NoError(t, err)
	defer c3.Close()
	assert.NotEqual(t, c.Key, c3.Key, "another config, another chain")
}

// TestBuildPartError: a chain the host refuses once its plugins are
// loaded (here a stop policy where a processor goes, which a Loader that
// does not check kinds let through) is a *chain.PartError; a Loader's own
// error is returned as it is.
func TestBuildPartError(t *testing.T) {
	h := newHost(t)
	anyKind := func(ctx context.Context, part chain.Part, kind abi.Kind) (*host.Plugin, error) {
		wasm, err := plugins.Builtin(part.Ref)
		require.NoError(t, err)
		return h.Load(ctx, wasm, host.LoadOptions{Config: part.Config})
	}
	spec := chain.Spec{Processors: []chain.Part{{Ref: plugins.StringsBuiltin, Param: "--processor"}},
		Sampler: chain.Part{Ref: plugins.GreedyBuiltin, Param: "--sampler"}}
	_, err := chain.Build(context.Background(), enginetest.NewCountingVocab(64, 0), spec, anyKind, chain.Options{})
	var pe *chain.PartError
	require.ErrorAs(t, err, &pe)
	assert.ErrorIs(t, err, host.ErrKind)

	var calls []loaded
	spec.Processors[0].Ref = "nosuch"
	_, err = chain.Build(context.Background(), enginetest.NewCountingVocab(64, 0), spec,
		func(ctx context.Context, part chain.Part, kind abi.Kind) (*host.Plugin, error) {
			calls = append(calls, loaded{part.Ref, kind, part.MinLimits})
			return nil, assert.AnError
		}, chain.Options{})
	assert.Same(t, assert.AnError, err)
	assert.Len(t, calls, 1, "nothing loaded past a failure")
}

// TestMinLimits: the grammar processor's part gets its limits; the
// others none; AtLeast raises a caller's limits to them.
func TestMinLimits(t *testing.T) {
	g := chain.MinLimits(plugins.GrammarBuiltin)
	assert.Equal(t, host.Limits{MemoryPages: plugins.GrammarMemoryPages, InitTimeout: plugins.GrammarInitTimeout}, g)
	assert.Equal(t, host.Limits{}, chain.MinLimits(plugins.DRYBuiltin))
	assert.Equal(t, host.Limits{MemoryPages: plugins.GrammarMemoryPages, CallTimeout: time.Second, InitTimeout: plugins.GrammarInitTimeout},
		chain.AtLeast(host.Limits{MemoryPages: 64, CallTimeout: time.Second, InitTimeout: time.Second}, g))
	assert.Equal(t, host.Limits{MemoryPages: 1 << 15, InitTimeout: 2 * plugins.GrammarInitTimeout},
		chain.AtLeast(host.Limits{MemoryPages: 1 << 15, InitTimeout: 2 * plugins.GrammarInitTimeout}, g))
}

// TestEmbeddedParts: the spec's embedded processors are loaded by their
// names, in the chain's order, the grammar's with its MinLimits.
func TestEmbeddedParts(t *testing.T) {
	var calls []loaded
	spec := chain.Spec{DRY: &chain.Part{}, JSONMode: &chain.Part{}, Grammar: &chain.Part{Param: "--grammar"},
		Processors: []chain.Part{{Ref: "own"}}, Sampler: chain.Part{Ref: plugins.GreedyBuiltin}}
	_, err := chain.Build(context.Background(), enginetest.NewCountingVocab(64, 0), spec,
		func(ctx context.Context, part chain.Part, kind abi.Kind) (*host.Plugin, error) {
			calls = append(calls, loaded{part.Ref, kind, part.MinLimits})
			if part.Ref == plugins.GrammarBuiltin {
				assert.Equal(t, "--grammar", part.Param)
				return nil, assert.AnError
			}
			return newHost(t).Load(ctx, mustBuiltin(t, plugins.GreedyBuiltin), host.LoadOptions{})
		}, chain.Options{})
	require.ErrorIs(t, err, assert.AnError)
	assert.Equal(t, []loaded{{"own", abi.KindProcessor, host.Limits{}}, {plugins.DRYBuiltin, abi.KindProcessor, host.Limits{}},
		{plugins.JSONBuiltin, abi.KindProcessor, host.Limits{}},
		{plugins.GrammarBuiltin, abi.KindProcessor, chain.MinLimits(plugins.GrammarBuiltin)}}, calls)
}

func mustBuiltin(t *testing.T, name string) []byte {
	wasm, err := plugins.Builtin(name)
	require.NoError(t, err)
	return wasm
}
