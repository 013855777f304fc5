package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/abi/wasmfile"
	"github.com/realizar-host/realizar-host/engine"
	"github.com/realizar-host/realizar-host/forward"
	"github.com/realizar-host/realizar-host/host"
	"github.com/realizar-host/realizar-host/internal/plugins"
	"github.com/realizar-host/realizar-host/internal/plugins/chain"
)

func newPluginCmd() *cobra.Command {
	return groupCmd("plugin", "Work with sampler, processor and stop-policy plugins", newPluginCheckCmd())
}

// groupCmd is a command that only groups subs: run alone it prints its
// help.
func groupCmd(use, short string, subs ...*cobra.Command) *cobra.Command {
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(subs...)
	return cmd
}

// checkOptions are plugin check's flags.
type checkOptions struct {
	config string
	steps  int
	vocab  int
	asJSON bool
}

func newPluginCheckCmd() *cobra.Command {
	var o checkOptions
	cmd := &cobra.Command{
		Use:   "check NAME|FILE.wasm|MANIFEST.json [--config JSON|@FILE]",
		Short: "Validate a plugin as the host would and run it on synthetic input",
		Long: "Load the plugin (an embedded policy by name, such as standard, a FILE.wasm or a MANIFEST.json)\n" +
			"as run would (ABI version, kind, exports, imports, memory limit, config),\n" +
			"then run it for a few steps on random logits (a sampler or processor) or random pieces (a stop\n" +
			"policy) over a synthetic vocabulary, and print its metadata, sha256, memory and per-step time.\n" +
			"A plugin that fails exits with status 4.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			rep, err := checkPlugin(cmd, args[0], &o)
			if err != nil {
				return err
			}
			if o.asJSON {
				return encodeJSON(cmd, rep)
			}
			rep.writeText(cmd.OutOrStdout())
			return nil
		},
	}
	cmd.Flags().StringVar(&o.config, "config", "", "the plugin's config: a JSON object, or @FILE (not with a manifest)")
	cmd.Flags().IntVar(&o.steps, "steps", 64, "synthetic steps to run")
	cmd.Flags().IntVar(&o.vocab, "vocab", 32000, "size of the synthetic vocabulary")
	cmd.Flags().BoolVar(&o.asJSON, "json", false, "print the report as JSON")
	return cmd
}

// checkReport is what plugin check prints.
type checkReport struct {
	Path          string        `json:"path"`
	Meta          wasmfile.Meta `json:"meta"`
	SHA256        string        `json:"sha256"`
	ModuleBytes   int           `json:"module_bytes"`
	MemoryPages   uint32        `json:"memory_pages"`     // declared initial memory
	MemoryCap     uint32        `json:"memory_cap_pages"` // the instance's limit
	CallTimeoutMs int64         `json:"call_timeout_ms"`
	Vocab         int           `json:"vocab"`
	Steps         int           `json:"steps"`
	InitMicros    float64       `json:"init_us"` // instantiation, realizar_init and the first reset
	StepMicros    spread        `json:"step_us"`
	Stopped       int           `json:"stopped,omitempty"` // stop policy: steps at which it stopped
}

func checkPlugin(cmd *cobra.Command, path string, o *checkOptions) (*checkReport, error) {
	ctx := cmd.Context()
	if o.steps < 1 || o.vocab < 2 {
		return nil, usage(errors.New("--steps must be >= 1 and --vocab >= 2"))
	}
	cfg, err := configArg(o.config, "--config")
	if err != nil {
		return nil, err
	}
	isManifest := strings.HasSuffix(strings.ToLower(path), ".json")
	if isManifest && len(cfg) > 0 {
		return nil, usage(errors.New("--config: a manifest carries its own config"))
	}
	// An embedded policy by name, as run takes it (a file of that name
	// in the current directory is the file).
	wasm, builtin := builtinModule(path)
	_, statErr := os.Stat(path)
	if statErr == nil {
		builtin = false
	}
	if !builtin && !isManifest && !strings.HasSuffix(strings.ToLower(path), ".wasm") &&
		!strings.ContainsRune(path, os.PathSeparator) && errors.Is(statErr, fs.ErrNotExist) {
		// As run's flags say of a name they do not know (loadPolicy), with
		// every kind's embedded policies, since check takes any kind.
		var kinds []string
		for k := abi.Kind(1); ; k++ { // every kind abi declares
			if _, ok := abi.ParseKind(k.String()); !ok {
				break
			}
			if names := builtinNamesOf(k.String()); len(names) > 0 {
				kinds = append(kinds, k.String()+"s "+strings.Join(names, ", "))
			}
		}
		return nil, badPlugin(fmt.Errorf("plugin check %q: not an embedded policy (%s), a .wasm file or a .json manifest",
			path, strings.Join(kinds, "; ")))
	}
	if !builtin {
		wasmPath, err := modulePath(path, isManifest)
		if err != nil {
			return nil, badPlugin(err)
		}
		if wasm, err = os.ReadFile(wasmPath); err != nil {
			return nil, pluginLoadError("plugin check", wasmPath, err)
		}
	}
	h, err := host.New(ctx, cliHostConfig())
	if err != nil {
		return nil, failure(err)
	}
	defer h.Close(ctx)
	var p *host.Plugin
	switch {
	case builtin:
		p, err = h.Load(ctx, wasm, host.LoadOptions{Config: cfg, Limits: chain.MinLimits(path)})
	case isManifest:
		p, err = h.LoadManifest(ctx, path)
	default:
		p, err = h.LoadFile(ctx, path, host.LoadOptions{Config: cfg})
	}
	if err != nil {
		return nil, pluginLoadError("plugin check", path, err)
	}
	rep := &checkReport{Path: path, Meta: p.Meta(), SHA256: p.SHA256(), ModuleBytes: len(wasm),
		MemoryCap: p.Limits().MemoryPages, CallTimeoutMs: p.Limits().CallTimeout.Milliseconds(),
		Vocab: o.vocab, Steps: o.steps}
	if mod, err := wasmfile.Parse(wasm); err == nil && len(mod.Memories) == 1 {
		rep.MemoryPages = mod.Memories[0].Min
	}
	if err := exercise(ctx, h, p, rep); err != nil {
		if export := failedExport(p.Kind(), err); export != "" {
			return nil, badPlugin(fmt.Errorf("%s failed: %s", export, errorText(err)))
		}
		return nil, badPlugin(errors.New(errorText(err)))
	}
	return rep, nil
}

// failedExport names the export whose call err reports (a
// *host.PluginError's phase), or "" when err names none.
func failedExport(kind abi.Kind, err error) string {
	var pe *host.PluginError
	if !errors.As(err, &pe) {
		return ""
	}
	switch pe.Phase {
	case "init":
		return "realizar_init"
	case "reset":
		return "realizar_reset"
	case "check":
		return "realizar_check"
	case "step":
		if kind == abi.KindProcessor {
			return "realizar_process"
		}
		return "realizar_sample"
	}
	return ""
}

// modulePath is the module file of path: path itself, or the one its
// manifest names.
func modulePath(path string, isManifest bool) (string, error) {
	if !isManifest {
		return path, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	m, err := host.ParseManifest(b)
	if err != nil {
		return "", fmt.Errorf("%s: %s", path, strings.TrimPrefix(err.Error(), "host: "))
	}
	if m.Path == "" {
		return "", fmt.Errorf("%s: the manifest names no module path, only a sha256", path)
	}
	if filepath.IsAbs(m.Path) {
		return m.Path, nil
	}
	return filepath.Join(filepath.Dir(path), m.Path), nil
}

// exercise runs p for rep.Steps steps over a synthetic vocabulary.
func exercise(ctx context.Context, h *host.Host, p *host.Plugin, rep *checkReport) error {
	vocab := synthVocab(rep.Vocab)
	rng := rand.New(rand.NewPCG(1, 2))
	prompt := []int32{1, 2, 3}
	var steps []float64
	timed := func(fn func() error) error {
		start := time.Now()
		err := fn()
		steps = append(steps, float64(time.Since(start).Nanoseconds())/1e3)
		return err
	}
	switch p.Kind() {
	case abi.KindSampler, abi.KindProcessor:
		chain, err := samplerChain(ctx, h, vocab, p)
		if err != nil {
			return err
		}
		defer chain.Close()
		start := time.Now()
		if err := chain.Reset(42, prompt); err != nil {
			return err
		}
		rep.InitMicros = float64(time.Since(start).Nanoseconds()) / 1e3
		logits := make([]float32, rep.Vocab)
		for range rep.Steps {
			for i := range logits {
				logits[i] = float32(rng.NormFloat64() * 3)
			}
			err := timed(func() error {
				id, err := chain.Sample(logits)
				if err == nil && (id < 0 || int(id) >= rep.Vocab) {
					err = fmt.Errorf("sampled id %d: %w", id, forward.ErrBadToken)
				}
				if err == nil {
					chain.Accept(id)
				}
				return err
			})
			if err != nil {
				return err
			}
		}
	case abi.KindStop:
		stop, err := host.NewStopPolicy(vocab, p)
		if err != nil {
			return err
		}
		defer stop.Close()
		start := time.Now()
		if err := stop.Reset(); err != nil {
			return err
		}
		rep.InitMicros = float64(time.Since(start).Nanoseconds()) / 1e3
		for range rep.Steps {
			id := int32(rng.IntN(rep.Vocab))
			var d engine.Decision
			err := timed(func() (err error) {
				d, err = stop.Check(id, vocab.Piece(id))
				return err
			})
			if err != nil {
				return err
			}
			if d.Action != engine.Continue {
				rep.Stopped++
				if err := stop.Reset(); err != nil {
					return err
				}
			}
		}
	case abi.KindDrafter:
		if err := exerciseDrafter(vocab, p, rng, rep, timed); err != nil {
			return err
		}
	}
	rep.StepMicros = newSpread(steps)
	return nil
}

// samplerChain is p alone when it is a sampler, or p followed by the
// embedded greedy sampler when it is a processor.
func samplerChain(ctx context.Context, h *host.Host, vocab engine.Vocab, p *host.Plugin) (*host.Sampler, error) {
	if p.Kind() == abi.KindSampler {
		return host.NewSampler(vocab, p)
	}
	wasm, _ := builtinModule(plugins.GreedyBuiltin)
	greedy, err := h.Load(ctx, wasm, host.LoadOptions{Kind: abi.KindSampler})
	if err != nil {
		return nil, err
	}
	return host.NewSampler(vocab, greedy, p)
}

// synthVocab is a vocabulary of n tokens whose pieces are " t<id>".
type synthVocab int

func (v synthVocab) Piece(id int32) []byte {
	if id < 0 || int(id) >= int(v) {
		return nil
	}
	return []byte(" t" + strconv.Itoa(int(id)))
}
func (v synthVocab) IsEOG(int32) bool { return false }
func (v synthVocab) Size() int        { return int(v) }

func (r *checkReport) writeText(w io.Writer) {
	fmt.Fprintf(w, "ok: %s %s %s (ABI v%d)\n", r.Meta.Kind, r.Meta.Name, r.Meta.Version, r.Meta.ABI)
	if r.Meta.Description != "" {
		fmt.Fprintf(w, "description: %s\n", r.Meta.Description)
	}
	fmt.Fprintf(w, "sha256: %s (%d bytes)\n", r.SHA256, r.ModuleBytes)
	fmt.Fprintf(w, "memory: %d pages declared (%d KiB), cap %d pages (%d MiB); call timeout %d ms\n",
		r.MemoryPages, r.MemoryPages*64, r.MemoryCap, r.MemoryCap/16, r.CallTimeoutMs)
	fmt.Fprintf(w, "run: %d steps at vocab %d: init %.1f µs, step %.1f µs median (%.1f – %.1f)",
		r.Steps, r.Vocab, r.InitMicros, r.StepMicros.Median, r.StepMicros.Min, r.StepMicros.Max)
	if r.Meta.Kind == abi.KindStop.String() {
		fmt.Fprintf(w, ", stopped %d time(s)", r.Stopped)
	}
	fmt.Fprintln(w)
}
