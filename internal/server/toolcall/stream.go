package toolcall

import "strings"

// Delta is one piece of a streamed assistant message: content text, or a
// part of a tool call.
type Delta struct {
	Content string
	Call    *CallDelta // nil: a content delta
}

// CallDelta is a part of tool call Index, as OpenAI streams it: the first
// part of a call carries its ID, Name and the arguments so far (maybe
// ""); the later parts only argument text to append.
type CallDelta struct {
	Index     int
	First     bool
	ID        string
	Name      string
	Arguments string
}

// Stream turns a turn's text, given as it is generated, into deltas: the
// content as soon as it cannot be the start of a call (a marker's prefix
// and trailing space are held back), each call once its name is known,
// then its arguments' JSON text as the model writes it, in pieces whose
// concatenation is the call's Arguments. Concatenated, the deltas give
// the Message that Finish returns (Parse's, with the streamed ids),
// unless a call that had begun streaming proves not to be one at the end:
// a call cut short (max_tokens) stays streamed and its text is never sent
// as content (where Parse, with no complete call before it, has it as
// Content); a call whose JSON turns out broken (possible only
// unconstrained) stays streamed too, and its text comes as content as
// Parse gives it.
//
// A Stream is for one turn, used from one goroutine.
type Stream struct {
	f       Family
	newID   func() string
	text    strings.Builder
	content string
	calls   []Call // as streamed so far
}

// NewStream starts a stream for family f; newID gives each call its id.
func NewStream(f Family, newID func() string) *Stream { return &Stream{f: f, newID: newID} }

// Feed adds generated text and returns the deltas it releases (maybe none).
func (s *Stream) Feed(text string) []Delta {
	s.text.WriteString(text)
	return s.diff(build(scan(s.f, s.text.String(), false), false, false))
}

// Finish ends the turn: the deltas still held back, and the message as
// Parse reads the whole text, with the ids the stream gave its calls.
func (s *Stream) Finish() ([]Delta, Message) {
	sc := scan(s.f, s.text.String(), true)
	o := build(sc, true, false)
	sent := o
	if len(o.calls) < len(s.calls) {
		// A call the stream began was cut short: its text is not sent
		// as content (it was streamed as a call).
		sent = build(sc, true, true)
	}
	d := s.diff(sent)
	m := Message{Content: o.content}
	for i, c := range o.calls {
		id := ""
		if i < len(s.calls) && s.calls[i].Name == c.name {
			id = s.calls[i].ID
		}
		m.Calls = append(m.Calls, Call{ID: id, Name: c.name, Arguments: c.args})
	}
	return d, m
}

// Streamed reports how many calls the stream has begun.
func (s *Stream) Streamed() int { return len(s.calls) }

// diff is what o adds to what was streamed: only ever appending to the
// content and to each call's arguments, and calls in order.
func (s *Stream) diff(o built) []Delta {
	var out []Delta
	if len(o.content) > len(s.content) && strings.HasPrefix(o.content, s.content) {
		out = append(out, Delta{Content: o.content[len(s.content):]})
		s.content = o.content
	}
	for i, c := range o.calls {
		if i == len(s.calls) {
			id := s.newID()
			s.calls = append(s.calls, Call{ID: id, Name: c.name, Arguments: c.args})
			out = append(out, Delta{Call: &CallDelta{Index: i, First: true, ID: id, Name: c.name, Arguments: c.args}})
			continue
		}
		prev := &s.calls[i]
		if prev.Name == c.name && len(c.args) > len(prev.Arguments) && strings.HasPrefix(c.args, prev.Arguments) {
			out = append(out, Delta{Call: &CallDelta{Index: i, Arguments: c.args[len(prev.Arguments):]}})
			prev.Arguments = c.args
		}
	}
	return out
}
