package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/host"
	"github.com/realizar-host/realizar-host/internal/grammar"
	"github.com/realizar-host/realizar-host/internal/plugins"
	"github.com/realizar-host/realizar-host/internal/plugins/chain"
	"github.com/realizar-host/realizar-host/internal/plugins/sampling"
	"github.com/realizar-host/realizar-host/internal/turnfields"
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
	grammarFile   string // --grammar: a GBNF FILE or inline GBNF
	// shortest: the fewest bytes (single-byte tokens) of a sentence of
	// the --json-schema or --grammar grammar (grammarConfig), -1 unknown
	shortest int
	// schemaWarnings: what --json-schema asks and the grammar does not
	// enforce (grammarConfig; warnings prints them)
	schemaWarnings []grammar.Warning

	// The sampling flags (sampling.Params' Flag), registered from the
	// table: a number's value by its key, the order and DRY's breakers.
	// Only flags the user set are passed on.
	numbers  map[string]*float64 // Float and Float32 parameters
	integers map[string]*int     // Int parameters
	samplers string
	breakers []string
}

// paramFlags are the sampling flags of plugin's parameters, each with its
// config key.
func paramFlags(plugin string) []struct{ flag, key string } {
	var out []struct{ flag, key string }
	for _, p := range sampling.Of(plugin) {
		if p.Flag != "" {
			out = append(out, struct{ flag, key string }{p.Flag, p.Key})
		}
	}
	return out
}

// number is the value of the number parameter key's flag.
func (p *policyFlags) number(key string) float64 {
	if v, ok := p.integers[key]; ok {
		return float64(*v)
	}
	return *p.numbers[key]
}

// registerParams registers a flag for every parameter of sampling.Params
// that has one, with the table's default and usage, but the host's seed
// (turnFlags' --seed: serve has none).
func (p *policyFlags) registerParams(fs *pflag.FlagSet) {
	p.numbers, p.integers = map[string]*float64{}, map[string]*int{}
	for _, sp := range sampling.Params {
		if sp.Flag == "" || sp.Plugin == sampling.Host {
			continue
		}
		usage := sp.Usage
		if sp.Plugin == sampling.Standard && sp.Stage != "mirostat" {
			usage = "standard sampler: " + usage
		}
		if sp.Number() {
			usage += "; " + sp.Want()
		}
		switch sp.Type {
		case sampling.Float, sampling.Float32:
			p.numbers[sp.Key] = fs.Float64(sp.Flag, sp.Default, usage)
		case sampling.Int:
			p.integers[sp.Key] = fs.Int(sp.Flag, int(sp.Default), usage)
		case sampling.Order:
			fs.StringVar(&p.samplers, sp.Flag, sp.DefaultText, usage)
		case sampling.Strings:
			fs.StringArrayVar(&p.breakers, sp.Flag, nil, usage)
		}
	}
}

func (p *policyFlags) register(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringVar(&p.sampler, "sampler", "", "sampler: an embedded one ("+strings.Join(builtinNamesOf("sampler"), ", ")+
		"), a FILE.wasm or a MANIFEST.json (default "+defaultSampler()+")")
	fs.StringVar(&p.samplerConfig, "sampler-config", "", "the sampler's config: a JSON object, or @FILE")
	fs.StringArrayVar(&p.processors, "processor", nil, "a logits processor: an embedded one ("+strings.Join(builtinNamesOf("processor"), ", ")+
		"), a FILE.wasm, or a MANIFEST.json to give it a config; run before the sampler; repeatable, in order")
	fs.StringVar(&p.stop, "stop", "", "stop policy: an embedded one ("+strings.Join(builtinNamesOf("stop"), ", ")+
		"), a FILE.wasm or a MANIFEST.json (default: none, or "+plugins.StringsBuiltin+" with --stop-string)")
	fs.StringVar(&p.stopConfig, "stop-config", "", "the stop policy's config: a JSON object, or @FILE")
	fs.StringArrayVar(&p.stopStrings, "stop-string", nil, "stop when the text ends with S and leave S out (repeatable)")
	fs.BoolVar(&p.pluginLog, "plugin-log", false, "print the plugins' logs on stderr after each turn")
	fs.StringVar(&p.format, "format", formatText, "output format: "+formatText+", or "+formatJSON+
		" (JSON mode: the embedded json processor, run last before the sampler, masks every token that would keep the answer from being a JSON object)")
	fs.StringVar(&p.jsonSchema, "json-schema", "", "constrain the answer to a JSON Schema: a FILE or inline JSON (the embedded grammar processor, run last before the sampler)")
	fs.StringVar(&p.grammarFile, "grammar", "", "constrain the answer to a GBNF grammar: a FILE or inline GBNF, told apart by its \"::=\" (llama.cpp's format; the embedded grammar processor)")
	p.registerParams(fs)
}

// The --format values.
const (
	formatText = "text"
	formatJSON = "json"
)

// checkFormat refuses an unknown --format, and a structured output
// (--format json, --json-schema, --grammar) with --ignore-eos
// (chain.Spec.CheckIgnoreEOG: the processor ends a complete answer with
// an end-of-generation token, which --ignore-eos masks).
func (p *policyFlags) checkFormat(ignoreEOS bool) error {
	if p.format != formatText && p.format != formatJSON {
		return usage(fmt.Errorf("--format %q: must be %s or %s", p.format, formatText, formatJSON))
	}
	if err := p.structured().CheckIgnoreEOG(ignoreEOS, "--"+turnfields.IgnoreEOS.Flag); err != nil {
		return usage(err)
	}
	return nil
}

// structured is the Spec of the flags' structured output, its Params
// alone (load sets the configs): JSON mode for --format json, the grammar
// for --json-schema or --grammar.
func (p *policyFlags) structured() chain.Spec {
	var s chain.Spec
	if p.format == formatJSON {
		s.JSONMode = &chain.Part{Param: "--format json"}
	}
	switch {
	case p.jsonSchema != "":
		s.Grammar = &chain.Part{Param: "--json-schema"}
	case p.grammarFile != "":
		s.Grammar = &chain.Part{Param: "--grammar"}
	}
	return s
}

// policies are the loaded policies of a Session. Close them after use.
type policies struct {
	*chain.Chain
	// samplerName and stopName are what the stats line shows.
	samplerName, stopName string
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
	for i, log := range p.Sampler.Log() {
		write(p.Labels[i], log)
	}
	for i, s := range p.Stops {
		write(p.Labels[len(p.Labels)-len(p.Stops)+i], s.Log())
	}
}

// load resolves and loads the policies for the model's vocabulary; a turn
// generates at most maxTokens (JSON mode's budget). Usage errors (flags
// that contradict each other, a bad config argument) are exitUsage; a
// module that does not load is exitBadPlugin.
func (p *policyFlags) load(ctx context.Context, fs *pflag.FlagSet, h *host.Host, vocab *tokenizer.Tokenizer, maxTokens int) (*policies, error) {
	samplerCfg, err := p.samplerConfigJSON(fs, vocab.Size())
	if err != nil {
		return nil, err
	}
	stopName, stopCfg, stringsCfg, err := p.stopConfigJSON()
	if err != nil {
		return nil, err
	}
	dryCfg, err := p.dryConfig(fs)
	if err != nil {
		return nil, err
	}
	samplerName := p.samplerName(fs)
	out := &policies{samplerName: samplerName, stopName: stopName}
	if stringsCfg != nil {
		out.stopName += "+" + plugins.StringsBuiltin
	}
	spec := p.structured()
	spec.Sampler = chain.Part{Ref: samplerName, Config: samplerCfg, Param: "--sampler"}
	for _, ref := range p.processors {
		spec.Processors = append(spec.Processors, chain.Part{Ref: ref, Param: "--processor"})
	}
	if dryCfg != nil {
		spec.DRY = &chain.Part{Config: dryCfg, Param: "--dry-multiplier"}
	}
	if spec.JSONMode != nil {
		spec.JSONMode.Config = plugins.JSONMode{EOG: vocab.EOG(), Control: vocab.Control(), MaxTokens: maxTokens}.Config()
	}
	if cfg, err := p.grammarConfig(maxTokens); err != nil {
		return nil, err
	} else if cfg != nil {
		spec.Grammar.Config = cfg
	}
	if stopName != "" {
		spec.Stops = append(spec.Stops, chain.Part{Ref: stopName, Config: stopCfg, Param: "--stop"})
	}
	if stringsCfg != nil {
		spec.Stops = append(spec.Stops, chain.Part{Ref: plugins.StringsBuiltin, Config: stringsCfg, Param: "--stop-string"})
	}
	load := func(ctx context.Context, part chain.Part, kind abi.Kind) (*host.Plugin, error) {
		return loadPolicy(ctx, h, part, kind)
	}
	c, err := chain.Build(ctx, vocab, spec, load, chain.Options{})
	if err != nil {
		var pe *chain.PartError
		if errors.As(err, &pe) {
			return nil, badPlugin(pe.Err)
		}
		return nil, err
	}
	out.Chain = c
	return out, nil
}

// mirostat2 reports whether --mirostat 2 chose the mirostat-v2 sampler.
func (p *policyFlags) mirostat2(fs *pflag.FlagSet) bool {
	return fs.Changed("mirostat") && *p.integers["mirostat"] == 2
}

// samplerName is the sampler to load: --sampler, the mirostat-v2 sampler
// for --mirostat 2, or the default.
func (p *policyFlags) samplerName(fs *pflag.FlagSet) string {
	switch {
	case p.mirostat2(fs):
		return plugins.MirostatV2Builtin
	case p.sampler != "":
		return p.sampler
	}
	return defaultSampler()
}

// samplerConfigJSON is the sampler's config: --sampler-config, with the
// sampling flags the user set merged in (standard, or mirostat-v2 for
// --mirostat 2), checked against the sampler's ranges for a vocabulary of
// nVocab ids.
func (p *policyFlags) samplerConfigJSON(fs *pflag.FlagSet, nVocab int) ([]byte, error) {
	cfg, err := configArg(p.samplerConfig, "--sampler-config")
	if err != nil {
		return nil, err
	}
	var set []string
	samplingFlags := paramFlags(sampling.Standard)
	for _, f := range samplingFlags {
		if fs.Changed(f.flag) {
			set = append(set, f.flag)
		}
	}
	if len(set) == 0 {
		return cfg, nil
	}
	if m := *p.integers["mirostat"]; fs.Changed("mirostat") && (m < 0 || m > 2) {
		return nil, usage(fmt.Errorf("--mirostat %d: must be 0, 1 or 2", m))
	}
	name := p.samplerName(fs)
	if p.mirostat2(fs) && p.sampler != "" && p.sampler != plugins.MirostatV2Builtin {
		return nil, usage(fmt.Errorf("--mirostat 2 is the %s sampler; it cannot go with --sampler %s", plugins.MirostatV2Builtin, p.sampler))
	}
	if name != plugins.StandardBuiltin && !p.mirostat2(fs) {
		if _, ok := builtinModule(name); ok {
			return nil, usage(fmt.Errorf("--%s applies to the %s sampler only; the embedded %s sampler takes no sampling parameters",
				set[0], plugins.StandardBuiltin, name))
		}
		return nil, usage(fmt.Errorf("--%s configures the %s sampler, not %s: put it in --sampler-config instead",
			set[0], plugins.StandardBuiltin, name))
	}
	st := p.standard(fs)
	if fs.Changed("samplers") {
		names, err := sampling.ParseSamplers([]byte(p.samplers))
		if err != nil {
			return nil, usage(fmt.Errorf("--samplers %q: names separated by ';'", p.samplers))
		}
		st.Samplers = names
	}
	flagsCfg := st.Config()
	if p.mirostat2(fs) {
		// As in llama.cpp the other flags do not apply; their values are
		// still checked over the standard sampler's ranges.
		m := plugins.MirostatV2Of(st)
		st.Mirostat = nil
		if err := st.Check(nVocab); err != nil {
			return nil, rangeUsage(fs, samplingFlags, err)
		}
		if err := m.Check(); err != nil {
			return nil, rangeUsage(fs, samplingFlags, err)
		}
		flagsCfg = m.Config()
	} else if err := st.Check(nVocab); err != nil {
		return nil, rangeUsage(fs, samplingFlags, err)
	}
	return mergeConfig(cfg, flagsCfg, samplingFlags, "--sampler-config")
}

// rangeUsage is the usage error of a flag value out of range: the flag of
// a *sampling.RangeError's key (from flags) with its value and range, or
// the samplers entry of a *sampling.SamplerError.
func rangeUsage(fs *pflag.FlagSet, flags []struct{ flag, key string }, err error) error {
	var se *sampling.SamplerError
	if errors.As(err, &se) {
		return usage(fmt.Errorf("--samplers: %q %s", se.Name, se.Why))
	}
	var re *sampling.RangeError
	if errors.As(err, &re) {
		for _, f := range flags {
			if f.key == re.Key {
				return usage(fmt.Errorf("--%s %s: must be %s", f.flag, fs.Lookup(f.flag).Value, re.Want))
			}
		}
	}
	return usage(err)
}

// mergeConfig merges the keys of flagsCfg (from the flags) into cfg (the
// config argument named arg); a key both set is a usage error naming the
// flag.
func mergeConfig(cfg, flagsCfg []byte, flags []struct{ flag, key string }, arg string) ([]byte, error) {
	obj := map[string]json.RawMessage{}
	if len(cfg) > 0 {
		if err := json.Unmarshal(cfg, &obj); err != nil {
			return nil, usage(fmt.Errorf("%s: %w", arg, err))
		}
	}
	var set map[string]json.RawMessage
	_ = json.Unmarshal(flagsCfg, &set) // a Config is a JSON object
	for _, f := range flags {
		if v, ok := set[f.key]; ok {
			if _, dup := obj[f.key]; dup {
				return nil, usage(fmt.Errorf("--%s and %s both set %q", f.flag, arg, f.key))
			}
			obj[f.key] = v
		}
	}
	return json.Marshal(obj)
}

// dryConfig is the dry processor's config for the DRY flags the user set,
// or nil when DRY is off: --dry-multiplier 0 (llama.cpp's default) or
// --dry-penalty-last-n 0, --samplers without dry, or --mirostat 1 or 2
// (llama.cpp runs no DRY then). A value out of range is a usage error
// naming the flag, also when DRY is off.
func (p *policyFlags) dryConfig(fs *pflag.FlagSet) ([]byte, error) {
	var d plugins.DRY
	for _, sp := range sampling.Of(sampling.DRY) {
		if sp.Number() && fs.Changed(sp.Flag) {
			d.SetNumber(sp.Key, p.number(sp.Key))
		}
	}
	if fs.Changed("dry-sequence-breaker") {
		d.SequenceBreakers = []string{}
		for _, b := range p.breakers {
			if b != "none" { // llama.cpp's --dry-sequence-breaker none: no breakers
				d.SequenceBreakers = append(d.SequenceBreakers, b)
			}
		}
	}
	if err := d.Check(); err != nil {
		var re *sampling.RangeError
		if errors.As(err, &re) && re.Key == "dry_sequence_breakers" {
			return nil, usage(fmt.Errorf("--dry-sequence-breaker: must be %s, not %s", re.Want, re.Got))
		}
		return nil, rangeUsage(fs, paramFlags(sampling.DRY), err)
	}
	var names []string // the default order, or --samplers (whose errors are reported with the sampler's config)
	if fs.Changed("samplers") {
		names, _ = sampling.ParseSamplers([]byte(p.samplers))
	}
	if !d.Runs(*p.integers["mirostat"], names) {
		return nil, nil
	}
	return d.Config(), nil
}

// standard is the standard sampler's config of the sampling flags the
// user set.
func (p *policyFlags) standard(fs *pflag.FlagSet) plugins.Standard {
	var st plugins.Standard
	for _, sp := range sampling.Of(sampling.Standard) {
		if sp.Number() && fs.Changed(sp.Flag) {
			st.SetNumber(sp.Key, p.number(sp.Key))
		}
	}
	return st
}

// stopConfigJSON names the stop policy and its config: --stop and
// --stop-config, or the embedded strings policy for --stop-string. With
// both a --stop other than strings and --stop-string, stringsCfg is the
// strings policy's config, chained after the --stop policy (policies.stopPolicy).
func (p *policyFlags) stopConfigJSON() (name string, cfg, stringsCfg []byte, err error) {
	cfg, err = configArg(p.stopConfig, "--stop-config")
	if err != nil {
		return "", nil, nil, err
	}
	name = p.stop
	if len(p.stopStrings) == 0 {
		if name == "" && len(cfg) > 0 {
			return "", nil, nil, usage(errors.New("--stop-config without --stop"))
		}
		return name, cfg, nil, nil
	}
	stops := plugins.StopStrings{Stop: p.stopStrings}
	if err := stops.Check(); err != nil {
		return "", nil, nil, usage(fmt.Errorf("--stop-string: %w", err))
	}
	if name != "" && name != plugins.StringsBuiltin {
		return name, cfg, stops.Config(), nil
	}
	if len(cfg) > 0 {
		return "", nil, nil, usage(errors.New("--stop-string and --stop-config both configure the stop strings"))
	}
	return plugins.StringsBuiltin, stops.Config(), nil, nil
}

// configArg reads a config argument: a JSON object, or @FILE holding one.
// The empty string is no config.
func configArg(arg, flag string) ([]byte, error) {
	if arg == "" {
		return nil, nil
	}
	in := input{text: []byte(arg)}
	if path, ok := strings.CutPrefix(arg, "@"); ok {
		var err error
		if in, err = readInput(flag, path); err != nil {
			return nil, err
		}
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(in.text, &obj); err != nil || obj == nil {
		return nil, in.refuse(fmt.Errorf("%s: not a JSON object", flag))
	}
	return bytes.TrimSpace(in.text), nil
}

// loadPolicy loads part.Ref as a plugin of kind: an embedded name (under
// at least the limits it needs, chain.MinLimits), a manifest (.json) or a
// module file. part.Config goes to an embedded policy or a module file; a
// manifest carries its own config. part.Param is the flag errors name.
func loadPolicy(ctx context.Context, h *host.Host, part chain.Part, kind abi.Kind) (*host.Plugin, error) {
	spec, cfg, flag := part.Ref, part.Config, part.Param
	var pl *host.Plugin
	var err error
	opts := host.LoadOptions{Kind: kind, Config: cfg}
	wasm, builtin := builtinModule(spec)
	switch {
	case builtin:
		opts.Limits = chain.AtLeast(chain.MinLimits(spec), part.MinLimits)
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
		// Exit status 4 as for a .wasm file that is not there: a policy that does not load.
		return nil, badPlugin(fmt.Errorf("%s %q: not an embedded %s (%s), a .wasm file or a .json manifest",
			flag, spec, kind, strings.Join(builtinNamesOf(kind.String()), ", ")))
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

// grammarSource is a --grammar argument's GBNF: text holding a rule
// ("::=") is the grammar itself, anything else a file, read (readInput's
// error when it cannot be). run, chat and grammar check read --grammar so.
func grammarSource(arg string) (input, error) {
	if strings.Contains(arg, "::=") {
		return input{text: []byte(arg)}, nil
	}
	return readInput("--grammar", arg)
}

// schemaSource is a --json-schema argument's JSON Schema: text that starts
// with "{" (or is true) is the schema itself, anything else a file, read
// (readInput's error when it cannot be). run, chat and grammar check read
// --json-schema so.
func schemaSource(arg string) (input, error) {
	if t := strings.TrimSpace(arg); strings.HasPrefix(t, "{") || t == "true" {
		return input{text: []byte(arg)}, nil
	}
	return readInput("--json-schema", arg)
}

// compileSchema compiles --json-schema's schema, one the engine cannot
// enforce refused by input.refuse's rule, naming the flag (and the file).
// Its warnings are the schema's grammar.Warning.
func compileSchema(in input) (*grammar.Grammar, []grammar.Warning, error) {
	src, ws, err := grammar.FromJSONSchemaWarnings(in.text)
	if err == nil {
		var g *grammar.Grammar
		if g, err = grammar.Compile(src); err == nil {
			return g, ws, nil
		}
	}
	return nil, nil, in.refuse(fmt.Errorf("--json-schema%s: %w", where(in), err))
}

// compileGBNF compiles --grammar's GBNF, one that does not parse refused
// by input.refuse's rule, naming the flag (and the file).
func compileGBNF(in input) (*grammar.Grammar, error) {
	g, err := grammar.Compile(string(in.text))
	if err != nil {
		return nil, in.refuse(fmt.Errorf("--grammar%s: %w", where(in), err))
	}
	return g, nil
}

// where is " FILE" for an input read from FILE, "" for inline text.
func where(in input) string {
	if in.file == "" {
		return ""
	}
	return " " + in.file
}

// grammarConfig is the grammar processor's config for --json-schema or
// --grammar (nil for neither). The schema or grammar is compiled here
// first, so one the engine cannot enforce is an error naming the keyword
// or the line and column (a usage error inline, a bad input file in a
// file: input.refuse), not a plugin failure. maxTokens is the
// turn's budget, within which the processor closes the grammar.
func (p *policyFlags) grammarConfig(maxTokens int) ([]byte, error) {
	p.shortest = -1
	switch {
	case p.jsonSchema != "" && p.grammarFile != "":
		return nil, usage(errors.New("--json-schema and --grammar exclude each other"))
	case p.jsonSchema != "" && p.format == formatJSON:
		return nil, usage(errors.New("--json-schema and --format json exclude each other (a schema already makes the answer JSON)"))
	case p.jsonSchema != "":
		in, err := schemaSource(p.jsonSchema)
		if err != nil {
			return nil, err
		}
		g, ws, err := compileSchema(in)
		if err != nil {
			return nil, err
		}
		p.shortest, p.schemaWarnings = g.Shortest(), ws
		var buf bytes.Buffer
		if err := json.Compact(&buf, in.text); err != nil {
			return nil, in.refuse(fmt.Errorf("--json-schema%s: %w", where(in), err))
		}
		return plugins.Grammar{JSONSchema: buf.Bytes(), MaxTokens: maxTokens}.Config(), nil
	case p.grammarFile != "":
		in, err := grammarSource(p.grammarFile)
		if err != nil {
			return nil, err
		}
		g, err := compileGBNF(in)
		if err != nil {
			return nil, err
		}
		p.shortest = g.Shortest()
		return plugins.Grammar{GBNF: string(in.text), MaxTokens: maxTokens}.Config(), nil
	}
	return nil, nil
}

// warnings are the one-line warnings, for stderr, of --json-schema's
// keywords accepted without being enforced (grammar.Warning) and of
// budgetWarning.
func (p *policyFlags) warnings(maxTokens int) []string {
	out := schemaWarningLines("--json-schema", p.schemaWarnings)
	if w := p.budgetWarning(maxTokens); w != "" {
		out = append(out, w)
	}
	return out
}

// budgetWarning is the one-line warning, "" for none, that the grammar of
// --json-schema or --grammar (grammarConfig) cannot close within
// maxTokens: its shortest completion and end of generation do not fit, so
// the output will be cut (the processor's own warning is in --plugin-log).
func (p *policyFlags) budgetWarning(maxTokens int) string {
	if p.shortest < 0 || maxTokens <= 0 || p.shortest+1 <= maxTokens {
		return ""
	}
	what := "the schema's"
	if p.jsonSchema == "" {
		what = "the grammar's"
	}
	return fmt.Sprintf("warning: %s shortest completion (%d tokens) and end of generation do not fit --max-tokens %d; the output will be cut",
		what, p.shortest, maxTokens)
}
