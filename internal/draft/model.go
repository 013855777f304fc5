package draft

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/realizar-host/realizar-host/engine"
	"github.com/realizar-host/realizar-host/forward"
	"github.com/realizar-host/realizar-host/tokenizer"
)

// ErrVocabMismatch is a draft model whose vocabulary is not the target's:
// its drafts' ids would name other tokens. CheckVocab's errors wrap it.
var ErrVocabMismatch = errors.New("draft: the draft model's vocabulary differs from the target's")

// CheckVocab reports whether a draft model's vocabulary (draft) is the
// target model's (target): the same token count, the same text for every
// id, and the same BOS, EOS, EOT and end-of-generation ids. An error wraps
// ErrVocabMismatch and names what differs first (the count, the first id
// whose text differs and how many do, or the special id).
func CheckVocab(target, draft *tokenizer.Tokenizer) error {
	if n, m := target.Size(), draft.Size(); n != m {
		return fmt.Errorf("%w: %d tokens, the target has %d", ErrVocabMismatch, m, n)
	}
	first, differ := int32(-1), 0
	for id := range int32(target.Size()) {
		if target.TokenText(id) != draft.TokenText(id) {
			if first < 0 {
				first = id
			}
			differ++
		}
	}
	if first >= 0 {
		return fmt.Errorf("%w: token %d is %q, the target's is %q (%d of %d tokens differ)",
			ErrVocabMismatch, first, draft.TokenText(first), target.TokenText(first), differ, target.Size())
	}
	for _, sp := range []struct {
		name string
		t, d int32
	}{{"BOS", target.BOS(), draft.BOS()}, {"EOS", target.EOS(), draft.EOS()}, {"EOT", target.EOT(), draft.EOT()}} {
		if sp.t != sp.d {
			return fmt.Errorf("%w: %s is %s, the target's is %s", ErrVocabMismatch, sp.name, idText(sp.d), idText(sp.t))
		}
	}
	if t, d := target.EOG(), draft.EOG(); !slices.Equal(t, d) {
		return fmt.Errorf("%w: end-of-generation ids %s, the target's are %s", ErrVocabMismatch, idsText(d), idsText(t))
	}
	return nil
}

func idText(id int32) string {
	if id == tokenizer.Absent {
		return "absent"
	}
	return fmt.Sprint(id)
}

func idsText(ids []int32) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = fmt.Sprint(id)
	}
	return "[" + strings.Join(s, " ") + "]"
}

// ModelConfig describes a draft model to NewModel.
type ModelConfig struct {
	// NewSequence returns a new decoding state (a KV cache) over the draft
	// model's weights, which every state shares (model.Model.NewSequence).
	// A sequence that is a forward.Prefiller catches up on a span in one
	// batched pass; otherwise token by token.
	NewSequence func() forward.Sequence
	// ContextLength is the draft model's context in positions (> 0): past
	// it a sequence gets no drafts.
	ContextLength int
	// EOG are the vocabulary's end-of-generation ids: a draft ends after
	// one.
	EOG []int32
	// KVBytesPerPosition is one position's KV cache across the draft
	// model's layers, in bytes (model.Model.KVBytesPerPosition), for a
	// server's KV budget (ModelDrafter.KVBytes); 0 means unknown.
	KVBytesPerPosition int64
}

// Model is a draft model: a second, smaller model over the target's
// vocabulary (CheckVocab) whose greedy continuation is the draft. It is
// loaded once and shared: each sequence's ModelDrafter holds its own KV
// cache (a sequence of NewSequence) over the shared weights, and nothing else.
// When the steps are forward.Batchers, the forwards of drafters that
// run at the same time (a server's sequences) share batched passes, each
// weight read once for all of them. Safe for concurrent use
// (ModelConfig.NewSequence must be).
type Model struct {
	cfg    ModelConfig
	passes passes
}

// catchUpChunk is the most tokens of one sequence a batched catch-up
// pass takes (a long prompt takes several), bounding the pass's scratch.
const catchUpChunk = 64

// NewModel returns a Model drafting with cfg. A nil NewSequence, a context
// of 0 positions or fewer or negative KV bytes is an error wrapping
// engine.ErrBadConfig.
func NewModel(cfg ModelConfig) (*Model, error) {
	switch {
	case cfg.NewSequence == nil:
		return nil, fmt.Errorf("%w: a draft model needs NewSequence", engine.ErrBadConfig)
	case cfg.ContextLength <= 0:
		return nil, fmt.Errorf("%w: a draft model's context is %d positions", engine.ErrBadConfig, cfg.ContextLength)
	case cfg.KVBytesPerPosition < 0:
		return nil, fmt.Errorf("%w: a draft model's KV cache is %d bytes per position", engine.ErrBadConfig, cfg.KVBytesPerPosition)
	}
	cfg.EOG = slices.Clone(cfg.EOG)
	return &Model{cfg: cfg}, nil
}

// ModelOptions configures Model.Drafter. The zero value is the defaults.
type ModelOptions struct {
	// MaxDraft is the longest draft (default DefaultMaxDraft).
	MaxDraft int
	// Cancel, when cancelled, ends a draft between two of the draft
	// model's steps (the drafts so far are kept; the turn's own step then
	// sees the cancellation). It is read with Cancelled, never polled, so
	// the turn's poll count is that of plain decoding.
	Cancel *engine.CancelToken
}

// Drafter returns a drafter for one sequence, with a KV cache of its own
// (made on its first draft).
func (m *Model) Drafter(opts ModelOptions) *ModelDrafter {
	return &ModelDrafter{m: m, cancel: opts.Cancel, length: newLength(opts.MaxDraft, 0, false)}
}

// ModelDrafter drafts one sequence's next tokens with a draft model: it
// catches its KV cache up on the sequence's tokens (the prompt in a
// batched pass first, then the tokens accepted since), resuming at the
// longest prefix its cache holds — after a rejection that is the accepted
// tokens, the target's own rule — and then takes the draft model's most
// likely token (argmax, the lowest id on a tie) step by step, as many as
// its Length allows. A draft ends after an end-of-generation token, at the
// draft model's context, or on cancellation. A failed draft step drafts
// nothing more and forgets the cache (the next draft starts from 0); it
// never fails the turn, which decodes plainly instead.
//
// Not safe for concurrent use (a Session calls it for one turn at a time);
// it keeps its cache between turns, so a next turn that extends the last
// (a chat) catches up on the new tokens only.
type ModelDrafter struct {
	m      *Model
	cancel *engine.CancelToken
	length length

	seq     forward.Sequence
	prefill forward.Prefiller // nil when seq has none
	batcher bool              // seq is a Batcher: forwards share passes
	held    []int32           // the tokens seq's cache holds, in order
	reserve int               // positions to size a new cache for (ReserveKV); 0: on demand
	// Err is the last draft step's error (nil after a successful draft).
	Err error
}

var _ engine.Drafter = (*ModelDrafter)(nil)

// ReserveKV sizes the drafter's KV cache for a sequence of positions
// positions (within the draft model's context; a cache already made is
// grown, never shrunk, when its sequence is a forward.Reserver) and returns
// its bytes at ModelConfig.KVBytesPerPosition: what the serving core
// charges to the KV budget beside the target's cache (serving.KVDrafter).
// A sequence no longer than that never grows the cache past it (a
// cache grown on demand doubles).
func (d *ModelDrafter) ReserveKV(positions int) int64 {
	d.reserve = min(max(positions, 1), d.m.cfg.ContextLength)
	if r, ok := d.seq.(forward.Reserver); ok {
		if _, err := r.Reserve(d.reserve); err != nil {
			d.Err = err
		}
	}
	return int64(d.reserve) * d.m.cfg.KVBytesPerPosition
}

// Reset starts a turn; the cache is kept (Draft resumes where it agrees).
func (d *ModelDrafter) Reset([]int32) { d.length.Reset() }

// Accepted adapts the draft length.
func (d *ModelDrafter) Accepted(drafted, accepted int) { d.length.Accepted(drafted, accepted) }

// Draft appends the draft model's greedy continuation of tokens, up to the
// adapted length and limit.
func (d *ModelDrafter) Draft(dst, tokens []int32, limit int) []int32 {
	k := min(d.length.Next(limit), d.m.cfg.ContextLength-len(tokens))
	if k <= 0 || len(tokens) == 0 || d.cancel.Cancelled() {
		return dst
	}
	if d.seq == nil {
		d.seq = d.m.cfg.NewSequence()
		d.prefill, _ = d.seq.(forward.Prefiller)
		_, d.batcher = d.seq.(forward.Batcher)
		if r, ok := d.seq.(forward.Reserver); ok && d.reserve > 0 {
			if _, err := r.Reserve(d.reserve); err != nil {
				d.Err = err
				return dst
			}
		}
	}
	logits, err := d.catchUp(tokens)
	for err == nil {
		id := argmax(logits)
		dst = append(dst, id)
		k--
		if k == 0 || slices.Contains(d.m.cfg.EOG, id) || d.cancel.Cancelled() {
			break
		}
		pos := len(d.held)
		d.held = append(d.held, id)
		logits, err = d.forward(d.held, pos)
	}
	if err != nil {
		d.held = d.held[:0]
		d.seq.Reset()
	}
	d.Err = err
	return dst
}

// catchUp brings the cache to hold tokens and returns the logits after
// the last: it forwards tokens from the longest prefix it holds (at least
// the last token, whose logits it needs).
func (d *ModelDrafter) catchUp(tokens []int32) ([]float32, error) {
	start := 0
	for start < min(len(d.held), len(tokens)-1) && d.held[start] == tokens[start] {
		start++
	}
	d.held = append(d.held[:start], tokens[start:]...)
	if d.batcher {
		var logits []float32
		var err error
		for lo := start; lo < len(tokens) && err == nil; lo += catchUpChunk {
			logits, err = d.m.passes.forward(d.seq, tokens[:min(lo+catchUpChunk, len(tokens))], lo)
		}
		return logits, err
	}
	if len(tokens)-start > 1 && d.prefill != nil {
		return d.prefill.Prefill(tokens, start)
	}
	var logits []float32
	var err error
	for pos := start; pos < len(tokens) && err == nil; pos++ {
		logits, err = d.seq.Step(tokens[pos], pos)
	}
	return logits, err
}

// forward steps tokens[pos] at pos (tokens[:pos] held): in a shared pass
// when the sequence batches.
func (d *ModelDrafter) forward(tokens []int32, pos int) ([]float32, error) {
	if d.batcher {
		return d.m.passes.forward(d.seq, tokens[:pos+1], pos)
	}
	return d.seq.Step(tokens[pos], pos)
}

// argmax is the index of the largest logit, the lowest on a tie.
func argmax(logits []float32) int32 {
	best := 0
	for i, v := range logits {
		if v > logits[best] {
			best = i
		}
	}
	return int32(best)
}
