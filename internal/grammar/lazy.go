package grammar

import "bytes"

// Trigger limits: a trigger is 1 to MaxTriggerBytes bytes, a Lazy has at
// most MaxTriggers of them.
const (
	MaxTriggers     = 16
	MaxTriggerBytes = 256
)

// Lazy is a Matcher that constrains generation only once one of its
// triggers has appeared in the generated text, as llama.cpp's lazy grammars
// do (grammar_lazy with word triggers): a model may write freely until it
// starts a tool call with "<tool_call>", and from the first byte of the
// trigger on, the text must match the grammar (so the grammar itself
// starts with the trigger). Before that Mask is nil (every token allowed)
// and Accept only watches the text.
//
// A Lazy is for one generation at a time, like its Matcher.
type Lazy struct {
	m        *Matcher
	triggers [][]byte
	longest  int
	tail     []byte // the last longest-1 bytes generated before the trigger
	on       bool
}

// NewLazy wraps m with triggers: 1 to MaxTriggers strings of 1 to
// MaxTriggerBytes bytes each. Other counts or lengths are ErrTrigger.
func NewLazy(m *Matcher, triggers []string) (*Lazy, error) {
	if len(triggers) == 0 || len(triggers) > MaxTriggers {
		return nil, errorf("%w: %d triggers, want 1 to %d", ErrTrigger, len(triggers), MaxTriggers)
	}
	l := &Lazy{m: m}
	for i, t := range triggers {
		if len(t) == 0 || len(t) > MaxTriggerBytes {
			return nil, errorf("%w: trigger %d is %d bytes, want 1 to %d", ErrTrigger, i, len(t), MaxTriggerBytes)
		}
		l.triggers = append(l.triggers, []byte(t))
		l.longest = max(l.longest, len(t))
	}
	return l, nil
}

// Triggered reports whether a trigger has appeared: from then on Mask
// constrains.
func (l *Lazy) Triggered() bool { return l.on }

// Reset starts a new generation: not triggered, the grammar at its start.
func (l *Lazy) Reset() {
	l.m.Reset()
	l.tail, l.on = l.tail[:0], false
}

// Mask is nil before a trigger (no constraint), then the Matcher's mask
// (see Matcher.Mask for its layout and ownership).
func (l *Lazy) Mask() []uint32 {
	if !l.on {
		return nil
	}
	return l.m.Mask()
}

// Done reports whether the grammar has been triggered and may end here (or
// has ended).
func (l *Lazy) Done() bool { return l.on && l.m.Done() }

// Accept advances past token id. Before a trigger it appends the token's
// bytes to the text it watches; when a trigger appears (possibly across
// tokens, possibly followed by more bytes of the same token), the grammar
// is fed the text from the trigger's first byte, and a refusal there is
// ErrRejected. After the trigger it is Matcher.Accept.
func (l *Lazy) Accept(id int32) error {
	if l.on {
		return l.m.Accept(id)
	}
	if id < 0 || int(id) >= l.m.v.n {
		return errorf("%w: token %d is outside the vocabulary", ErrRejected, id)
	}
	if l.m.v.kinds[id] != TokenText {
		return nil // end of generation or a control token: no text to watch
	}
	text := append(l.tail, l.m.v.pieces[id]...)
	at := -1
	for _, t := range l.triggers {
		// An occurrence wholly inside the old tail was looked for when
		// that tail was new.
		if i := bytes.Index(text, t); i >= 0 && (at < 0 || i < at) {
			at = i
		}
	}
	if at >= 0 {
		if err := l.m.AcceptBytes(text[at:]); err != nil {
			return err
		}
		l.on = true
		l.tail = text[:0]
		return nil
	}
	if keep := l.longest - 1; len(text) > keep {
		text = append(text[:0], text[len(text)-keep:]...)
	}
	l.tail = text
	return nil
}
