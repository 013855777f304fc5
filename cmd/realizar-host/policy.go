package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/grammar"
	"github.com/realizar-host/realizar-host/host"
	"github.com/realizar-host/realizar-host/plugins"
	"github.com/realizar-host/realizar-host/tokenizer"
)

// policyFlags choose the sampler, processors and stop policy of a turn.
type policyFlags struct {
	sampler       string
	samplerConfig string
	processors    []string
	stop          string
	stopConfig    string
	stopStrings   []string
	pluginLog     bool
	format        string // "text" or "json" (JSON mode)
	jsonSchema    string // --json-schema: FILE or inline JSON
	grammarFile   string // --grammar: a GBNF file

	// Sugar for the standard sampler's config, in its (OpenAI and
	// llama.cpp) field names; only flags the user set are passed on.
	sampling struct {
		temperature, topP, minP, typicalP                float64
		repeatPenalty, presencePenalty, frequencyPenalty float64
		topK, repeatLastN                                int
	}
}

// samplingFlags maps each sampling flag to its config field.
var samplingFlags = []struct{ flag, field string }{
	{"temperature", "temperature"},
	{"top-k", "top_k"},
	{"top-p", "top_p"},
	{"min-p", "min_p"},
	{"typical-p", "typical_p"},
	{"repeat-penalty", "repeat_penalty"},
	{"repeat-last-n", "repeat_last_n"},
	{"presence-penalty", "presence_penalty"},
	{"frequency-penalty", "frequency_penalty"},
}

func (p *policyFlags) register(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringVar(&p.sampler, "sampler", "", "sampler: an embedded one ("+strings.Join(builtinNamesOf("sampler"), ", ")+
		"), a FILE.wasm or a MANIFEST.json (default "+defaultSampler()+")")
	fs.StringVar(&p.samplerConfig, "sampler-config", "", "the sampler's config: a JSON object, or @FILE")
	fs.StringArrayVar(&p.processors, "processor", nil, "a logits processor: an embedded one ("+strings.Join(builtinNamesOf("processor"), ", ")+
		"), a FILE.wasm, or a MANIFEST.json to give it a config; run before the sampler; repeatable, in order")
	fs.StringVar(&p.stop, "stop", "", "stop policy: an embedded one ("+strings.Join(builtinNamesOf("stop"), ", ")+
		"), a FILE.wasm or a MANIFEST.json (default: none, or "+builtinStrings+" with --stop-string)")
	fs.StringVar(&p.stopConfig, "stop-config", "", "the stop policy's config: a JSON object, or @FILE")
	fs.StringArrayVar(&p.stopStrings, "stop-string", nil, "stop when the text ends with S and leave S out (repeatable)")
	fs.BoolVar(&p.pluginLog, "plugin-log", false, "print the plugins' logs on stderr after each turn")
	fs.StringVar(&p.format, "format", formatText, "output format: "+formatText+", or "+formatJSON+
		" (JSON mode: the embedded json processor, run last before the sampler, masks every token that would keep the answer from being a JSON object)")
	fs.StringVar(&p.jsonSchema, "json-schema", "", "constrain the answer to a JSON Schema: a FILE or inline JSON (the embedded grammar processor, run last before the sampler)")
	fs.StringVar(&p.grammarFile, "grammar", "", "constrain the answer to a GBNF grammar FILE (llama.cpp's format; the embedded grammar processor)")
	s := &p.sampling
	fs.Float64Var(&s.temperature, "temperature", 0.8, "standard sampler: temperature (<= 0 is greedy)")
	fs.IntVar(&s.topK, "top-k", 40, "standard sampler: keep the K most likely tokens (0: all)")
	fs.Float64Var(&s.topP, "top-p", 0.95, "standard sampler: nucleus probability mass (1: off)")
	fs.Float64Var(&s.minP, "min-p", 0.05, "standard sampler: drop tokens below min-p × the top probability (0: off)")
	fs.Float64Var(&s.typicalP, "typical-p", 1, "standard sampler: locally typical sampling mass (1: off)")
	fs.Float64Var(&s.repeatPenalty, "repeat-penalty", 1, "standard sampler: repetition penalty (1: off)")
	fs.IntVar(&s.repeatLastN, "repeat-last-n", 64, "standard sampler: tokens the penalties look back over")
	fs.Float64Var(&s.presencePenalty, "presence-penalty", 0, "standard sampler: presence penalty")
	fs.Float64Var(&s.frequencyPenalty, "frequency-penalty", 0, "standard sampler: frequency penalty")
}

// The --format values.
const (
	formatText = "text"
	formatJSON = "json"
)

// checkFormat refuses an unknown --format, and JSON mode with
// --ignore-eos (the processor ends a complete object with an
// end-of-generation token).
func (p *policyFlags) checkFormat(ignoreEOS bool) error {
	switch {
	case p.format != formatText && p.format != formatJSON:
		return usage(fmt.Errorf("--format %q: must be %s or %s", p.format, formatText, formatJSON))
	case p.format == formatJSON && ignoreEOS:
		return usage(errors.New("--format json ends the answer with an end-of-generation token; it cannot go with --ignore-eos"))
	}
	return nil
}

// policies are the loaded policies of a Session. Close them after use.
type policies struct {
	sampler *host.Sampler
	stop    *host.StopPolicy // nil when none
	names   []string         // plugin labels, chain order then stop
	// samplerName and stopName are what the stats line shows.
	samplerName, stopName string
}

// Close releases the plugin instances.
func (p *policies) Close() {
	if p.sampler != nil {
		_ = p.sampler.Close()
	}
	if p.stop != nil {
		_ = p.stop.Close()
	}
}

// writeLogs prints every plugin's log on w, each line prefixed by the
// plugin's label.
func (p *policies) writeLogs(w io.Writer) {
	write := func(label string, log []byte) {
		for line := range strings.SplitSeq(strings.TrimRight(string(log), "\n"), "\n") {
			if line != "" {
				fmt.Fprintf(w, "[%s] %s\n", label, line)
			}
		}
	}
	for i, log := range p.sampler.Log() {
		write(p.names[i], log)
	}
	if p.stop != nil {
		write(p.names[len(p.names)-1], p.stop.Log())
	}
}

// load resolves and loads the policies for the model's vocabulary; a turn
// generates at most maxTokens (JSON mode's budget). Usage errors (flags
// that contradict each other, a bad config argument) are exitUsage; a
// module that does not load is exitBadPlugin.
func (p *policyFlags) load(ctx context.Context, fs *pflag.FlagSet, h *host.Host, vocab *tokenizer.Tokenizer, maxTokens int) (*policies, error) {
	samplerCfg, err := p.samplerConfigJSON(fs)
	if err != nil {
		return nil, err
	}
	stopName, stopCfg, err := p.stopConfigJSON()
	if err != nil {
		return nil, err
	}
	samplerName := p.sampler
	if samplerName == "" {
		samplerName = defaultSampler()
	}
	out := &policies{samplerName: samplerName, stopName: stopName}
	var procs []*host.Plugin
	for _, spec := range p.processors {
		pl, err := loadPolicy(ctx, h, spec, abi.KindProcessor, nil, "--processor")
		if err != nil {
			return nil, err
		}
		procs = append(procs, pl)
		out.names = append(out.names, pl.String())
	}
	if p.format == formatJSON {
		cfg := plugins.JSONMode{EOG: vocab.EOG(), Control: vocab.Control(), MaxTokens: maxTokens}.Config()
		pl, err := loadPolicy(ctx, h, plugins.JSONBuiltin, abi.KindProcessor, cfg, "--format")
		if err != nil {
			return nil, err
		}
		procs = append(procs, pl)
		out.names = append(out.names, pl.String())
	}
	if cfg, flag, err := p.grammarConfig(); err != nil {
		return nil, err
	} else if cfg != nil {
		mod, err := plugins.Builtin(plugins.GrammarBuiltin)
		if err != nil {
			return nil, failure(err)
		}
		pl, err := h.Load(ctx, mod, host.LoadOptions{Kind: abi.KindProcessor, Config: cfg,
			Limits: host.Limits{MemoryPages: plugins.GrammarMemoryPages, InitTimeout: plugins.GrammarInitTimeout}})
		if err != nil {
			return nil, pluginLoadError(flag, plugins.GrammarBuiltin, err)
		}
		procs = append(procs, pl)
		out.names = append(out.names, pl.String())
	}
	sp, err := loadPolicy(ctx, h, samplerName, abi.KindSampler, samplerCfg, "--sampler")
	if err != nil {
		return nil, err
	}
	out.names = append(out.names, sp.String())
	if out.sampler, err = host.NewSampler(vocab, sp, procs...); err != nil {
		return nil, badPlugin(err)
	}
	if stopName != "" {
		pl, err := loadPolicy(ctx, h, stopName, abi.KindStop, stopCfg, "--stop")
		if err != nil {
			out.Close()
			return nil, err
		}
		out.names = append(out.names, pl.String())
		if out.stop, err = host.NewStopPolicy(vocab, pl); err != nil {
			out.Close()
			return nil, badPlugin(err)
		}
	}
	return out, nil
}

// samplerConfigJSON is the sampler's config: --sampler-config, with the
// sampling flags the user set merged in (standard only).
func (p *policyFlags) samplerConfigJSON(fs *pflag.FlagSet) ([]byte, error) {
	cfg, err := configArg(p.samplerConfig, "--sampler-config")
	if err != nil {
		return nil, err
	}
	var set []string
	for _, f := range samplingFlags {
		if fs.Changed(f.flag) {
			set = append(set, f.flag)
		}
	}
	if len(set) == 0 {
		return cfg, nil
	}
	if err := p.checkSampling(fs); err != nil {
		return nil, err
	}
	name := p.sampler
	if name == "" {
		name = defaultSampler()
	}
	if name != builtinStandard {
		if _, ok := builtinModule(name); ok {
			return nil, usage(fmt.Errorf("--%s applies to the %s sampler only; the embedded %s sampler takes no sampling parameters",
				set[0], builtinStandard, name))
		}
		return nil, usage(fmt.Errorf("--%s configures the %s sampler, not %s: put it in --sampler-config instead",
			set[0], builtinStandard, name))
	}
	obj := map[string]any{}
	if len(cfg) > 0 {
		if err := json.Unmarshal(cfg, &obj); err != nil {
			return nil, usage(fmt.Errorf("--sampler-config: %w", err))
		}
	}
	s := p.sampling
	values := map[string]any{
		"temperature": s.temperature, "top_k": s.topK, "top_p": s.topP, "min_p": s.minP, "typical_p": s.typicalP,
		"repeat_penalty": s.repeatPenalty, "repeat_last_n": s.repeatLastN,
		"presence_penalty": s.presencePenalty, "frequency_penalty": s.frequencyPenalty,
	}
	for _, f := range samplingFlags {
		if !fs.Changed(f.flag) {
			continue
		}
		if _, dup := obj[f.field]; dup {
			return nil, usage(fmt.Errorf("--%s and --sampler-config both set %q", f.flag, f.field))
		}
		obj[f.field] = values[f.field]
	}
	return json.Marshal(obj)
}

// checkSampling refuses sampling flags out of the standard sampler's
// ranges (the ones its init refuses, see plugins/sampler/standard) as a
// usage error, before anything is loaded. Any temperature is valid: <= 0
// is greedy.
func (p *policyFlags) checkSampling(fs *pflag.FlagSet) error {
	s := p.sampling
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	unit := func(v float64) bool { return v >= 0 && v <= 1 }
	checks := []struct {
		flag string
		ok   bool
		want string
	}{
		{"temperature", finite(s.temperature), "a finite number (<= 0 is greedy)"},
		{"top-k", s.topK >= 0, ">= 0 (0: all)"},
		{"top-p", unit(s.topP), "in [0, 1]"},
		{"min-p", unit(s.minP), "in [0, 1]"},
		{"typical-p", unit(s.typicalP), "in [0, 1]"},
		{"repeat-penalty", finite(s.repeatPenalty) && s.repeatPenalty > 0, "> 0 (1: off)"},
		{"repeat-last-n", s.repeatLastN >= -1, ">= -1 (-1: the whole context)"},
		{"presence-penalty", finite(s.presencePenalty), "a finite number"},
		{"frequency-penalty", finite(s.frequencyPenalty), "a finite number"},
	}
	for _, c := range checks {
		if fs.Changed(c.flag) && !c.ok {
			return usage(fmt.Errorf("--%s %s: must be %s", c.flag, fs.Lookup(c.flag).Value, c.want))
		}
	}
	return nil
}

// stopConfigJSON names the stop policy and its config: --stop and
// --stop-config, or the embedded strings policy for --stop-string.
func (p *policyFlags) stopConfigJSON() (name string, cfg []byte, err error) {
	cfg, err = configArg(p.stopConfig, "--stop-config")
	if err != nil {
		return "", nil, err
	}
	name = p.stop
	if len(p.stopStrings) == 0 {
		if name == "" && len(cfg) > 0 {
			return "", nil, usage(errors.New("--stop-config without --stop"))
		}
		return name, cfg, nil
	}
	if name != "" && name != builtinStrings {
		return "", nil, usage(fmt.Errorf("--stop-string configures the %s stop policy, not %s: put it in --stop-config instead",
			builtinStrings, name))
	}
	if len(cfg) > 0 {
		return "", nil, usage(errors.New("--stop-string and --stop-config both configure the stop strings"))
	}
	if cfg, err = stringsConfig(p.stopStrings); err != nil {
		return "", nil, usage(err)
	}
	return builtinStrings, cfg, nil
}

// configArg reads a config argument: a JSON object, or @FILE holding one.
// The empty string is no config.
func configArg(arg, flag string) ([]byte, error) {
	if arg == "" {
		return nil, nil
	}
	b := []byte(arg)
	if path, ok := strings.CutPrefix(arg, "@"); ok {
		var err error
		if b, err = os.ReadFile(path); err != nil {
			return nil, usage(fmt.Errorf("%s: %w", flag, err))
		}
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(b, &obj); err != nil || obj == nil {
		return nil, usage(fmt.Errorf("%s: not a JSON object", flag))
	}
	return bytes.TrimSpace(b), nil
}

// loadPolicy loads spec as a plugin of kind: an embedded name, a manifest
// (.json) or a module file. cfg goes to an embedded policy or a module
// file; a manifest carries its own config.
func loadPolicy(ctx context.Context, h *host.Host, spec string, kind abi.Kind, cfg []byte, flag string) (*host.Plugin, error) {
	var pl *host.Plugin
	var err error
	opts := host.LoadOptions{Kind: kind, Config: cfg}
	wasm, builtin := builtinModule(spec)
	switch {
	case builtin:
		pl, err = h.Load(ctx, wasm, opts)
	case strings.HasSuffix(strings.ToLower(spec), ".json"):
		if len(cfg) > 0 {
			return nil, usage(fmt.Errorf("%s %s: a manifest carries its own config", flag, spec))
		}
		pl, err = h.LoadManifest(ctx, spec)
		if err == nil && pl.Kind() != kind {
			err = fmt.Errorf("%w: plugin %s is a %s, not a %s", host.ErrKind, pl.Meta().Name, pl.Kind(), kind)
		}
	case strings.HasSuffix(strings.ToLower(spec), ".wasm") || strings.ContainsRune(spec, os.PathSeparator):
		pl, err = h.LoadFile(ctx, spec, opts)
	default:
		return nil, usage(fmt.Errorf("%s %q: not an embedded policy (%s), a .wasm file or a .json manifest",
			flag, spec, strings.Join(builtinNames(), ", ")))
	}
	if err != nil {
		return nil, pluginLoadError(flag, spec, err)
	}
	return pl, nil
}

// pluginLoadError is the one line for a plugin that did not load: the flag
// and the policy as the user named it (an embedded policy by its name, not
// its hash), then the cause without the host's "host: load SOURCE:" frame.
func pluginLoadError(flag, spec string, err error) error {
	var le *host.LoadError
	if errors.As(err, &le) {
		err = le.Err
	}
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == spec {
		err = pe.Err // "no such file or directory", the path is already named
	}
	return badPlugin(fmt.Errorf("%s %s: %s", flag, spec, strings.TrimPrefix(err.Error(), "host: ")))
}

// grammarConfig is the grammar processor's config for --json-schema or
// --grammar (nil for neither). The schema or grammar is compiled here
// first, so one the engine cannot enforce is a usage error naming the
// keyword or the line and column, not a plugin failure.
func (p *policyFlags) grammarConfig() ([]byte, string, error) {
	switch {
	case p.jsonSchema != "" && p.grammarFile != "":
		return nil, "", usage(errors.New("--json-schema and --grammar exclude each other"))
	case p.jsonSchema != "" && p.format == formatJSON:
		return nil, "", usage(errors.New("--json-schema and --format json exclude each other (a schema already makes the answer JSON)"))
	case p.jsonSchema != "":
		schema := []byte(p.jsonSchema)
		if t := strings.TrimSpace(p.jsonSchema); !strings.HasPrefix(t, "{") && t != "true" {
			var err error
			if schema, err = os.ReadFile(p.jsonSchema); err != nil {
				return nil, "", usage(fmt.Errorf("--json-schema: %w", err))
			}
		}
		if _, err := grammar.FromJSONSchema(schema); err != nil {
			return nil, "", usage(fmt.Errorf("--json-schema: %w", err))
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, schema); err != nil {
			return nil, "", usage(fmt.Errorf("--json-schema: %w", err))
		}
		cfg, _ := json.Marshal(map[string]json.RawMessage{"json_schema": buf.Bytes()})
		return cfg, "--json-schema", nil
	case p.grammarFile != "":
		src, err := os.ReadFile(p.grammarFile)
		if err != nil {
			return nil, "", usage(fmt.Errorf("--grammar: %w", err))
		}
		if _, err := grammar.Compile(string(src)); err != nil {
			return nil, "", usage(fmt.Errorf("--grammar %s: %w", p.grammarFile, err))
		}
		cfg, _ := json.Marshal(map[string]string{"grammar": string(src)})
		return cfg, "--grammar", nil
	}
	return nil, "", nil
}
