package server

import (
	"encoding/json"
	"net/http"
	"time"
)

// sse writes server-sent events: "data: <json>\n\n" per event, flushed at
// once, and "data: [DONE]\n\n" at the end. Headers go out with the first
// event, so a request that fails before its first token still gets a
// plain HTTP error.
//
// Each event's write and flush run under timeout: a client that accepts
// nothing for that long fails the write.
type sse struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
	started bool
}

func newSSE(w http.ResponseWriter, timeout time.Duration) *sse {
	return &sse{w: w, rc: http.NewResponseController(w), timeout: timeout}
}

// send writes v as one event.
func (e *sse) send(v any) error { return e.event("", v) }

// event writes v as one event named name ("event: name" before its
// data, as Anthropic's stream names its events); "" names none.
func (e *sse) event(name string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return e.write(name, b)
}

func (e *sse) raw(data []byte) error { return e.write("", data) }

func (e *sse) write(name string, data []byte) error {
	if !e.started {
		h := e.w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		h.Set("X-Accel-Buffering", "no")
		e.w.WriteHeader(http.StatusOK)
		e.started = true
	}
	_ = e.rc.SetWriteDeadline(time.Now().Add(e.timeout))
	buf := make([]byte, 0, len(name)+len(data)+16)
	if name != "" {
		buf = append(buf, "event: "...)
		buf = append(buf, name...)
		buf = append(buf, '\n')
	}
	buf = append(buf, "data: "...)
	buf = append(buf, data...)
	buf = append(buf, "\n\n"...)
	if _, err := e.w.Write(buf); err != nil {
		return err
	}
	return e.rc.Flush()
}

// done writes the terminating event.
func (e *sse) done() error { return e.raw([]byte("[DONE]")) }
