package server

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"time"

	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/engine"
	"github.com/realizar-host/realizar-host/host"
	"github.com/realizar-host/realizar-host/internal/plugins"
	"github.com/realizar-host/realizar-host/internal/plugins/chain"
	"github.com/realizar-host/realizar-host/internal/plugins/sampling"
	"github.com/realizar-host/realizar-host/internal/tenancy"
	"github.com/realizar-host/realizar-host/internal/turnfields"
)

// Builtins returns the module of an embedded policy by name ("greedy",
// "standard", "strings"); an error for a name it does not embed.
// plugins.Builtin is one.
type Builtins func(name string) ([]byte, error)

// policies are one request's fresh plugin instances. Close them after the turn.
type policies struct {
	sampler *host.Sampler
	stop    engine.StopPolicy // nil: none
	closeFn []func() error
	names   []string      // labels, sampler chain first, for errors and the response
	chain   *chain.Chain  // the built chain: the request field behind each plugin
	drafter *host.Drafter // realizar.drafter's; nil: none
	// warnings are the request's schemas' (policyRequest.warnings).
	warnings []string
}

// withParam gives a failure of one of p's plugins the request field behind
// the plugin (a plugin_error's param); other errors pass as they are.
func (p *policies) withParam(err error) error {
	var plug *host.PluginError
	if !errors.As(err, &plug) {
		return err
	}
	if param := p.chain.Param(plug.Plugin); param != "" {
		return &paramError{param: param, err: err}
	}
	return err
}

func (p *policies) Close() {
	for _, f := range p.closeFn {
		_ = f()
	}
}

// policyRequest is what a request asks of its policies.
type policyRequest struct {
	fields   *samplingFields
	stopText []string
	json     json.RawMessage // JSON mode: the json processor's config (it runs last before the sampler); nil: off
	grammar  json.RawMessage // structured output: the grammar processor's config (last before the sampler); nil: off
	// grammarParam is the request field a refused grammar config names
	// ("" is grammarParam's; tool calls' is tools).
	grammarParam string
	// draftMax bounds a realizar.drafter plugin's drafts (0: the ABI's).
	draftMax int
	// warnings are what the request's schemas ask and the grammar does
	// not enforce (compileSpec), for the response's realizar.warnings.
	warnings []string
}

// buildPolicies resolves and instantiates the request's policies for t:
// the realizar extension's plugins when named, else the built-in standard
// sampler configured from the OpenAI fields and the stop strings.
func (s *Server) buildPolicies(ctx context.Context, t *tenancy.Tenant, req policyRequest) (*policies, error) {
	f := req.fields
	ext := f.Realizar
	if ext == nil {
		ext = &realizarRequest{}
	}
	var samplerRef pluginRef
	samplerParam := "realizar.sampler" // the field behind the sampler, for a plugin_error
	mirostat := 0
	if f.Mirostat != nil {
		mirostat = *f.Mirostat
	}
	dry, err := dryConfig(f, mirostat)
	if err != nil {
		return nil, err
	}
	switch {
	case ext.Sampler != nil:
		if hasSamplingFields(f) {
			return nil, badRequest("realizar.sampler", "realizar.sampler replaces the sampling fields (temperature, top_p, top_k, min_p, penalties, logit_bias, mirostat); give its config instead")
		}
		samplerRef = *ext.Sampler
	case mirostat == 2:
		cfg, err := mirostatV2Config(f, s.model.Tokenizer.Size())
		if err != nil {
			return nil, err
		}
		samplerRef, samplerParam = pluginRef{Plugin: plugins.MirostatV2Builtin, Config: cfg}, "mirostat"
	default:
		cfg, err := standardConfig(f, s.model.Tokenizer.Size())
		if err != nil {
			return nil, err
		}
		samplerRef, samplerParam = pluginRef{Plugin: plugins.StandardBuiltin, Config: cfg}, ""
		if mirostat == 1 {
			samplerParam = "mirostat"
		}
		if _, err := s.builtins(plugins.StandardBuiltin); err != nil {
			samplerRef = pluginRef{Plugin: plugins.GreedyBuiltin}
		}
	}
	spec := chain.Spec{Sampler: chain.Part{Ref: samplerRef.Plugin, Config: samplerRef.Config, Param: samplerParam}}
	for i, ref := range ext.Processors {
		spec.Processors = append(spec.Processors, chain.Part{Ref: ref.Plugin, Config: ref.Config, Param: fmt.Sprintf("realizar.processors[%d]", i)})
	}
	if dry != nil { // llama.cpp's DRY, after the tenant's processors (llama.cpp's order has only its penalties before)
		spec.DRY = &chain.Part{Config: dry, Param: "dry_multiplier"}
	}
	if req.json != nil {
		spec.JSONMode = &chain.Part{Config: req.json, Param: f.formatName()}
	}
	if req.grammar != nil {
		spec.Grammar = &chain.Part{Config: req.grammar, Param: cmp.Or(req.grammarParam, grammarParam(f))}
	}
	// A structured output ends with an end-of-generation token, which
	// ignore_eos masks: the same rule as the CLI's, before the chain's
	// (costly) init.
	var turn engine.GenerateConfig
	f.applyTurn(&turn)
	if err := spec.CheckIgnoreEOG(turn.IgnoreEOG, turnfields.IgnoreEOS.Key); err != nil {
		return nil, badRequest(turnfields.IgnoreEOS.Key, "%v", err)
	}
	switch {
	case ext.Stop != nil && len(req.stopText) > 0:
		return nil, badRequest("stop", "give either stop or realizar.stop, not both")
	case ext.Stop != nil:
		spec.Stops = []chain.Part{{Ref: ext.Stop.Plugin, Config: ext.Stop.Config, Param: "realizar.stop"}}
	case len(req.stopText) > 0:
		// OpenAI's stop strings run in the embedded strings policy.
		stops := plugins.StopStrings{Stop: req.stopText}
		if err := stops.Check(); err != nil {
			return nil, badRequest("stop", "%v", err)
		}
		spec.Stops = []chain.Part{{Ref: plugins.StringsBuiltin, Config: stops.Config(), Param: "stop"}}
	}
	// A chain with the grammar processor is kept for the tenant's next
	// request with the same chain (idleSamplers): its init is seconds.
	var opts chain.Options
	if req.grammar != nil {
		opts.Reuse = func(key string) *host.Sampler { return s.idle.take(t.Name, key) }
	}
	load := func(ctx context.Context, part chain.Part, kind abi.Kind) (*host.Plugin, error) {
		// The built-in standard sampler's Param is "" (a bad value is the
		// sampling field's 400, before); any other failure to load a
		// sampler is realizar.sampler's.
		param := cmp.Or(part.Param, "realizar.sampler")
		if part.MinLimits != (host.Limits{}) {
			return s.resolveEmbedded(ctx, t, part, param)
		}
		return s.resolve(ctx, t, pluginRef{Plugin: part.Ref, Config: part.Config}, kind, param)
	}
	c, err := chain.Build(ctx, s.model.Tokenizer, spec, load, opts)
	if err != nil {
		var pe *chain.PartError
		if errors.As(err, &pe) && pe.Param != "" {
			return nil, &paramError{param: pe.Param, err: pe.Err}
		}
		if errors.As(err, &pe) {
			return nil, pe.Err
		}
		return nil, err
	}
	p := &policies{sampler: c.Sampler, stop: c.StopPolicy(), names: c.Labels, chain: c, warnings: req.warnings}
	// The tenant's step deadline covers the whole step: the chain's calls
	// and the stop policy's together.
	step := host.NewStepDeadline(time.Duration(t.Limits.StepDeadline))
	c.Sampler.SetStepDeadline(step)
	for _, st := range c.Stops {
		st.SetStepDeadline(step)
	}
	if req.grammar != nil {
		tenant, k, smp := t.Name, c.Key, c.Sampler
		p.closeFn = append(p.closeFn, func() error { s.idle.put(tenant, k, smp); return nil })
	} else {
		p.closeFn = append(p.closeFn, c.Sampler.Close)
	}
	for _, st := range c.Stops {
		p.closeFn = append(p.closeFn, st.Close)
	}
	if ext.Drafter != nil {
		if p.drafter, err = s.buildDrafter(ctx, t, *ext.Drafter, req.draftMax); err != nil {
			p.Close()
			return nil, err
		}
		tenant, d := t.Name, p.drafter
		p.closeFn = append(p.closeFn, func() error { return s.closeDrafter(tenant, d) })
	}
	return p, nil
}

// maxPluginConfigBytes bounds the config the server hands one plugin
// (host.LoadOptions.MaxConfigBytes, in place of the host's 64 KiB
// default): twice the largest body, so that what a request carries fits
// after the server encodes it again (a schema, a grammar's escapes), and
// so does the grammar the server builds from tools of that size. A config
// past it is a 400 naming the field behind it (checkConfig; for tools,
// the function at which their grammar passes it).
const maxPluginConfigBytes = 2 * maxBodyBytes

// checkConfig refuses a plugin config past maxPluginConfigBytes with a 400
// naming param, the field behind it.
func checkConfig(param string, cfg []byte) error {
	if len(cfg) > maxPluginConfigBytes {
		return badRequest(param, "%s makes a plugin config of %d bytes; at most %d", param, len(cfg), maxPluginConfigBytes)
	}
	return nil
}

// hexPrefix matches what looks like a shortened plugin id.
var hexPrefix = regexp.MustCompile(`^[0-9a-fA-F]{1,63}$`)

// resolve loads the plugin ref names for t: a built-in name, or the sha256
// of one of t's uploads. Another tenant's plugin is "not found" exactly
// like a missing one.
func (s *Server) resolve(ctx context.Context, t *tenancy.Tenant, ref pluginRef, kind abi.Kind, param string) (*host.Plugin, error) {
	var wasm []byte
	ns := "" // the built-ins' namespace, which every tenant shares
	switch {
	case ref.Plugin == "":
		return nil, badRequest(param+".plugin", "%s.plugin is required: a built-in name or a sha256", param)
	case tenancy.ValidSum(ref.Plugin):
		b, err := s.store.Get(ctx, t.Name, ref.Plugin)
		if errors.Is(err, tenancy.ErrNoPlugin) {
			return nil, notFound("plugin_not_found", "plugin %s not found", ref.Plugin)
		}
		if err != nil {
			return nil, err
		}
		wasm, ns = b, t.Name
	default:
		b, err := s.builtins(ref.Plugin)
		if err != nil && hexPrefix.MatchString(ref.Plugin) {
			// Never resolved as a prefix: an id keeps its meaning as plugins are added.
			return nil, notFound("plugin_not_found", "plugin %q not found: a plugin id is the whole sha256 (64 lowercase hex digits), not a prefix", ref.Plugin)
		}
		if err != nil {
			return nil, notFound("plugin_not_found", "plugin %q not found: name a built-in or one of your plugins by sha256", ref.Plugin)
		}
		wasm = b
	}
	cfg := ref.Config
	if string(cfg) == "null" {
		cfg = nil
	}
	if err := checkConfig(param, cfg); err != nil {
		return nil, err
	}
	p, err := s.host.Load(ctx, wasm, host.LoadOptions{Kind: kind, Config: cfg, Limits: t.Limits.HostLimits(), Namespace: ns,
		MaxConfigBytes: maxPluginConfigBytes})
	if err != nil && !clientsLoadError(err) {
		return nil, err
	}
	if err != nil {
		e := badRequest(param, "%s: %v", param, err)
		if errors.Is(err, host.ErrKind) {
			e.Code = "wrong_plugin_kind"
		}
		return nil, e
	}
	return p, nil
}

// hasSamplingFields reports whether f sets a parameter the standard
// sampler reads (sampling.Of(sampling.Standard)).
func hasSamplingFields(f *samplingFields) bool {
	for _, p := range sampling.Of(sampling.Standard) {
		if f.has(p.Key) {
			return true
		}
	}
	return false
}

// grammarParam is the field that asked for the grammar processor.
func grammarParam(f *samplingFields) string {
	switch {
	case present(f.JSONSchema):
		return "json_schema"
	case f.Grammar != nil:
		return "grammar"
	}
	return f.formatName()
}

// standardOf are the request's number parameters of the standard sampler,
// each one the request leaves out at its server default where that
// differs from the sampler's.
func standardOf(f *samplingFields) plugins.Standard {
	var cfg plugins.Standard
	for _, p := range sampling.Of(sampling.Standard) {
		if v, ok := f.number(p.Key); ok {
			cfg.SetNumber(p.Key, v)
		} else if p.Server != nil {
			cfg.SetNumber(p.Key, *p.Server)
		}
	}
	return cfg
}

// standardConfig is the standard sampler's config for the request's
// fields, each number parameter of sampling.Params the request leaves out
// at its server default where that differs from the sampler's (OpenAI's
// temperature 1, top_p 1, no top-k or min-p; the penalties are off in
// both); a value outside the sampler's ranges is a 400 naming the field.
func standardConfig(f *samplingFields, nVocab int) (json.RawMessage, error) {
	cfg := standardOf(f)
	if len(f.Samplers) > 0 && string(f.Samplers) != "null" {
		names, err := plugins.ParseSamplers(f.Samplers)
		if err != nil {
			return nil, badRequest("samplers", "samplers: %v", err)
		}
		cfg.Samplers = names
	}
	if len(f.LogitBias) > 0 {
		cfg.LogitBias = map[int32]float64{}
		for k, v := range f.LogitBias {
			id, err := strconv.ParseInt(k, 10, 32)
			if err != nil || id < 0 || id >= int64(nVocab) {
				return nil, badRequest("logit_bias", "logit_bias key %q is not a token id in [0, %d)", k, nVocab)
			}
			cfg.LogitBias[int32(id)] += v
		}
	}
	if err := cfg.Check(nVocab); err != nil {
		var re *sampling.RangeError
		if errors.As(err, &re) {
			return nil, rangeError(re)
		}
		var se *sampling.SamplerError
		if errors.As(err, &se) {
			return nil, badRequest("samplers", "samplers: %q %s", se.Name, se.Why)
		}
		return nil, badRequest("logit_bias", "%v", err)
	}
	return cfg.Config(), nil
}

// rangeError is the 400 of a sampling field out of range, naming the
// field and the value.
func rangeError(re *sampling.RangeError) *APIError {
	if re.Got == "" {
		return badRequest(re.Key, "%s must be %s", re.Key, re.Want)
	}
	return badRequest(re.Key, "%s must be %s, not %s", re.Key, re.Want, re.Got)
}

// mirostatV2Config is the mirostat-v2 sampler's config for a request with
// mirostat 2: temperature (OpenAI's default, 1), mirostat_tau and
// mirostat_eta. As in llama.cpp the other sampling fields do not apply
// (their values are still checked, over the standard sampler's ranges),
// except logit_bias, which that sampler cannot honor: a 400.
func mirostatV2Config(f *samplingFields, nVocab int) (json.RawMessage, error) {
	if len(f.LogitBias) > 0 {
		return nil, badRequest("logit_bias", "logit_bias does not go with mirostat 2 (the mirostat-v2 sampler has none); use mirostat 1")
	}
	g := *f
	g.Mirostat = nil
	if _, err := standardConfig(&g, nVocab); err != nil {
		return nil, err
	}
	m := plugins.MirostatV2Of(standardOf(f)) // OpenAI's temperature, 1, when not given
	if err := m.Check(); err != nil {
		var re *sampling.RangeError
		if errors.As(err, &re) {
			return nil, rangeError(re)
		}
		return nil, badRequest("mirostat", "%v", err)
	}
	return m.Config(), nil
}

// dryConfig is the dry processor's config for the request's dry_* fields,
// or nil when DRY is off: dry_multiplier 0 (llama.cpp's default) or
// dry_penalty_last_n 0, a samplers order without dry, or mirostat 1 or 2
// (llama.cpp's common sampler runs DRY in neither case). A value out of
// range is a 400 naming the field, also when DRY is off.
func dryConfig(f *samplingFields, mirostat int) (json.RawMessage, error) {
	if mirostat < 0 || mirostat > 2 {
		return nil, badRequest("mirostat", "mirostat must be 0, 1 or 2, not %d", mirostat)
	}
	if f.DrySequenceBreakers != nil && len(f.DrySequenceBreakers) == 0 { // as llama.cpp's server
		return nil, badRequest("dry_sequence_breakers", "dry_sequence_breakers must be a non-empty list of strings")
	}
	d := plugins.DRY{SequenceBreakers: f.DrySequenceBreakers}
	for _, p := range sampling.Of(sampling.DRY) {
		if v, ok := f.number(p.Key); ok {
			d.SetNumber(p.Key, v)
		}
	}
	if err := d.Check(); err != nil {
		var re *sampling.RangeError
		if errors.As(err, &re) {
			return nil, rangeError(re)
		}
		return nil, badRequest("dry_multiplier", "%v", err)
	}
	var names []string
	if d.On() && mirostat == 0 && present(f.Samplers) {
		var err error
		if names, err = plugins.ParseSamplers(f.Samplers); err != nil {
			return nil, badRequest("samplers", "samplers: %v", err)
		}
	}
	if !d.Runs(mirostat, names) {
		return nil, nil
	}
	return d.Config(), nil
}

// resolveEmbedded loads the embedded processor part names (param is the
// request field that asked for it, for errors). It runs under the
// tenant's limits raised to part.MinLimits: the grammar processor's memory
// and init deadline (chain.MinLimits), as the built-in feature it is (a Go
// guest with a large vocabulary's trie and masks fits neither the host's
// 32 MiB default nor a tenant cap meant for the tenant's own plugins).
func (s *Server) resolveEmbedded(ctx context.Context, t *tenancy.Tenant, part chain.Part, param string) (*host.Plugin, error) {
	wasm, err := s.builtins(part.Ref)
	if err != nil {
		return nil, unsupported(param)
	}
	if err := checkConfig(param, part.Config); err != nil {
		return nil, err
	}
	p, err := s.host.Load(ctx, wasm, host.LoadOptions{Kind: abi.KindProcessor, Config: part.Config,
		Limits: chain.AtLeast(t.Limits.HostLimits(), part.MinLimits), MaxConfigBytes: maxPluginConfigBytes})
	if err != nil && !clientsLoadError(err) {
		return nil, err
	}
	if err != nil {
		return nil, badRequest(param, "the %s processor: %v", part.Ref, err)
	}
	return p, nil
}
