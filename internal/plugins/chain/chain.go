// Package chain builds a turn's policies from a declarative Spec, in the
// one order the CLI and the server share: the caller's processors, then
// the embedded dry processor (llama.cpp's DRY), JSON mode's json processor
// and the grammar processor (structured output, tool calls), then the
// sampler; and the stop policies, asked in order (engine.StopChain).
// Where a plugin comes from (a file, a tenant's upload, an embedded
// module) and under which limits is the caller's Loader; the limits the
// embedded processors need beyond a caller's (the grammar's memory and
// init deadline) are declared here, once.
package chain

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/engine"
	"github.com/realizar-host/realizar-host/host"
	"github.com/realizar-host/realizar-host/internal/plugins"
)

// Part is one plugin of a Spec.
type Part struct {
	// Ref names the plugin for the Loader: an embedded policy's name
	// (plugins.Builtin), a file, a tenant's sha256.
	Ref string
	// Config is the plugin's config (nil: none).
	Config json.RawMessage
	// Param is the flag or request field behind the part ("--top-k",
	// "response_format"), which errors name.
	Param string
	// MinLimits are limits the plugin needs at least, whatever the
	// caller's (Build sets them for the embedded processors: MinLimits).
	MinLimits host.Limits
}

// Spec declares a turn's policies. The embedded processors are on when
// their config is set; each is a Part whose Ref Build sets.
type Spec struct {
	Processors []Part // the caller's own processors, first, in order
	DRY        *Part  // the dry processor (plugins.DRY's config); nil: off
	JSONMode   *Part  // the json processor (plugins.JSONMode's config); nil: off
	Grammar    *Part  // the grammar processor (plugins.Grammar's config); nil: off
	Sampler    Part   // the sampler, last
	Stops      []Part // stop policies, asked in order; none: no stop policy
}

// processors are s's processors in the chain's order, the embedded ones
// with their names and MinLimits.
func (s Spec) processors() []Part {
	out := append([]Part(nil), s.Processors...)
	for _, b := range []struct {
		part *Part
		name string
	}{{s.DRY, plugins.DRYBuiltin}, {s.JSONMode, plugins.JSONBuiltin}, {s.Grammar, plugins.GrammarBuiltin}} {
		if b.part != nil {
			p := *b.part
			p.Ref, p.MinLimits = b.name, MinLimits(b.name)
			out = append(out, p)
		}
	}
	return out
}

// MinLimits are the limits the embedded policy name needs at least: the
// grammar processor's plugins.GrammarMemoryPages and
// plugins.GrammarInitTimeout (a large vocabulary's trie and masks, and
// seconds to prepare them); none for the others.
func MinLimits(name string) host.Limits {
	if name == plugins.GrammarBuiltin {
		return host.Limits{MemoryPages: plugins.GrammarMemoryPages, InitTimeout: plugins.GrammarInitTimeout}
	}
	return host.Limits{}
}

// Loader loads part as a plugin of kind, under limits at least
// part.MinLimits. Its errors are returned by Build as they are.
type Loader func(ctx context.Context, part Part, kind abi.Kind) (*host.Plugin, error)

// Chain is a built Spec: the sampler (processors then sampler) and the
// stop policies. Close it after the turn.
type Chain struct {
	Sampler *host.Sampler
	Stops   []*host.StopPolicy
	// Labels are the plugins' labels (host.Plugin.String): the processors
	// and the sampler in order, then the stop policies.
	Labels []string
	// Key is the identity of the sampler's chain (each plugin's sha256,
	// config and limits, in order): two chains of the same Key behave
	// alike, so a caller may keep a Sampler for the next (Options.Reuse).
	Key    string
	params map[string]string // label -> Param
}

// Options are Build's optional hooks.
type Options struct {
	// Reuse, when set, may return a Sampler kept from an earlier chain of
	// the same Key (reset by the caller's next turn) instead of a new one.
	Reuse func(key string) *host.Sampler
}

// Param is the flag or request field behind the plugin labelled label
// ("" when none).
func (c *Chain) Param(label string) string {
	if c == nil {
		return ""
	}
	return c.params[label]
}

// StopPolicy is the chain's stop policy: nil, the one, or an
// engine.StopChain of them in order.
func (c *Chain) StopPolicy() engine.StopPolicy {
	switch len(c.Stops) {
	case 0:
		return nil
	case 1:
		return c.Stops[0]
	}
	sc := make(engine.StopChain, len(c.Stops))
	for i, s := range c.Stops {
		sc[i] = s
	}
	return sc
}

// Close releases the instances.
func (c *Chain) Close() {
	if c.Sampler != nil {
		_ = c.Sampler.Close()
	}
	for _, s := range c.Stops {
		_ = s.Close()
	}
}

// PartError is a plugin of the chain that failed once loaded (its init,
// or a chain the host refuses): the Param behind it and the cause (often a
// *host.PluginError).
type PartError struct {
	Param string
	Err   error
}

func (e *PartError) Error() string { return e.Err.Error() }
func (e *PartError) Unwrap() error { return e.Err }

// Build loads spec's plugins through load, in order (processors, sampler,
// stop policies), and makes the turn's Sampler and stop policies for
// vocab. A Loader error is returned as it is; a plugin that fails after
// loading is a *PartError naming its Param. The loaded plugins are closed
// before Build returns (the instances hold the code they run).
func Build(ctx context.Context, vocab engine.Vocab, spec Spec, load Loader, opts Options) (*Chain, error) {
	c := &Chain{params: map[string]string{}}
	var loaded []*host.Plugin
	defer func() {
		for _, pl := range loaded {
			_ = pl.Close()
		}
	}()
	var key strings.Builder
	add := func(part Part, kind abi.Kind) (*host.Plugin, error) {
		pl, err := load(ctx, part, kind)
		if err != nil {
			return nil, err
		}
		loaded = append(loaded, pl)
		c.Labels = append(c.Labels, pl.String())
		if _, ok := c.params[pl.String()]; !ok && part.Param != "" {
			c.params[pl.String()] = part.Param
		}
		return pl, nil
	}
	var procs []*host.Plugin
	for _, part := range spec.processors() {
		pl, err := add(part, abi.KindProcessor)
		if err != nil {
			return nil, err
		}
		procs = append(procs, pl)
		fmt.Fprintf(&key, "%s\x00%d\x00%s\x00%v\x00", pl.SHA256(), len(part.Config), part.Config, pl.Limits())
	}
	sp, err := add(spec.Sampler, abi.KindSampler)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(&key, "%s\x00%d\x00%s\x00%v\x00", sp.SHA256(), len(spec.Sampler.Config), spec.Sampler.Config, sp.Limits())
	c.Key = key.String()
	if opts.Reuse != nil {
		c.Sampler = opts.Reuse(c.Key)
	}
	if c.Sampler == nil {
		if c.Sampler, err = host.NewSampler(vocab, sp, procs...); err != nil {
			return nil, c.partError(err)
		}
	}
	for _, part := range spec.Stops {
		pl, err := add(part, abi.KindStop)
		if err != nil {
			c.Close()
			return nil, err
		}
		st, err := host.NewStopPolicy(vocab, pl)
		if err != nil {
			c.Close()
			return nil, c.partError(err)
		}
		c.Stops = append(c.Stops, st)
	}
	return c, nil
}

// partError is err as a *PartError naming the Param of the plugin a
// *host.PluginError names (none: "").
func (c *Chain) partError(err error) error {
	var pe *host.PluginError
	if errors.As(err, &pe) {
		return &PartError{Param: c.params[pe.Plugin], Err: err}
	}
	return &PartError{Err: err}
}

// AtLeast is lim raised to min where min sets a limit: the memory and
// the deadlines, each the larger (a zero in lim is the host's default,
// which min's value, when set, replaces).
func AtLeast(lim, min host.Limits) host.Limits {
	lim.MemoryPages = max(lim.MemoryPages, min.MemoryPages)
	lim.CallTimeout = max(lim.CallTimeout, min.CallTimeout)
	lim.InitTimeout = max(lim.InitTimeout, min.InitTimeout)
	return lim
}
