package main

import (
	"fmt"
	"io"
	"slices"

	"github.com/spf13/cobra"

	"github.com/realizar-host/realizar-host/engine"
	"github.com/realizar-host/realizar-host/forward"
	"github.com/realizar-host/realizar-host/gguf"
	"github.com/realizar-host/realizar-host/internal/draft"
	"github.com/realizar-host/realizar-host/model"
	"github.com/realizar-host/realizar-host/tokenizer"
)

// draftModelUsage is --draft-model's help, the same on run, chat, serve
// and bench.
const draftModelUsage = "speculative decoding: a smaller GGUF model of the same vocabulary whose greedy continuation is drafted and verified (its own KV cache per sequence), so the text is the same, sooner where it agrees"

// registerDraftModel adds --draft-model FILE to cmd.
func registerDraftModel(cmd *cobra.Command, path *string) {
	cmd.Flags().StringVar(path, "draft-model", "", draftModelUsage)
}

// draftLoaded is a loaded draft model: its file, weights and the
// draft.Model that makes each sequence's drafter over them.
type draftLoaded struct {
	file  *gguf.File
	model *model.Model
	draft *draft.Model
}

// loadDraftModel opens the draft model at path for the target vocabulary
// target, with the target's --threads and --ctx-size. A missing or
// malformed file, or a vocabulary other than the target's
// (draft.CheckVocab: the count, a token's text, BOS, EOS, EOT or the
// end-of-generation ids), is exitBadFile naming --draft-model and what
// differs.
func loadDraftModel(path string, mf *modelFlags, target *tokenizer.Tokenizer, progress io.Writer) (*draftLoaded, error) {
	f, err := openGGUF(path)
	if err != nil {
		return nil, badFile(fmt.Errorf("--draft-model: %w", err))
	}
	d := &draftLoaded{file: f}
	if err := d.build(path, mf, target, progress); err != nil {
		d.Close()
		return nil, badFile(fmt.Errorf("--draft-model %s: %w", path, err))
	}
	return d, nil
}

func (d *draftLoaded) build(path string, mf *modelFlags, target *tokenizer.Tokenizer, progress io.Writer) error {
	tok, err := tokenizer.FromGGUF(d.file)
	if err != nil {
		return err
	}
	if err := draft.CheckVocab(target, tok); err != nil {
		return err
	}
	if err := pageIn(d.file, progress); err != nil {
		return err
	}
	if d.model, err = model.Load(d.file, model.Options{Threads: mf.threads, ContextSize: mf.ctxSize}); err != nil {
		return err
	}
	c := d.model.Config()
	if c.Vocab != tok.Size() {
		return fmt.Errorf("the tokenizer has %d tokens but the model %d", tok.Size(), c.Vocab)
	}
	positions := c.ContextLength
	if mf.ctxSize > 0 {
		positions = min(positions, mf.ctxSize)
	}
	d.draft, err = draft.NewModel(draft.ModelConfig{NewSequence: func() forward.Sequence { return d.model.NewSequence() },
		ContextLength: positions, EOG: tok.EOG(), KVBytesPerPosition: d.model.KVBytesPerPosition()})
	return err
}

// drafter is a new drafter for one sequence (a KV cache of its own over
// the shared weights); maxDraft 0 is the default length.
func (d *draftLoaded) drafter(maxDraft int, cancel *engine.CancelToken) engine.Drafter {
	return d.draft.Drafter(draft.ModelOptions{MaxDraft: maxDraft, Cancel: cancel})
}

// Close releases the weights and the file; a nil d does nothing.
func (d *draftLoaded) Close() {
	if d == nil {
		return
	}
	if d.model != nil {
		_ = d.model.Close()
	}
	if d.file != nil {
		_ = d.file.Close()
	}
}

// benchDraftModel is bench --spec --draft-model's model; nil without the
// flag.
func benchDraftModel(path string, mf *modelFlags, m *loaded, progress io.Writer) (*draftLoaded, error) {
	if path == "" {
		return nil, nil
	}
	return loadDraftModel(path, mf, m.tok, progress)
}

// specModesWith is bench --spec's modes, with the draft model's last when
// dl is not nil.
func specModesWith(dl *draftLoaded) []specMode {
	if dl == nil {
		return specModes
	}
	return append(slices.Clip(specModes), specMode{"draft model", func([]int32, int) engine.Drafter { return dl.drafter(0, nil) }})
}
