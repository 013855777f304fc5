package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/realizar-host/realizar-host/engine"
	"github.com/realizar-host/realizar-host/internal/server/toolcall"
	"github.com/realizar-host/realizar-host/internal/serving"
	"github.com/realizar-host/realizar-host/tokenizer"
)

// responder writes one generation request's response from its turn: the
// whole response as one JSON object (completion or chat, with tool calls
// parsed), or a stream of SSE chunks. It drains the turn's buffered output
// at the client's pace, each write under the server's WriteTimeout: a
// client that accepts nothing for that long is dropped and its turn
// cancelled.
type responder struct {
	s       *Server
	ctx     context.Context
	w       http.ResponseWriter
	p       *prepared
	pol     *policies
	chat    bool // an OpenAI chat completion
	shape   apiShape
	id      string
	created int64
	pieces  *tokenizer.Renderer // the turn's rendering (Server.turnPieces)
	seed    uint64
	think   *thinkSplit // the reasoning split, when the request has one
}

func (s *Server) newResponder(w http.ResponseWriter, ctx context.Context, p *prepared, pol *policies, shape apiShape) *responder {
	rs := &responder{s: s, ctx: ctx, w: w, p: p, pol: pol, chat: shape == shapeChat, shape: shape, id: s.newID(shape),
		created: time.Now().Unix(), pieces: s.turnPieces(p.tools), seed: drawSeed(p.fields)}
	if p.think && p.promptText != nil {
		rs.think = newThinkSplit(*p.promptText)
	}
	return rs
}

// split is a whole turn's text split into reasoning and answer (all
// answer without a split).
func (rs *responder) split(text string) (reasoning, answer string) {
	if rs.think == nil {
		return "", text
	}
	return rs.think.feed(text, true)
}

// request is the turn the serving core runs.
func (rs *responder) request() serving.Request {
	p, f := rs.p, rs.p.fields
	gen := turnConfig(p)
	gen.Seed, gen.Sampler, gen.Stop, gen.Pieces = &rs.seed, rs.pol.sampler, rs.pol.stop, rs.pieces
	gen.Draft = p.spec.drafter(rs.pol, engine.FromContext(rs.ctx))
	return serving.Request{Prompt: p.prompt, MaxTokens: p.maxTokens, CachePrompt: f.CachePrompt == nil || *f.CachePrompt,
		Stream: f.Stream, Generate: gen}
}

// turnConfig is the GenerateConfig that p's fields give: its logprobs
// and the turn fields (turnfields.Fields, samplingFields.applyTurn).
// request adds the seed, the policies, the rendering and the draft
// source.
func turnConfig(p *prepared) engine.GenerateConfig {
	cfg := engine.GenerateConfig{Logprobs: p.logprobs, TopLogprobs: p.topLogprobs}
	p.fields.applyTurn(&cfg)
	return cfg
}

// result waits for the turn's end. A lazy tool grammar that refused the
// text of the token holding its trigger ends the turn there, and its text
// is parsed as the turn's (a call that does not parse is content), never
// a 500; a plugin's failure names the request field behind the plugin.
func (rs *responder) result(turn *serving.Turn) (serving.Result, error) {
	res, err := turn.Result()
	if err != nil && rs.p.tools.active() && rs.p.tools.choice.Mode == toolcall.Auto && errors.Is(err, engine.ErrNoTokenAllowed) {
		err = nil
	}
	if err != nil {
		err = turnError(rs.pol.withParam(err))
	}
	return res, err
}

// timingHeaders tell, before any body, how long the request waited for a
// place and held it (also on errors, which carry no realizar object).
func (rs *responder) timingHeaders(res serving.Result) {
	h := rs.w.Header()
	h.Set("X-Realizar-Queue-Ms", strconv.FormatFloat(float64(res.Queue.Microseconds())/1000, 'f', 3, 64))
	h.Set("X-Realizar-Turn-Ms", strconv.FormatFloat(float64(res.Held.Microseconds())/1000, 'f', 3, 64))
}

// whole writes the turn's response as one JSON object.
func (rs *responder) whole(turn *serving.Turn) error {
	res, err := rs.result(turn)
	rs.timingHeaders(res)
	if err != nil {
		return err
	}
	p, s, t := rs.p, rs.s, res.Turn
	finish := finishReason(t.Stop)
	u := usageOf(p, t)
	logprobs := slices.DeleteFunc(slices.Clone(t.Logprobs), func(st engine.StepLogprobs) bool { return !s.reportsLogprobs(st) })
	var body any
	if rs.chat {
		reasoning, answer := rs.split(string(t.Text))
		c := chatChoice{Message: &chatMessageOut{Role: "assistant", Content: ptr(answer)}, FinishReason: &finish}
		if p.tools.active() {
			c.Message = toolMessage(p.tools, answer)
			if len(c.Message.ToolCalls) > 0 && finish == "stop" {
				finish = "tool_calls"
			}
		}
		if reasoning != "" {
			c.Message.ReasoningContent = &reasoning
		}
		if p.logprobs {
			c.Logprobs = toChatLogprobs(rs.pieces, logprobs)
		}
		body = chatResponse{ID: rs.id, Object: "chat.completion", Created: rs.created, Model: s.model.ID,
			Choices: []chatChoice{c}, Usage: u, Realizar: realizarOf(res, rs.pol)}
	} else {
		c := completionChoice{Text: string(t.Text), FinishReason: &finish}
		if p.logprobs {
			c.Logprobs, _ = toCompletionLogprobs(rs.pieces, logprobs, 0)
		}
		body = completionResponse{ID: rs.id, Object: "text_completion", Created: rs.created, Model: s.model.ID,
			Choices: []completionChoice{c}, Usage: u, Realizar: realizarOf(res, rs.pol)}
	}
	_ = http.NewResponseController(rs.w).SetWriteDeadline(time.Now().Add(s.cfg.WriteTimeout))
	writeJSON(rs.w, http.StatusOK, body)
	return nil
}

// stream writes the turn's output as SSE chunks as it arrives, then the
// finish chunk, the usage chunk and [DONE]; an error after the first
// chunk is an error event, then [DONE].
func (rs *responder) stream(turn *serving.Turn) error {
	st := newSSE(rs.w, rs.s.cfg.WriteTimeout)
	var lps *streamLogprobs
	if rs.p.logprobs {
		lps = &streamLogprobs{s: rs.s, text: rs.pieces}
	}
	var calls *toolcall.Stream // a turn that may call tools
	if rs.p.tools.active() {
		fam := rs.p.tools.family
		calls = toolcall.NewStream(fam, func() string { return newCallID(fam) })
	}
	var buf []serving.Event
	for {
		evs, more := turn.Next(buf[:0])
		for _, ev := range evs {
			if ev.Logprobs != nil {
				if lps != nil {
					lps.add(*ev.Logprobs)
				}
				continue
			}
			if err := rs.sendText(st, calls, lps, ev.Text); err != nil {
				turn.Cancel(errClientStalled)
				return errors.Join(errWritten, errClientStalled, err)
			}
		}
		if !more {
			break
		}
		buf = evs
	}
	res, err := rs.result(turn)
	if !st.started {
		rs.timingHeaders(res)
	}
	if err != nil {
		if !st.started {
			return err
		}
		_ = st.send(errorBody{Error: clientError(rs.ctx, err)})
		_ = st.done()
		return errors.Join(errWritten, err)
	}
	return rs.finishStream(st, calls, lps, res)
}

// sendText streams released text: the chat's role chunk first, then the
// text or a tool turn's deltas, with the queued logprobs.
func (rs *responder) sendText(st *sse, calls *toolcall.Stream, lps *streamLogprobs, text []byte) error {
	s := rs.s
	if rs.chat && !st.started {
		if err := st.send(chatChunk(rs.id, rs.created, s.model.ID, &chatOut{Role: "assistant", Content: ptr("")}, nil)); err != nil {
			return err
		}
	}
	answer := string(text)
	if rs.chat && rs.think != nil {
		var reasoning string
		reasoning, answer = rs.think.feed(answer, false)
		if reasoning != "" {
			if err := st.send(chatChunk(rs.id, rs.created, s.model.ID, &chatOut{ReasoningContent: &reasoning}, nil)); err != nil {
				return err
			}
		}
		if answer == "" {
			return nil
		}
	}
	if calls != nil {
		return s.sendDeltas(st, rs.id, rs.created, calls.Feed(answer), lps)
	}
	return st.send(s.textChunk(rs.id, rs.created, rs.chat, answer, lps))
}

// finishStream ends a stream that succeeded: the calls' last deltas, the
// logprobs of tokens whose text a stop string trimmed, the finish chunk
// with the realizar extension, the usage chunk and [DONE].
func (rs *responder) finishStream(st *sse, calls *toolcall.Stream, lps *streamLogprobs, res serving.Result) error {
	s, p := rs.s, rs.p
	finish := finishReason(res.Turn.Stop)
	u := usageOf(p, res.Turn)
	ext := realizarOf(res, rs.pol)
	if rs.chat && !st.started {
		_ = st.send(chatChunk(rs.id, rs.created, s.model.ID, &chatOut{Role: "assistant", Content: ptr("")}, nil))
	}
	if rs.chat && rs.think != nil {
		// What the split held back.
		reasoning, answer := rs.think.feed("", true)
		if reasoning != "" {
			_ = st.send(chatChunk(rs.id, rs.created, s.model.ID, &chatOut{ReasoningContent: &reasoning}, nil))
		}
		if answer != "" && calls != nil {
			_ = s.sendDeltas(st, rs.id, rs.created, calls.Feed(answer), lps)
		} else if answer != "" {
			_ = st.send(s.textChunk(rs.id, rs.created, true, answer, lps))
		}
	}
	if calls != nil {
		ds, _ := calls.Finish()
		_ = s.sendDeltas(st, rs.id, rs.created, ds, lps)
		if calls.Streamed() > 0 && finish == "stop" {
			finish = "tool_calls"
		}
	}
	if lps.pending() {
		_ = st.send(s.textChunk(rs.id, rs.created, rs.chat, "", lps))
	}
	if rs.chat {
		c := chatChunk(rs.id, rs.created, s.model.ID, &chatOut{}, &finish)
		c.Realizar = ext
		_ = st.send(c)
		_ = st.send(chatResponse{ID: rs.id, Object: "chat.completion.chunk", Created: rs.created, Model: s.model.ID,
			Choices: []chatChoice{}, Usage: u})
	} else {
		c := completionChunk(rs.id, rs.created, s.model.ID, "", &finish)
		c.Realizar = ext
		_ = st.send(c)
		_ = st.send(completionResponse{ID: rs.id, Object: "text_completion", Created: rs.created, Model: s.model.ID,
			Choices: []completionChoice{}, Usage: u})
	}
	return st.done()
}

func ptr[T any](v T) *T { return &v }

// streamLogprobs queues a streamed turn's step logprobs until the text they
// produced is released, so each chunk carries the logprobs of the tokens
// behind its text. An end-of-generation token's logprobs are left out
// as in a response without stream (reportsLogprobs).
type streamLogprobs struct {
	s     *Server
	text  engine.Pieces // the turn's rendering
	queue []engine.StepLogprobs
	off   int // text_offset of the next token, completions only
}

func (l *streamLogprobs) add(st engine.StepLogprobs) {
	if l.s.reportsLogprobs(st) {
		l.queue = append(l.queue, st)
	}
}

// reportsLogprobs says whether a step's logprobs are part of a response:
// not an end-of-generation token's, whose piece is never part of the text
// (with or without stream).
func (s *Server) reportsLogprobs(st engine.StepLogprobs) bool {
	return !s.model.Tokenizer.IsEOG(st.Token)
}

// pending reports whether queued logprobs have not been sent; false for nil.
func (l *streamLogprobs) pending() bool { return l != nil && len(l.queue) > 0 }

// take returns the queued steps and empties the queue.
func (l *streamLogprobs) take() []engine.StepLogprobs {
	q := l.queue
	l.queue = nil
	return q
}

// sendDeltas streams a tool turn's deltas, the queued logprobs with the
// first of them.
func (s *Server) sendDeltas(stream *sse, id string, created int64, ds []toolcall.Delta, lps *streamLogprobs) error {
	for _, d := range ds {
		c := chatChunk(id, created, s.model.ID, toolChunkDelta(d), nil)
		if lps != nil {
			c.Choices[0].Logprobs = toChatLogprobs(lps.text, lps.take())
		}
		if err := stream.send(c); err != nil {
			return err
		}
	}
	return nil
}

// textChunk is one streamed chunk of text, with the queued logprobs when lps
// is not nil.
func (s *Server) textChunk(id string, created int64, chat bool, text string, lps *streamLogprobs) any {
	if chat {
		c := chatChunk(id, created, s.model.ID, &chatOut{Content: ptr(text)}, nil)
		if lps != nil {
			c.Choices[0].Logprobs = toChatLogprobs(lps.text, lps.take())
		}
		return c
	}
	c := completionChunk(id, created, s.model.ID, text, nil)
	if lps != nil {
		c.Choices[0].Logprobs, lps.off = toCompletionLogprobs(lps.text, lps.take(), lps.off)
	}
	return c
}

func (s *Server) newID(shape apiShape) string {
	prefix := "cmpl-"
	switch shape {
	case shapeChat:
		prefix = "chatcmpl-"
	case shapeMessages:
		prefix = "msg_"
	case shapeResponses:
		return randomID("resp_") // a stored response's id is not guessable
	}
	return fmt.Sprintf("%s%d-%d", prefix, s.created, s.idSeq.Add(1))
}

func chatChunk(id string, created int64, model string, delta *chatOut, finish *string) chatResponse {
	return chatResponse{ID: id, Object: "chat.completion.chunk", Created: created, Model: model,
		Choices: []chatChoice{{Delta: delta, FinishReason: finish}}}
}

func completionChunk(id string, created int64, model, text string, finish *string) completionResponse {
	return completionResponse{ID: id, Object: "text_completion", Created: created, Model: model,
		Choices: []completionChoice{{Text: text, FinishReason: finish}}}
}

// toChatLogprobs converts a turn's logprobs to the chat format, each
// token's text rendered by text (the turn's, so that the tokens' texts
// make up the content).
func toChatLogprobs(text engine.Pieces, steps []engine.StepLogprobs) *chatLogprobs {
	out := &chatLogprobs{Content: []chatTokenLogprob{}}
	for _, st := range steps {
		e := tokenLogprob(text, st.Token, st.Logprob)
		for _, alt := range st.Top {
			e.TopLogprobs = append(e.TopLogprobs, tokenLogprob(text, alt.Token, alt.Logprob))
		}
		if e.TopLogprobs == nil {
			e.TopLogprobs = []chatTokenLogprob{}
		}
		out.Content = append(out.Content, e)
	}
	return out
}

func tokenLogprob(text engine.Pieces, id int32, lp float32) chatTokenLogprob {
	piece := text.Piece(id)
	b := make([]int, len(piece))
	for i, c := range piece {
		b[i] = int(c)
	}
	return chatTokenLogprob{Token: string(piece), Logprob: lp, Bytes: b}
}

// toCompletionLogprobs converts a turn's logprobs to the legacy format,
// each token's text rendered by text (the turn's, so that text_offset
// indexes the text); the first token's text_offset is off, and next is
// the offset after the last.
func toCompletionLogprobs(text engine.Pieces, steps []engine.StepLogprobs, off int) (lp *completionLogprobs, next int) {
	out := &completionLogprobs{Tokens: []string{}, TokenLogprobs: []float32{}, TopLogprobs: []map[string]float32{},
		TextOffset: []int{}}
	for _, st := range steps {
		piece := string(text.Piece(st.Token))
		out.Tokens = append(out.Tokens, piece)
		out.TokenLogprobs = append(out.TokenLogprobs, st.Logprob)
		top := map[string]float32{}
		for _, alt := range st.Top {
			top[string(text.Piece(alt.Token))] = alt.Logprob
		}
		out.TopLogprobs = append(out.TopLogprobs, top)
		out.TextOffset = append(out.TextOffset, off)
		off += len(piece)
	}
	return out, off
}

// forEachText calls fn with the text of each of turn's events that carries
// text (an event with logprobs is skipped: the streams of the Messages and
// Responses APIs carry none) until the turn ends. fn's error — a write that
// failed or stalled — cancels the turn and is returned joined with
// errWritten and errClientStalled.
func forEachText(turn *serving.Turn, fn func(text string) error) error {
	var buf []serving.Event
	for {
		evs, more := turn.Next(buf[:0])
		for _, ev := range evs {
			if ev.Logprobs != nil {
				continue
			}
			if err := fn(string(ev.Text)); err != nil {
				turn.Cancel(errClientStalled)
				return errors.Join(errWritten, errClientStalled, err)
			}
		}
		if !more {
			return nil
		}
		buf = evs
	}
}
