package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/engine"
	"github.com/realizar-host/realizar-host/host"
	"github.com/realizar-host/realizar-host/plugins"
	"github.com/realizar-host/realizar-host/tokenizer"
)

// Builtins returns the module of an embedded policy by name ("greedy",
// "standard", "strings"); an error for a name it does not embed.
// plugins.Builtin is one.
type Builtins func(name string) ([]byte, error)

// Names of the built-in policies the server uses by default.
const (
	builtinStandard = "standard"
	builtinGreedy   = "greedy"
	builtinStrings  = "strings"
	builtinJSON     = "json"
)

// policies are one request's fresh plugin instances. Close them after the turn.
type policies struct {
	sampler *host.Sampler
	stop    engine.StopPolicy // nil: none
	closeFn []func() error
	names   []string // labels, sampler chain first, for errors and the response
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
}

// buildPolicies resolves and instantiates the request's policies for t:
// the realizar extension's plugins when named, else the built-in standard
// sampler configured from the OpenAI fields and the stop strings.
func (s *Server) buildPolicies(ctx context.Context, t *Tenant, req policyRequest) (*policies, error) {
	f := req.fields
	ext := f.Realizar
	if ext == nil {
		ext = &realizarRequest{}
	}
	var samplerRef pluginRef
	if ext.Sampler != nil {
		if hasSamplingFields(f) {
			return nil, badRequest("realizar.sampler", "realizar.sampler replaces the sampling fields (temperature, top_p, top_k, min_p, penalties, logit_bias); give its config instead")
		}
		samplerRef = *ext.Sampler
	} else {
		cfg, err := standardConfig(f, s.model.Tokenizer.Size())
		if err != nil {
			return nil, err
		}
		samplerRef = pluginRef{Plugin: builtinStandard, Config: cfg}
		if _, err := s.builtins(builtinStandard); err != nil {
			samplerRef = pluginRef{Plugin: builtinGreedy}
		}
	}
	p := &policies{}
	var chain []*host.Plugin
	for i, ref := range ext.Processors {
		pl, err := s.resolve(ctx, t, ref, abi.KindProcessor, fmt.Sprintf("realizar.processors[%d]", i))
		if err != nil {
			return nil, err
		}
		chain = append(chain, pl)
	}
	if req.json != nil {
		pl, err := s.resolve(ctx, t, pluginRef{Plugin: builtinJSON, Config: req.json}, abi.KindProcessor, "response_format")
		if err != nil {
			return nil, err
		}
		chain = append(chain, pl)
	}
	if req.grammar != nil {
		pl, err := s.resolveGrammar(ctx, t, req.grammar)
		if err != nil {
			return nil, err
		}
		chain = append(chain, pl)
	}
	sp, err := s.resolve(ctx, t, samplerRef, abi.KindSampler, "realizar.sampler")
	if err != nil {
		return nil, err
	}
	smp, err := host.NewSampler(s.model.Tokenizer, sp, chain...)
	if err != nil {
		return nil, err
	}
	p.sampler = smp
	p.closeFn = append(p.closeFn, smp.Close)
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
		cfg, err := json.Marshal(map[string][]string{"stop": req.stopText})
		if err != nil {
			p.Close()
			return nil, err
		}
		stopRef, param = &pluginRef{Plugin: builtinStrings, Config: cfg}, "stop"
	}
	if stopRef != nil {
		stp, err := s.resolve(ctx, t, *stopRef, abi.KindStop, param)
		if err != nil {
			p.Close()
			return nil, err
		}
		sp, err := host.NewStopPolicy(s.model.Tokenizer, stp)
		if err != nil {
			p.Close()
			return nil, err
		}
		p.stop = sp
		p.closeFn = append(p.closeFn, sp.Close)
		p.names = append(p.names, stp.String())
	}
	return p, nil
}

// resolve loads the plugin ref names for t: a built-in name, or the sha256
// of one of t's uploads. Another tenant's plugin is "not found" exactly
// like a missing one.
func (s *Server) resolve(ctx context.Context, t *Tenant, ref pluginRef, kind abi.Kind, param string) (*host.Plugin, error) {
	var wasm []byte
	switch {
	case ref.Plugin == "":
		return nil, badRequest(param+".plugin", "%s.plugin is required: a built-in name or a sha256", param)
	case isSum(ref.Plugin):
		b, err := s.store.Get(ctx, t.Name, ref.Plugin)
		if errors.Is(err, ErrNoPlugin) {
			return nil, notFound("plugin_not_found", "plugin %s not found", ref.Plugin)
		}
		if err != nil {
			return nil, err
		}
		wasm = b
	default:
		b, err := s.builtins(ref.Plugin)
		if err != nil {
			return nil, notFound("plugin_not_found", "plugin %q not found: name a built-in or one of your plugins by sha256", ref.Plugin)
		}
		wasm = b
	}
	cfg := ref.Config
	if string(cfg) == "null" {
		cfg = nil
	}
	p, err := s.host.Load(ctx, wasm, host.LoadOptions{Kind: kind, Config: cfg, Limits: t.Limits.hostLimits()})
	if err != nil {
		e := badRequest(param, "%s: %v", param, err)
		if errors.Is(err, host.ErrKind) {
			e.Code = "wrong_plugin_kind"
		}
		return nil, e
	}
	return p, nil
}

// jsonModeConfig is the json processor's config for the model's
// vocabulary: its end-of-generation and control ids, an object at the top
// level, and the turn's token budget (so that a turn cut by max_tokens
// still ends with a whole object).
func jsonModeConfig(tok *tokenizer.Tokenizer, budget int) json.RawMessage {
	cfg := map[string]any{"eog": tok.EOG(), "control": tok.Control(), "max_tokens": budget}
	b, _ := json.Marshal(cfg) // int slices and an int always marshal
	return b
}

// hasSamplingFields reports whether f sets a field the standard sampler reads.
func hasSamplingFields(f *samplingFields) bool {
	return f.Temperature != nil || f.TopP != nil || f.TopK != nil || f.MinP != nil || f.RepeatPenalty != nil ||
		f.FrequencyPenalty != nil || f.PresencePenalty != nil || len(f.LogitBias) > 0
}

// standardConfig is the standard sampler's config for the OpenAI fields,
// with OpenAI's defaults (temperature 1, top_p 1, no top-k, no min-p, no
// penalties) rather than llama.cpp's.
func standardConfig(f *samplingFields, nVocab int) (json.RawMessage, error) {
	cfg := map[string]any{"temperature": 1.0, "top_p": 1.0, "top_k": 0, "min_p": 0.0, "repeat_penalty": 1.0,
		"presence_penalty": 0.0, "frequency_penalty": 0.0}
	setF := func(key string, v *float64, lo, hi float64) error {
		if v == nil {
			return nil
		}
		if !(*v >= lo && *v <= hi) {
			return badRequest(key, "%s is %v, must be in [%v, %v]", key, *v, lo, hi)
		}
		cfg[key] = *v
		return nil
	}
	for _, x := range []struct {
		key    string
		v      *float64
		lo, hi float64
	}{
		{"temperature", f.Temperature, 0, 2}, {"top_p", f.TopP, 0, 1}, {"min_p", f.MinP, 0, 1},
		{"repeat_penalty", f.RepeatPenalty, 0, 10}, {"presence_penalty", f.PresencePenalty, -2, 2},
		{"frequency_penalty", f.FrequencyPenalty, -2, 2},
	} {
		if err := setF(x.key, x.v, x.lo, x.hi); err != nil {
			return nil, err
		}
	}
	if f.TopK != nil {
		if *f.TopK < 0 {
			return nil, badRequest("top_k", "top_k is %d, must be >= 0", *f.TopK)
		}
		cfg["top_k"] = *f.TopK
	}
	if len(f.LogitBias) > 0 {
		bias := map[string]float64{}
		for k, v := range f.LogitBias {
			id, err := strconv.Atoi(k)
			if err != nil || id < 0 || id >= nVocab {
				return nil, badRequest("logit_bias", "logit_bias key %q is not a token id in [0, %d)", k, nVocab)
			}
			if !(v >= -100 && v <= 100) {
				return nil, badRequest("logit_bias", "logit_bias[%s] is %v, must be in [-100, 100]", k, v)
			}
			bias[strconv.Itoa(id)] = v
		}
		cfg["logit_bias"] = bias
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		return nil, &APIError{Status: http.StatusInternalServerError, Type: typeServer, Message: err.Error()}
	}
	return b, nil
}

// resolveGrammar loads the embedded grammar processor with cfg. It runs
// under the tenant's limits, except memory and the init deadline: at least
// plugins.GrammarInitTimeout to prepare the vocabulary, and
// plugins.GrammarMemoryPages, as the built-in feature it is (a Go guest
// with a large vocabulary's trie and masks fits neither the host's 32 MiB
// default nor a tenant cap meant for the tenant's own plugins).
func (s *Server) resolveGrammar(ctx context.Context, t *Tenant, cfg json.RawMessage) (*host.Plugin, error) {
	wasm, err := s.builtins(plugins.GrammarBuiltin)
	if err != nil {
		return nil, unsupported("response_format")
	}
	lim := t.Limits.hostLimits()
	lim.MemoryPages = max(lim.MemoryPages, plugins.GrammarMemoryPages)
	lim.InitTimeout = max(lim.InitTimeout, plugins.GrammarInitTimeout)
	p, err := s.host.Load(ctx, wasm, host.LoadOptions{Kind: abi.KindProcessor, Config: cfg, Limits: lim})
	if err != nil {
		return nil, badRequest("response_format", "the grammar processor: %v", err)
	}
	return p, nil
}
