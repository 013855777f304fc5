package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/realizar-host/realizar-host/engine"
	"github.com/realizar-host/realizar-host/host"
	"github.com/realizar-host/realizar-host/internal/draft"
	"github.com/realizar-host/realizar-host/internal/plugins/sampling"
	"github.com/realizar-host/realizar-host/internal/turnfields"
	"github.com/realizar-host/realizar-host/tokenizer"
)

// seedParam is the seed's row of sampling.Params: run and chat's --seed.
var seedParam, _ = sampling.Lookup("seed")

// turnFlags are the per-turn settings run and chat share.
type turnFlags struct {
	maxTokens int
	seed      uint64
	// fields are the flags of turnfields.Fields (--ignore-eos), by key.
	fields   map[string]*bool
	special  bool
	logprobs int
	// Speculative decoding's draft sources (at most one).
	prediction string       // --prediction FILE
	lookup     bool         // --lookup
	draftModel string       // --draft-model FILE
	draftMax   int          // --draft-max
	plugin     drafterFlags // --drafter PLUGIN, --drafter-config JSON (drafter.go)
}

func (f *turnFlags) register(cmd *cobra.Command) {
	cmd.Flags().IntVarP(&f.maxTokens, "max-tokens", "n", 256, "most tokens to generate per turn")
	cmd.Flags().Uint64Var(&f.seed, seedParam.Flag, 0, seedParam.Usage)
	f.fields = map[string]*bool{}
	for _, tf := range turnfields.Fields {
		if tf.Flag != "" {
			f.fields[tf.Key] = cmd.Flags().Bool(tf.Flag, tf.Default, tf.Usage)
		}
	}
	cmd.Flags().BoolVar(&f.special, "special", false, "print control tokens (<s>, <|start_header_id|>) as their text, as llama-cli --special does; by default they print as nothing")
	cmd.Flags().StringVar(&f.prediction, "prediction", "", "speculative decoding: FILE holds the expected answer (OpenAI's predicted outputs); its tokens are drafted and verified, so the text is the same, sooner where it agrees")
	cmd.Flags().BoolVar(&f.lookup, "lookup", false, "speculative decoding: draft what followed the latest earlier occurrence of the last few tokens in the prompt and output (prompt lookup); the text is the same")
	registerDraftModel(cmd, &f.draftModel)
	cmd.Flags().IntVar(&f.draftMax, "draft-max", 0, fmt.Sprintf("longest draft in tokens with --prediction, --lookup, --draft-model or --drafter, at most %d (default: the source's, %d with --prediction, %d with --lookup, %d with --draft-model)", draft.MaxDraft, draft.DefaultPredictionDraft, draft.DefaultLookupDraft, draft.DefaultMaxDraft))
	f.plugin.register(cmd)
}

// checkDraft checks the draft flags before the model loads: one source at
// most, --draft-max in [0, draft.MaxDraft] (serve's range; 0 is the
// source's default) and only with a source.
func (f *turnFlags) checkDraft(cmd *cobra.Command) error {
	sources := 0
	for _, on := range []bool{f.prediction != "", f.lookup, f.draftModel != ""} {
		if on {
			sources++
		}
	}
	switch {
	case sources > 1:
		return usage(errors.New("--prediction, --lookup and --draft-model: give one draft source"))
	case f.draftMax < 0 || f.draftMax > draft.MaxDraft:
		return usage(fmt.Errorf("--draft-max %d: must be in [0, %d]", f.draftMax, draft.MaxDraft))
	case cmd.Flags().Changed("draft-max") && sources == 0 && f.plugin.spec == "":
		return usage(errors.New("--draft-max needs a draft source: --prediction FILE, --lookup, --draft-model FILE or --drafter PLUGIN"))
	}
	return f.plugin.check(sources > 0)
}

// drafter returns the maker of each turn's Drafter (nil without a draft
// source), reading --prediction's file (tokenized without BOS). The flags
// are checkDraft's, checked before the model loaded.
func (f *turnFlags) drafter(tok *tokenizer.Tokenizer) (func() engine.Drafter, error) {
	switch {
	case f.lookup:
		return func() engine.Drafter { return draft.NewLookup(draft.LookupOptions{MaxDraft: f.draftMax}) }, nil
	case f.prediction == "":
		return nil, nil
	}
	in, err := readInput("--prediction", f.prediction)
	if err != nil {
		return nil, err
	}
	pred := tok.Encode(string(in.text), tokenizer.EncodeOptions{})
	return func() engine.Drafter {
		return draft.NewPrediction(pred, draft.PredictionOptions{MaxDraft: f.draftMax})
	}, nil
}

// config is the GenerateConfig of a turn without its callbacks.
func (f *turnFlags) config(cmd *cobra.Command) (engine.GenerateConfig, error) {
	if f.maxTokens <= 0 {
		return engine.GenerateConfig{}, usage(fmt.Errorf("--max-tokens %d: must be > 0", f.maxTokens))
	}
	cfg := f.fieldsConfig()
	cfg.MaxTokens = f.maxTokens
	if cmd.Flags().Changed(seedParam.Flag) {
		seed := f.seed
		cfg.Seed = &seed
	}
	return cfg, nil
}

// fieldsConfig is the GenerateConfig that the flags of turnfields.Fields
// give (a field without a flag, or a flag not given: its default).
func (f *turnFlags) fieldsConfig() engine.GenerateConfig {
	var cfg engine.GenerateConfig
	turnfields.Apply(&cfg, func(tf turnfields.Field) *bool { return f.fields[tf.Key] })
	return cfg
}

// generator is a loaded model with its policies and one Session: what run
// and chat drive.
type generator struct {
	model *loaded
	host  *host.Host
	pol   *policies
	sess  *engine.Session
	// text renders the generated tokens: control tokens as nothing unless
	// --special (llama-cli's -sp).
	text *tokenizer.Renderer
	// newDraft makes each turn's draft source; nil without one.
	newDraft func() engine.Drafter
	// plugin is --drafter's plugin, kept across turns (drafter.go).
	plugin *pluginDrafter
	// draft is --draft-model's model; nil without it.
	draft *draftLoaded
}

// newGenerator loads the model and the policies.
func newGenerator(ctx context.Context, cmd *cobra.Command, mf *modelFlags, pf *policyFlags, tf *turnFlags) (*generator, error) {
	if err := mf.resolve(); err != nil {
		return nil, err
	}
	if err := pf.checkFormat(tf.fieldsConfig().IgnoreEOG); err != nil {
		return nil, err
	}
	// Policy flags are checked before the (slow) model load (no sampling
	// flag names a token id, so any vocabulary size checks them alike).
	if _, err := pf.samplerConfigJSON(cmd.Flags(), 1); err != nil {
		return nil, err
	}
	if _, err := pf.dryConfig(cmd.Flags()); err != nil {
		return nil, err
	}
	if _, _, _, err := pf.stopConfigJSON(); err != nil {
		return nil, err
	}
	if err := tf.checkDraft(cmd); err != nil {
		return nil, err
	}
	m, err := loadModel(mf, cmd.ErrOrStderr())
	if err != nil {
		return nil, err
	}
	g := &generator{model: m, text: m.tok.Renderer(tokenizer.RenderOptions{Special: tf.special})}
	if g.newDraft, err = tf.drafter(m.tok); err != nil {
		g.Close(ctx)
		return nil, err
	}
	if tf.draftModel != "" {
		if g.draft, err = loadDraftModel(tf.draftModel, mf, m.tok, cmd.ErrOrStderr()); err != nil {
			g.Close(ctx)
			return nil, err
		}
		// One drafter for the session: its KV cache follows the
		// conversation as the target's does.
		d := g.draft.drafter(tf.draftMax, engine.FromContext(ctx))
		g.newDraft = func() engine.Drafter { return d }
	}
	if g.host, err = host.New(ctx, cliHostConfig()); err != nil {
		g.Close(ctx)
		return nil, failure(err)
	}
	if err = g.loadDrafter(ctx, cmd, tf); err != nil {
		g.Close(ctx)
		return nil, err
	}
	if g.pol, err = pf.load(ctx, cmd.Flags(), g.host, m.tok, tf.maxTokens); err != nil {
		g.Close(ctx)
		return nil, err
	}
	for _, w := range pf.warnings(tf.maxTokens) {
		fmt.Fprintln(cmd.ErrOrStderr(), w)
	}
	opts := []engine.Option{engine.WithSampler(g.pol.Sampler)}
	if stop := g.pol.StopPolicy(); stop != nil {
		opts = append(opts, engine.WithStopPolicy(stop))
	}
	if g.sess, err = engine.NewSession(m.fwd, g.text, opts...); err != nil {
		g.Close(ctx)
		return nil, failure(err)
	}
	return g, nil
}

// Close releases everything, in reverse order of creation.
func (g *generator) Close(ctx context.Context) {
	if g.plugin != nil {
		_ = g.plugin.d.Close()
	}
	if g.pol != nil {
		g.pol.Close()
	}
	if g.host != nil {
		_ = g.host.Close(ctx)
	}
	g.draft.Close()
	g.model.Close()
}

// generate runs one turn on prompt, streaming its text to out (flushed
// after each token) unless out is nil.
func (g *generator) generate(ctx context.Context, prompt []int32, cfg engine.GenerateConfig, out io.Writer) (engine.Turn, error) {
	cfg.Cancel = engine.FromContext(ctx)
	if g.newDraft != nil {
		cfg.Draft = g.newDraft()
	}
	if out != nil {
		w := bufio.NewWriter(out)
		cfg.OnToken = func(_ int32, text []byte) error {
			if len(text) == 0 {
				return nil
			}
			if _, err := w.Write(text); err != nil {
				return err
			}
			return w.Flush()
		}
	}
	turn, err := g.sess.Generate(prompt, cfg)
	g.plugin.report()
	return turn, err
}

// encodePrompt tokenizes a prompt as llama.cpp's tools do
// (llama_tokenize with add_special and parse_special): with the
// vocabulary's BOS, and with control tokens in the text matched as such —
// so a text that itself starts with the BOS text gets two BOS ids, as in
// llama.cpp. A chat prompt from Tokenizer.ApplyChat has its rendered BOS
// removed already.
func encodePrompt(tok *tokenizer.Tokenizer, text string) []int32 {
	return tok.Encode(text, tokenizer.EncodeOptions{AddSpecial: true, ParseSpecial: true})
}
