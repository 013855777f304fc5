package server

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
)

// A request head with both Content-Length and Transfer-Encoding is how
// requests are smuggled: net/http reads the body chunked and drops the
// Content-Length, while a proxy in front that framed the body by its
// Content-Length sees a further request in it. RFC 9112 §6.1 lets a server
// refuse such a request and requires it to close the connection after
// responding; net/http keeps the connection and hides the Content-Length
// from the handler, so the check reads the request heads as they arrive
// (GuardListener) and Server.ServeHTTP refuses the request.

// GuardListener wraps ln so that a Server served on it answers a request
// whose head holds both Content-Length and Transfer-Encoding with a 400
// ambiguous_framing and closes its connection (RFC 9112 §6.1). It sets
// hs.ConnContext (calling the one hs had, if any) so that the handler finds
// its connection's check. Serve hs on the listener it returns. ln's
// connections must carry plain HTTP/1 (wrap a TLS listener, not the raw
// one beneath it).
func GuardListener(hs *http.Server, ln net.Listener) net.Listener {
	prev := hs.ConnContext
	hs.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		if prev != nil {
			ctx = prev(ctx, c)
		}
		if fc, ok := c.(*framingConn); ok {
			ctx = context.WithValue(ctx, framingKey{}, fc)
		}
		return ctx
	}
	return framingListener{ln}
}

// framingKey keys a connection's *framingConn in its requests' contexts.
type framingKey struct{}

// ambiguousFraming reports whether a request head read on r's connection
// held both Content-Length and Transfer-Encoding; false for a connection
// GuardListener did not wrap.
func ambiguousFraming(r *http.Request) bool {
	fc, ok := r.Context().Value(framingKey{}).(*framingConn)
	return ok && fc.ambiguous.Load()
}

type framingListener struct{ net.Listener }

func (l framingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &framingConn{Conn: c}, nil
}

// framingConn scans what is read from its connection for request heads.
// Once one held both fields, ambiguous stays set: the connection is
// refused from then on (its earlier requests may be answered already).
type framingConn struct {
	net.Conn
	mu        sync.Mutex // net/http reads from more than one goroutine, one at a time
	scan      headScanner
	ambiguous atomic.Bool
}

// NetConn is the wrapped connection (as tls.Conn's), for a caller that
// tunes its socket.
func (c *framingConn) NetConn() net.Conn { return c.Conn }

func (c *framingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.mu.Lock()
		if c.scan.feed(p[:n]) {
			c.ambiguous.Store(true)
		}
		c.mu.Unlock()
	}
	return n, err
}

// headScanner finds request heads in the bytes of an HTTP/1 connection,
// as net/http reads them: a line ending in " HTTP/d.d" (CR optional), then
// field lines up to an empty one. It frames no bodies: it takes any such
// line for a request line, inside a body too, so it misses no head (every
// field line of a real head is read while it is in a head), and a body made
// to look like a head can only get its own connection refused.
type headScanner struct {
	inHead bool
	cl, te bool // the head so far has Content-Length, Transfer-Encoding

	// The current line: its length, its first bytes (for a field name) and
	// its last ones (for a request line's version).
	n    int
	head [len(fieldTE)]byte
	tail [len(" HTTP/1.1\r")]byte
	nt   int // bytes in tail
}

// The field names, lower-case, with their colon (net/http refuses a space
// before it).
const (
	fieldCL = "content-length:"
	fieldTE = "transfer-encoding:"
)

// feed scans p, the connection's next bytes, and reports whether a head
// held both fields.
func (h *headScanner) feed(p []byte) (ambiguous bool) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			h.more(p)
			return ambiguous
		}
		h.more(p[:i])
		if h.endLine() {
			ambiguous = true
		}
		p = p[i+1:]
	}
	return ambiguous
}

// more adds seg to the current line.
func (h *headScanner) more(seg []byte) {
	if h.n < len(h.head) {
		copy(h.head[h.n:], seg)
	}
	h.n += len(seg)
	if len(seg) >= len(h.tail) {
		h.nt = copy(h.tail[:], seg[len(seg)-len(h.tail):])
		return
	}
	if keep := len(h.tail) - len(seg); h.nt > keep {
		copy(h.tail[:], h.tail[h.nt-keep:h.nt])
		h.nt = keep
	}
	h.nt += copy(h.tail[h.nt:], seg)
}

// endLine ends the current line and reports whether its head now holds
// both fields.
func (h *headScanner) endLine() bool {
	line := h.tail[:h.nt]
	n := h.n
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line, n = line[:len(line)-1], n-1
	}
	head := h.head[:min(h.n, len(h.head))]
	h.n, h.nt = 0, 0
	switch {
	case !h.inHead:
		if isRequestLineEnd(line) {
			h.inHead, h.cl, h.te = true, false, false
		}
		return false
	case n == 0: // the empty line that ends the head
		h.inHead = false
		return false
	case hasPrefixFold(head, fieldCL):
		h.cl = true
	case hasPrefixFold(head, fieldTE):
		h.te = true
	}
	return h.cl && h.te
}

// isRequestLineEnd reports whether a line ends as a request line: " HTTP/"
// and a version d.d.
func isRequestLineEnd(b []byte) bool {
	const v = " HTTP/1.1"
	if len(b) < len(v) {
		return false
	}
	b = b[len(b)-len(v):]
	digit := func(c byte) bool { return c >= '0' && c <= '9' }
	return string(b[:6]) == " HTTP/" && digit(b[6]) && b[7] == '.' && digit(b[8])
}

// hasPrefixFold reports whether b starts with the lower-case ASCII prefix,
// ignoring case.
func hasPrefixFold(b []byte, prefix string) bool {
	if len(b) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		c := b[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != prefix[i] {
			return false
		}
	}
	return true
}
