package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/engine"
	"github.com/realizar-host/realizar-host/host"
	"github.com/realizar-host/realizar-host/internal/plugins/chain"
)

// drafterFlags are run's and chat's drafter plugin: --drafter PLUGIN (an
// embedded drafter's name, a .wasm file or a .json manifest) and its
// --drafter-config.
type drafterFlags struct {
	spec   string
	config string
}

func (f *drafterFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.spec, "drafter", "", "speculative decoding: a drafter plugin (abi/ABI.md §12) proposes the drafts: an embedded one ("+
		strings.Join(builtinNamesOf(abi.KindDrafter.String()), ", ")+"), a .wasm file or a .json manifest; the text is the same")
	cmd.Flags().StringVar(&f.config, "drafter-config", "", "the --drafter plugin's config, a JSON object")
}

// check refuses a second draft source beside --drafter and a config
// without it, before the model loads.
func (f *drafterFlags) check(otherSource bool) error {
	switch {
	case f.spec != "" && otherSource:
		return usage(errors.New("--drafter and --prediction, --lookup or --draft-model: give one draft source"))
	case f.config != "" && f.spec == "":
		return usage(errors.New("--drafter-config needs --drafter PLUGIN"))
	case f.config != "" && !json.Valid([]byte(f.config)):
		return usage(fmt.Errorf("--drafter-config: not valid JSON"))
	}
	return nil
}

// pluginDrafter is --drafter's adapter, one for the generator's Session,
// reset at each turn; a failure it reports turns its drafts off for that
// turn, and report says so on stderr.
type pluginDrafter struct {
	d    *host.Drafter
	spec string
	out  io.Writer
}

// loadDrafter loads --drafter, if given, as g's draft source.
func (g *generator) loadDrafter(ctx context.Context, cmd *cobra.Command, tf *turnFlags) error {
	f := tf.plugin
	if f.spec == "" {
		return nil
	}
	var cfg json.RawMessage
	if f.config != "" {
		cfg = json.RawMessage(f.config)
	}
	pl, err := loadPolicy(ctx, g.host, chain.Part{Ref: f.spec, Config: cfg, Param: "--drafter"}, abi.KindDrafter)
	if err != nil {
		return err
	}
	defer pl.Close()
	d, err := host.NewDrafter(g.model.tok, pl)
	if err != nil {
		return badPlugin(fmt.Errorf("--drafter %s: %w", f.spec, err))
	}
	d.SetMaxDraft(tf.draftMax)
	// Instantiated now, so that a config the plugin refuses is an error
	// before any turn, not a warning after each.
	if d.Reset(nil); d.Err() != nil {
		_ = d.Close()
		return badPlugin(fmt.Errorf("--drafter %s: %s", f.spec, strings.TrimPrefix(d.Err().Error(), "host: ")))
	}
	g.plugin = &pluginDrafter{d: d, spec: f.spec, out: cmd.ErrOrStderr()}
	g.newDraft = func() engine.Drafter { return d }
	return nil
}

// report prints the drafter's failure of the turn that ended, if any: the
// turn went on with plain steps, its text unchanged.
func (p *pluginDrafter) report() {
	if p == nil || p.d.Err() == nil {
		return
	}
	fmt.Fprintf(p.out, "warning: --drafter %s: %v (the turn went on without drafts; its text is the same)\n", p.spec, p.d.Err())
}

// exerciseDrafter runs a drafter plugin for rep.Steps draft calls (plugin
// check): a sequence of random tokens in which a short phrase recurs, each
// draft's leading tokens that the sequence then continues with counted as
// accepted. A failure (host.Drafter.Err) is the check's error.
func exerciseDrafter(vocab synthVocab, p *host.Plugin, rng *rand.Rand, rep *checkReport, timed func(func() error) error) error {
	d, err := host.NewDrafter(vocab, p)
	if err != nil {
		return err
	}
	defer d.Close()
	phrase := []int32{5, 6, 7, 8, 9, 10}
	seq := []int32{1, 2, 3}
	start := time.Now()
	if d.Reset(seq); d.Err() != nil {
		return d.Err()
	}
	rep.InitMicros = float64(time.Since(start).Nanoseconds()) / 1e3
	for range rep.Steps {
		var got []int32
		if err := timed(func() error { got = d.Draft(nil, seq, abi.MaxDraft); return d.Err() }); err != nil {
			return err
		}
		next := int32(rng.IntN(int(vocab)))
		if rng.IntN(4) == 0 {
			seq = append(seq, phrase...)
		}
		acc := 0
		for acc < len(got) && acc < len(phrase) && rng.IntN(2) == 0 {
			acc++
		}
		if len(got) > 0 {
			d.Accepted(len(got), acc)
		}
		seq = append(seq, append(got[:acc:acc], next)...)
	}
	return nil
}
