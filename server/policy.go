package server

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/engine"
	"github.com/realizar-host/realizar-host/host"
	"github.com/realizar-host/realizar-host/plugins"
	"github.com/realizar-host/realizar-host/plugins/sampling"
	"github.com/realizar-host/realizar-host/tenancy"
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
	names   []string          // labels, sampler chain first, for errors and the response
	params  map[string]string // label -> the request field that chose or configured the plugin
}

// withParam gives a failure of one of p's plugins the request field behind
// the plugin (a plugin_error's param); other errors pass as they are.
func (p *policies) withParam(err error) error {
	var plug *host.PluginError
	if !errors.As(err, &plug) {
		return err
	}
	if param := p.params[plug.Plugin]; param != "" {
		return &paramError{param: param, err: err}
	}
	return err
}

// param records that the plugin labelled label comes from the request
// field param (the first plugin of a label keeps its field).
func (p *policies) param(label, param string) {
	if p.params == nil {
		p.params = map[string]string{}
	}
	if _, ok := p.params[label]; !ok && param != "" {
		p.params[label] = param
	}
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
	// ("" is response_format; tool calls' is tools).
	grammarParam string
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
	p := &policies{}
	var chain []*host.Plugin
	var sp, stp *host.Plugin
	defer func() { // the adapters hold the code they run: a deleted plugin's goes with them
		for _, pl := range append(chain, sp, stp) {
			if pl != nil {
				_ = pl.Close()
			}
		}
	}()
	var key strings.Builder // the chain's identity, for idleSamplers
	keyPart := func(pl *host.Plugin, cfg []byte, param string) {
		fmt.Fprintf(&key, "%s\x00%d\x00%s\x00%v\x00", pl.SHA256(), len(cfg), cfg, pl.Limits())
		p.param(pl.String(), param)
	}
	for i, ref := range ext.Processors {
		param := fmt.Sprintf("realizar.processors[%d]", i)
		pl, err := s.resolve(ctx, t, ref, abi.KindProcessor, param)
		if err != nil {
			return nil, err
		}
		chain = append(chain, pl)
		keyPart(pl, ref.Config, param)
	}
	if dry != nil { // llama.cpp's DRY, after the tenant's processors (llama.cpp's order has only its penalties before)
		pl, err := s.resolve(ctx, t, pluginRef{Plugin: plugins.DRYBuiltin, Config: dry}, abi.KindProcessor, "dry_multiplier")
		if err != nil {
			return nil, err
		}
		chain = append(chain, pl)
		keyPart(pl, dry, "dry_multiplier")
	}
	if req.json != nil {
		pl, err := s.resolve(ctx, t, pluginRef{Plugin: plugins.JSONBuiltin, Config: req.json}, abi.KindProcessor, "response_format")
		if err != nil {
			return nil, err
		}
		chain = append(chain, pl)
		keyPart(pl, req.json, "response_format")
	}
	if req.grammar != nil {
		pl, err := s.resolveGrammar(ctx, t, req.grammar, cmp.Or(req.grammarParam, "response_format"))
		if err != nil {
			return nil, err
		}
		chain = append(chain, pl)
		keyPart(pl, req.grammar, grammarParam(f))
	}
	sp, err = s.resolve(ctx, t, samplerRef, abi.KindSampler, "realizar.sampler")
	if err != nil {
		return nil, err
	}
	keyPart(sp, samplerRef.Config, samplerParam)
	// A chain with the grammar processor is kept for the tenant's next
	// request with the same chain (idleSamplers): its init is seconds.
	var smp *host.Sampler
	if req.grammar != nil {
		smp = s.idle.take(t.Name, key.String())
	}
	if smp == nil {
		if smp, err = host.NewSampler(s.model.Tokenizer, sp, chain...); err != nil {
			return nil, p.withParam(err)
		}
	}
	// The tenant's step deadline covers the whole step: the chain's calls
	// and the stop policy's together.
	step := host.NewStepDeadline(time.Duration(t.Limits.StepDeadline))
	smp.SetStepDeadline(step)
	p.sampler = smp
	if req.grammar != nil {
		tenant, k := t.Name, key.String()
		p.closeFn = append(p.closeFn, func() error { s.idle.put(tenant, k, smp); return nil })
	} else {
		p.closeFn = append(p.closeFn, smp.Close)
	}
	for _, c := range chain {
		p.names = append(p.names, c.String())
	}
	p.names = append(p.names, sp.String())

	var stopRef *pluginRef
	param := "realizar.stop"
	switch {
	case ext.Stop != nil && len(req.stopText) > 0:
		p.Close()
		return nil, badRequest("stop", "give either stop or realizar.stop, not both")
	case ext.Stop != nil:
		stopRef = ext.Stop
	case len(req.stopText) > 0:
		// OpenAI's stop strings run in the embedded strings policy.
		stops := plugins.StopStrings{Stop: req.stopText}
		if err := stops.Check(); err != nil {
			p.Close()
			return nil, badRequest("stop", "%v", err)
		}
		stopRef, param = &pluginRef{Plugin: plugins.StringsBuiltin, Config: stops.Config()}, "stop"
	}
	if stopRef != nil {
		stp, err = s.resolve(ctx, t, *stopRef, abi.KindStop, param)
		if err != nil {
			p.Close()
			return nil, err
		}
		p.param(stp.String(), param)
		sp, err := host.NewStopPolicy(s.model.Tokenizer, stp)
		if err != nil {
			p.Close()
			return nil, p.withParam(err)
		}
		sp.SetStepDeadline(step)
		p.stop = sp
		p.closeFn = append(p.closeFn, sp.Close)
		p.names = append(p.names, stp.String())
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
	return "response_format"
}

// standardConfig is the standard sampler's config for the request's
// fields, each number parameter of sampling.Params the request leaves out
// at its server default where that differs from the sampler's (OpenAI's
// temperature 1, top_p 1, no top-k or min-p; the penalties are off in
// both); a value outside the sampler's ranges is a 400 naming the field.
func standardConfig(f *samplingFields, nVocab int) (json.RawMessage, error) {
	var cfg plugins.Standard
	for _, p := range sampling.Of(sampling.Standard) {
		if v, ok := f.number(p.Key); ok {
			cfg.SetNumber(p.Key, v)
		} else if p.Server != nil {
			cfg.SetNumber(p.Key, *p.Server)
		}
	}
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
	var m plugins.MirostatV2
	for _, key := range []string{"temperature", "mirostat_tau", "mirostat_eta"} {
		p, _ := sampling.Lookup(key)
		if v, ok := f.number(key); ok {
			m.SetNumber(key, v)
		} else if p.Server != nil {
			m.SetNumber(key, *p.Server) // OpenAI's temperature, 1
		}
	}
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
	if !d.On() || mirostat != 0 {
		return nil, nil
	}
	if len(f.Samplers) > 0 && string(f.Samplers) != "null" {
		names, err := plugins.ParseSamplers(f.Samplers)
		if err != nil {
			return nil, badRequest("samplers", "samplers: %v", err)
		}
		if !sampling.ListsDRY(names) {
			return nil, nil
		}
	}
	return d.Config(), nil
}

// resolveGrammar loads the embedded grammar processor with cfg (param is
// the request field that asked for it, for errors). It runs
// under the tenant's limits, except memory and the init deadline: at least
// plugins.GrammarInitTimeout to prepare the vocabulary, and
// plugins.GrammarMemoryPages, as the built-in feature it is (a Go guest
// with a large vocabulary's trie and masks fits neither the host's 32 MiB
// default nor a tenant cap meant for the tenant's own plugins).
func (s *Server) resolveGrammar(ctx context.Context, t *tenancy.Tenant, cfg json.RawMessage, param string) (*host.Plugin, error) {
	wasm, err := s.builtins(plugins.GrammarBuiltin)
	if err != nil {
		return nil, unsupported(param)
	}
	lim := t.Limits.HostLimits()
	lim.MemoryPages = max(lim.MemoryPages, plugins.GrammarMemoryPages)
	lim.InitTimeout = max(lim.InitTimeout, plugins.GrammarInitTimeout)
	if err := checkConfig(param, cfg); err != nil {
		return nil, err
	}
	p, err := s.host.Load(ctx, wasm, host.LoadOptions{Kind: abi.KindProcessor, Config: cfg, Limits: lim,
		MaxConfigBytes: maxPluginConfigBytes})
	if err != nil && !clientsLoadError(err) {
		return nil, err
	}
	if err != nil {
		return nil, badRequest(param, "the grammar processor: %v", err)
	}
	return p, nil
}
