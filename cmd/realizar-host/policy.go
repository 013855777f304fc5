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
	"github.com/realizar-host/realizar-host/engine"
	"github.com/realizar-host/realizar-host/grammar"
	"github.com/realizar-host/realizar-host/host"
	"github.com/realizar-host/realizar-host/plugins"
	"github.com/realizar-host/realizar-host/plugins/sampler/standard"
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

	// Sugar for the standard sampler's config, in its (OpenAI and
	// llama.cpp) field names; only flags the user set are passed on.
	sampling struct {
		temperature, topP, minP, typicalP                float64
		repeatPenalty, presencePenalty, frequencyPenalty float64
		topNSigma, xtcProbability, xtcThreshold          float64
		dynatempRange, dynatempExponent                  float64
		mirostatTau, mirostatEta                         float64
		topK, repeatLastN, mirostat                      int
		samplers                                         string
	}
	// llama.cpp's DRY flags: the embedded dry processor (plugins.DRY).
	dry struct {
		multiplier, base          float64
		allowedLength, penaltyLen int
		breakers                  []string
	}
}

// samplingFlags maps each sampling flag to its config key.
var samplingFlags = []struct{ flag, key string }{
	{"temperature", "temperature"},
	{"top-k", "top_k"},
	{"top-p", "top_p"},
	{"min-p", "min_p"},
	{"typical-p", "typical_p"},
	{"repeat-penalty", "repeat_penalty"},
	{"repeat-last-n", "repeat_last_n"},
	{"presence-penalty", "presence_penalty"},
	{"frequency-penalty", "frequency_penalty"},
	{"top-n-sigma", "top_n_sigma"},
	{"xtc-probability", "xtc_probability"},
	{"xtc-threshold", "xtc_threshold"},
	{"dynatemp-range", "dynatemp_range"},
	{"dynatemp-exp", "dynatemp_exponent"},
	{"samplers", "samplers"},
	{"mirostat", "mirostat"},
	{"mirostat-ent", "mirostat_tau"},
	{"mirostat-lr", "mirostat_eta"},
}

// dryFlags maps each DRY flag to the dry processor's config key.
var dryFlags = []struct{ flag, key string }{
	{"dry-multiplier", "dry_multiplier"},
	{"dry-base", "dry_base"},
	{"dry-allowed-length", "dry_allowed_length"},
	{"dry-penalty-last-n", "dry_penalty_last_n"},
	{"dry-sequence-breaker", "dry_sequence_breakers"},
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
	s, d := &p.sampling, standard.DefaultConfig()
	fs.Float64Var(&s.temperature, "temperature", d.Temperature, "standard sampler: temperature (0 is greedy)")
	fs.IntVar(&s.topK, "top-k", d.TopK, "standard sampler: keep the K most likely tokens (0: all)")
	fs.Float64Var(&s.topP, "top-p", d.TopP, "standard sampler: nucleus probability mass (1: off)")
	fs.Float64Var(&s.minP, "min-p", d.MinP, "standard sampler: drop tokens below min-p × the top probability (0: off)")
	fs.Float64Var(&s.typicalP, "typical-p", d.TypicalP, "standard sampler: locally typical sampling mass (1: off)")
	fs.Float64Var(&s.repeatPenalty, "repeat-penalty", float64(d.RepeatPenalty), "standard sampler: repetition penalty (1: off)")
	fs.IntVar(&s.repeatLastN, "repeat-last-n", d.RepeatLastN, "standard sampler: tokens the penalties look back over (-1: all)")
	fs.Float64Var(&s.presencePenalty, "presence-penalty", float64(d.PresencePenalty), "standard sampler: presence penalty, in [-2, 2]")
	fs.Float64Var(&s.frequencyPenalty, "frequency-penalty", float64(d.FrequencyPenalty), "standard sampler: frequency penalty, in [-2, 2]")
	fs.Float64Var(&s.topNSigma, "top-n-sigma", d.TopNSigma, "standard sampler: keep tokens within N standard deviations of the top logit (0: off)")
	fs.Float64Var(&s.xtcProbability, "xtc-probability", d.XTCProbability, "standard sampler: chance of XTC, removing the top choices at a step (0: off)")
	fs.Float64Var(&s.xtcThreshold, "xtc-threshold", d.XTCThreshold, "standard sampler: XTC's probability threshold, in [0, 0.5]")
	fs.Float64Var(&s.dynatempRange, "dynatemp-range", d.DynatempRange, "standard sampler: dynamic temperature, temperature ± range by entropy (0: off)")
	fs.Float64Var(&s.dynatempExponent, "dynatemp-exp", d.DynatempExponent, "standard sampler: dynamic temperature's exponent")
	fs.StringVar(&s.samplers, "samplers", strings.Join(standard.DefaultSamplers, ";"),
		"standard sampler: the chain's order, llama.cpp's stage names separated by ';' (a stage not listed does not run)")
	fs.IntVar(&s.mirostat, "mirostat", d.Mirostat, "Mirostat: 1 in the standard sampler, 2 the "+plugins.MirostatV2Builtin+
		" sampler; top-k, top-p, the other filters and the penalties are then off, as in llama.cpp (0: off)")
	fs.Float64Var(&s.mirostatTau, "mirostat-ent", d.MirostatTau, "Mirostat's target entropy tau, in bits")
	fs.Float64Var(&s.mirostatEta, "mirostat-lr", d.MirostatEta, "Mirostat's learning rate eta")
	y := &p.dry
	fs.Float64Var(&y.multiplier, "dry-multiplier", 0, "DRY repetition penalty multiplier: the embedded dry processor before the sampler (0: off)")
	fs.Float64Var(&y.base, "dry-base", 1.75, "DRY's base, >= 1")
	fs.IntVar(&y.allowedLength, "dry-allowed-length", 2, "DRY: repeats longer than this are penalized")
	fs.IntVar(&y.penaltyLen, "dry-penalty-last-n", 64, "DRY: the tokens scanned for repeats (-1: all, 0: off)")
	fs.StringArrayVar(&y.breakers, "dry-sequence-breaker", nil, "DRY: a string that ends a repeat, replacing the defaults (\\n : \" *); repeatable; \"none\" for none")
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
	stop    []*host.StopPolicy // none, one, or --stop's then --stop-string's strings
	names   []string           // plugin labels, chain order then the stop policies
	// samplerName and stopName are what the stats line shows.
	samplerName, stopName string
}

// Close releases the plugin instances.
func (p *policies) Close() {
	if p.sampler != nil {
		_ = p.sampler.Close()
	}
	for _, s := range p.stop {
		_ = s.Close()
	}
}

// stopPolicy is the Session's stop policy: nil, the one, or a chain
// (engine.StopChain) of --stop's plugin then --stop-string's strings.
func (p *policies) stopPolicy() engine.StopPolicy {
	switch len(p.stop) {
	case 0:
		return nil
	case 1:
		return p.stop[0]
	}
	c := make(engine.StopChain, len(p.stop))
	for i, s := range p.stop {
		c[i] = s
	}
	return c
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
	for i, s := range p.stop {
		write(p.names[len(p.names)-len(p.stop)+i], s.Log())
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
	var procs []*host.Plugin
	for _, spec := range p.processors {
		pl, err := loadPolicy(ctx, h, spec, abi.KindProcessor, nil, "--processor")
		if err != nil {
			return nil, err
		}
		procs = append(procs, pl)
		out.names = append(out.names, pl.String())
	}
	if dryCfg != nil {
		pl, err := loadPolicy(ctx, h, plugins.DRYBuiltin, abi.KindProcessor, dryCfg, "--dry-multiplier")
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
	if cfg, flag, err := p.grammarConfig(maxTokens); err != nil {
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
	type stopSpec struct {
		name, flag string
		cfg        []byte
	}
	var stops []stopSpec
	if stopName != "" {
		stops = append(stops, stopSpec{stopName, "--stop", stopCfg})
	}
	if stringsCfg != nil {
		stops = append(stops, stopSpec{plugins.StringsBuiltin, "--stop-string", stringsCfg})
	}
	for _, sp := range stops {
		pl, err := loadPolicy(ctx, h, sp.name, abi.KindStop, sp.cfg, sp.flag)
		if err != nil {
			out.Close()
			return nil, err
		}
		out.names = append(out.names, pl.String())
		st, err := host.NewStopPolicy(vocab, pl)
		if err != nil {
			out.Close()
			return nil, badPlugin(err)
		}
		out.stop = append(out.stop, st)
	}
	return out, nil
}

// mirostat2 reports whether --mirostat 2 chose the mirostat-v2 sampler.
func (p *policyFlags) mirostat2(fs *pflag.FlagSet) bool {
	return fs.Changed("mirostat") && p.sampling.mirostat == 2
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
	for _, f := range samplingFlags {
		if fs.Changed(f.flag) {
			set = append(set, f.flag)
		}
	}
	if len(set) == 0 {
		return cfg, nil
	}
	if m := p.sampling.mirostat; fs.Changed("mirostat") && (m < 0 || m > 2) {
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
		names, err := standard.ParseSamplers([]byte(p.sampling.samplers))
		if err != nil {
			return nil, usage(fmt.Errorf("--samplers %q: names separated by ';'", p.sampling.samplers))
		}
		st.Samplers = names
	}
	flagsCfg := st.Config()
	if p.mirostat2(fs) {
		// As in llama.cpp the other flags do not apply; their values are
		// still checked over the standard sampler's ranges.
		m := plugins.MirostatV2{Temperature: st.Temperature, Tau: st.MirostatTau, Eta: st.MirostatEta}
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
// a *standard.RangeError's key (from flags) with its value and range, or
// the samplers entry of a *standard.SamplerError.
func rangeUsage(fs *pflag.FlagSet, flags []struct{ flag, key string }, err error) error {
	var se *standard.SamplerError
	if errors.As(err, &se) {
		return usage(fmt.Errorf("--samplers: %q %s", se.Name, se.Why))
	}
	var re *standard.RangeError
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
	y := &p.dry
	var d plugins.DRY
	if fs.Changed("dry-multiplier") {
		d.Multiplier = &y.multiplier
	}
	if fs.Changed("dry-base") {
		d.Base = &y.base
	}
	if fs.Changed("dry-allowed-length") {
		d.AllowedLength = &y.allowedLength
	}
	if fs.Changed("dry-penalty-last-n") {
		d.PenaltyLastN = &y.penaltyLen
	}
	if fs.Changed("dry-sequence-breaker") {
		d.SequenceBreakers = []string{}
		for _, b := range y.breakers {
			if b != "none" { // llama.cpp's --dry-sequence-breaker none: no breakers
				d.SequenceBreakers = append(d.SequenceBreakers, b)
			}
		}
	}
	if err := d.Check(); err != nil {
		var re *standard.RangeError
		if errors.As(err, &re) && re.Key == "dry_sequence_breakers" {
			return nil, usage(fmt.Errorf("--dry-sequence-breaker: must be %s, not %s", re.Want, re.Got))
		}
		return nil, rangeUsage(fs, dryFlags, err)
	}
	if !d.On() || (fs.Changed("mirostat") && p.sampling.mirostat != 0) {
		return nil, nil
	}
	if fs.Changed("samplers") {
		names, err := standard.ParseSamplers([]byte(p.sampling.samplers))
		if err == nil && !standard.ListsDRY(names) {
			return nil, nil
		}
	}
	return d.Config(), nil
}

// standard is the standard sampler's config of the sampling flags the
// user set.
func (p *policyFlags) standard(fs *pflag.FlagSet) plugins.Standard {
	s := &p.sampling
	var st plugins.Standard
	for _, f := range []struct {
		flag string
		dst  **float64
		v    *float64
	}{
		{"temperature", &st.Temperature, &s.temperature}, {"top-p", &st.TopP, &s.topP}, {"min-p", &st.MinP, &s.minP},
		{"typical-p", &st.TypicalP, &s.typicalP}, {"repeat-penalty", &st.RepeatPenalty, &s.repeatPenalty},
		{"presence-penalty", &st.PresencePenalty, &s.presencePenalty},
		{"frequency-penalty", &st.FrequencyPenalty, &s.frequencyPenalty},
		{"top-n-sigma", &st.TopNSigma, &s.topNSigma}, {"xtc-probability", &st.XTCProbability, &s.xtcProbability},
		{"xtc-threshold", &st.XTCThreshold, &s.xtcThreshold}, {"dynatemp-range", &st.DynatempRange, &s.dynatempRange},
		{"dynatemp-exp", &st.DynatempExponent, &s.dynatempExponent},
		{"mirostat-ent", &st.MirostatTau, &s.mirostatTau}, {"mirostat-lr", &st.MirostatEta, &s.mirostatEta},
	} {
		if fs.Changed(f.flag) {
			*f.dst = f.v
		}
	}
	if fs.Changed("top-k") {
		st.TopK = &s.topK
	}
	if fs.Changed("repeat-last-n") {
		st.RepeatLastN = &s.repeatLastN
	}
	if fs.Changed("mirostat") {
		st.Mirostat = &s.mirostat
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
		opts.Limits = builtinLimits(spec)
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

// grammarConfig is the grammar processor's config for --json-schema or
// --grammar (nil for neither). The schema or grammar is compiled here
// first, so one the engine cannot enforce is a usage error naming the
// keyword or the line and column, not a plugin failure. maxTokens is the
// turn's budget, within which the processor closes the grammar.
func (p *policyFlags) grammarConfig(maxTokens int) ([]byte, string, error) {
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
		return plugins.Grammar{JSONSchema: buf.Bytes(), MaxTokens: maxTokens}.Config(), "--json-schema", nil
	case p.grammarFile != "":
		// Text holding a rule ("::=") is the grammar itself; anything else a file.
		src, where := []byte(p.grammarFile), ""
		if !strings.Contains(p.grammarFile, "::=") {
			var err error
			if src, err = os.ReadFile(p.grammarFile); err != nil {
				return nil, "", usage(fmt.Errorf("--grammar: %w", err))
			}
			where = " " + p.grammarFile
		}
		if _, err := grammar.Compile(string(src)); err != nil {
			return nil, "", usage(fmt.Errorf("--grammar%s: %w", where, err))
		}
		return plugins.Grammar{GBNF: string(src), MaxTokens: maxTokens}.Config(), "--grammar", nil
	}
	return nil, "", nil
}
