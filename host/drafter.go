package host

import (
	"encoding/binary"
	"fmt"

	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/engine"
	"github.com/realizar-host/realizar-host/forward"
)

// Drafter is an engine.Drafter backed by a drafter plugin (ABI.md §12). It
// owns one instance (created by the first Reset, re-created by the Reset
// after one was discarded), serves one sequence, and is used by one
// goroutine at a time. Close it when the Session ends.
//
// The guest learns the sequence incrementally: the prompt at Reset
// (realizar.prompt_get), then at each Draft the tokens that joined the
// sequence since the call before (realizar.accepted_get), with the outcome
// of its previous draft as arguments of the same call.
//
// A drafter that fails — a trap, a call past its deadline, memory past its
// cap, a negative error code, a count outside [0, max] or an id outside
// [0, n_vocab) — costs only its own sequence and never its text: Draft
// then proposes nothing for the rest of the turn, which goes on with
// plain steps (a draft is only ever a guess the chain verifies). Err
// reports the failure (a *PluginError); the next Reset instantiates
// afresh if the instance was discarded.
type Drafter struct {
	vocab    engine.Vocab
	maxPiece int
	st       stage
	closed   bool

	maxDraft          int // the longest draft asked for (SetMaxDraft)
	seen              int // tokens of the sequence the guest has been given
	drafted, accepted int // the last draft's outcome, for the next call
	err               error
}

var _ engine.Drafter = (*Drafter)(nil)

// NewDrafter adapts a drafter plugin for a model whose vocabulary is vocab.
// The Drafter holds the plugin's code until Close: p may be closed once it
// is made. A closed p is ErrClosed; a plugin of another kind ErrKind.
func NewDrafter(vocab engine.Vocab, p *Plugin) (*Drafter, error) {
	if p == nil || p.kind != abi.KindDrafter {
		return nil, fmt.Errorf("%w: %v is not a drafter", ErrKind, p)
	}
	st, err := newStage(p)
	if err != nil {
		return nil, err
	}
	return &Drafter{vocab: vocab, maxPiece: maxPieceLen(vocab), st: *st, maxDraft: abi.MaxDraft}, nil
}

// SetMaxDraft bounds the max each realizar_draft is given to n tokens
// (a user's draft limit: run --draft-max, realizar.speculative.draft_max);
// n <= 0 or past abi.MaxDraft means abi.MaxDraft.
func (d *Drafter) SetMaxDraft(n int) {
	if n <= 0 || n > abi.MaxDraft {
		n = abi.MaxDraft
	}
	d.maxDraft = n
}

// Reset starts a turn from prompt: it instantiates if needed and calls
// realizar_reset(0, len(prompt)) with the prompt readable through
// realizar.prompt_get. A failure is kept for Err and turns drafting off
// for the turn.
func (d *Drafter) Reset(prompt []int32) {
	d.seen, d.drafted, d.accepted, d.err = len(prompt), 0, 0, nil
	if d.closed {
		d.err = ErrClosed
		return
	}
	if err := d.st.ensure(d.vocab, d.maxPiece); err != nil {
		d.err = err
		return
	}
	d.err = d.st.resetTurn(0, prompt)
}

// Draft gives the guest the tokens that joined the sequence since its
// last call and appends its draft, at most min(limit, SetMaxDraft's)
// tokens, to dst. After a failure (Err) it appends nothing.
func (d *Drafter) Draft(dst, tokens []int32, limit int) []int32 {
	if d.err != nil || d.closed || limit < 1 {
		return dst
	}
	if len(tokens) < d.seen {
		d.err = d.st.failure("draft", fmt.Errorf("host: the sequence shrank from %d to %d tokens within a turn", d.seen, len(tokens)))
		return dst
	}
	limit = min(limit, d.maxDraft)
	i := d.st.inst
	if i == nil {
		d.err = d.st.failure("draft", ErrNoInstance)
		return dst
	}
	i.st.accepted = tokens[d.seen:]
	i.stack[0], i.stack[1] = uint64(uint32(len(tokens)-d.seen)), uint64(uint32(limit))
	i.stack[2], i.stack[3] = uint64(uint32(d.drafted)), uint64(uint32(d.accepted))
	err := i.call(i.step)
	i.st.accepted = nil
	if err != nil {
		d.err = d.st.fail("draft", err)
		return dst
	}
	d.seen, d.drafted, d.accepted = len(tokens), 0, 0
	k := int32(i.stack[0])
	switch {
	case k < 0:
		d.err = d.st.failure("draft", fmt.Errorf("%w: %s returned %s", ErrPluginFailed, abi.ExportDraft, abi.ErrCode(k)))
		return dst
	case int(k) > limit:
		d.err = d.st.failure("draft", fmt.Errorf("%w: %s returned %d tokens, at most %d were asked for", ErrBadResult, abi.ExportDraft, k, limit))
		return dst
	}
	out := i.region(i.inSize, 4*int(k))
	n := d.vocab.Size()
	start := len(dst)
	for j := range int(k) {
		id := int32(binary.LittleEndian.Uint32(out[4*j:]))
		if id < 0 || int(id) >= n {
			d.err = d.st.failure("draft", fmt.Errorf("%w: %s drafted id %d at %d, vocabulary has %d", forward.ErrBadToken, abi.ExportDraft, id, j, n))
			return dst[:start]
		}
		dst = append(dst, id)
	}
	return dst
}

// Accepted records the outcome of the last non-empty draft; the guest
// receives it with its next realizar_draft call.
func (d *Drafter) Accepted(drafted, accepted int) {
	d.drafted, d.accepted = drafted, accepted
}

// Err is the failure that turned drafting off for the current turn (a
// *PluginError naming the plugin), or nil.
func (d *Drafter) Err() error { return d.err }

// Log returns a copy of the instance log.
func (d *Drafter) Log() []byte { return d.st.log.bytes() }

// Close releases the instance and the plugin's code.
func (d *Drafter) Close() error {
	if !d.closed {
		d.closed = true
		d.st.close()
	}
	return nil
}
