package server

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAmbiguousFraming: over a raw connection, a request whose head has
// both Content-Length and Transfer-Encoding is a 400 ambiguous_framing with
// Connection: close, and the server closes the connection (read EOF), so
// a request smuggled behind it is never answered; either field alone keeps
// the connection open for the next request.
func TestAmbiguousFraming(t *testing.T) {
	s := startServer(t, testTenantsFile(), 8)
	const body = `{"prompt": "hi", "max_tokens": 2}`
	n := strconv.Itoa(len(body))
	chunked := strconv.FormatInt(int64(len(body)), 16) + "\r\n" + body + "\r\n0\r\n\r\n"
	head := func(eol string, fields ...string) string {
		h := "POST /v1/completions HTTP/1.1" + eol + "Host: x" + eol + "Authorization: Bearer " + keyA + eol
		for _, f := range fields {
			h += f + eol
		}
		return h + eol
	}
	smuggled := "GET /health HTTP/1.1\r\nHost: x\r\n\r\n"
	tricky := `{"prompt": "HTTP/1.1\r\nContent-Length: 4\r\nTransfer-Encoding: chunked", "max_tokens": 2}`
	for _, tc := range []struct {
		name string
		send []string // written one after another, each once the previous one's response is read
		want []int    // the status of each; the connection closes after a 400
	}{
		{"Content-Length and chunked, a request smuggled behind",
			[]string{head("\r\n", "Content-Length: 4", "Transfer-Encoding: chunked") + chunked + smuggled}, []int{400}},
		{"chunked, then Content-Length", []string{head("\r\n", "Transfer-Encoding: chunked", "Content-Length: 40") + chunked}, []int{400}},
		{"lower case", []string{head("\r\n", "content-length: 4", "transfer-encoding: chunked") + chunked}, []int{400}},
		{"bare LF line ends", []string{head("\n", "Content-Length: 4", "Transfer-Encoding: chunked") + chunked}, []int{400}},
		{"no space after the colons", []string{head("\r\n", "Content-Length:4", "Transfer-Encoding:chunked") + chunked}, []int{400}},
		{"HTTP/1.0", []string{strings.Replace(head("\r\n", "Content-Length: "+n, "Transfer-Encoding: chunked"), "HTTP/1.1", "HTTP/1.0", 1) + body},
			[]int{400}},
		{"the second request of a connection", []string{head("\r\n", "Content-Length: "+n) + body,
			head("\r\n", "Content-Length: 4", "Transfer-Encoding: chunked") + chunked + smuggled}, []int{200, 400}},
		{"Content-Length alone keeps the connection", []string{head("\r\n", "Content-Length: "+n) + body, smuggled}, []int{200, 200}},
		{"chunked alone keeps the connection", []string{head("\r\n", "Transfer-Encoding: chunked") + chunked, smuggled}, []int{200, 200}},
		{"the field names inside a JSON body", []string{head("\r\n", "Content-Length: "+strconv.Itoa(len(tricky))) + tricky, smuggled},
			[]int{200, 200}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", s.http.Listener.Addr().String())
			require.NoError(t, err)
			defer conn.Close()
			require.NoError(t, conn.SetDeadline(time.Now().Add(30*time.Second)))
			br := bufio.NewReader(conn)
			for i, want := range tc.want {
				_, err = io.WriteString(conn, tc.send[i])
				require.NoError(t, err)
				resp, err := http.ReadResponse(br, nil)
				require.NoError(t, err, "response %d", i)
				b, err := io.ReadAll(resp.Body)
				require.NoError(t, err)
				_ = resp.Body.Close()
				require.Equal(t, want, resp.StatusCode, "response %d: %s", i, b)
				if want == http.StatusBadRequest {
					assert.True(t, resp.Close, "Connection: close")
					e := errorOf(t, b)
					assert.Equal(t, "ambiguous_framing", e.Code)
					assert.Equal(t, typeInvalidRequest, e.Type)
					_, err := br.ReadByte()
					assert.ErrorIs(t, err, io.EOF, "the server closed the connection; nothing behind the request was answered")
					return
				}
				assert.False(t, resp.Close, "the connection stays open")
			}
		})
	}
}

// TestHeadScanner: the scanner finds the same heads however the bytes
// are split between reads, one byte at a time included.
func TestHeadScanner(t *testing.T) {
	for _, tc := range []struct {
		name, stream string
		ambiguous    bool
	}{
		{"both", "POST / HTTP/1.1\r\nContent-Length: 4\r\nX-A: b\r\nTransfer-Encoding: chunked\r\n\r\n", true},
		{"both, mixed case, LF", "POST / HTTP/1.1\nCONTENT-length: 4\ntransfer-Encoding: chunked\n\n", true},
		{"one each in two heads", "POST / HTTP/1.1\r\nContent-Length: 2\r\n\r\nabPOST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", false},
		{"a request line after a body with no line end", "POST / HTTP/1.1\r\nContent-Length: 2\r\n\r\nabPOST / HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n", true},
		{"a field's value only", "POST / HTTP/1.1\r\nX-Note: Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n", false},
		{"no request line", "Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n", false},
		{"a long request line", "POST /" + strings.Repeat("a", 5000) + " HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 4\r\n\r\n", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, step := range []int{1, 2, 3, 7, 11, len(tc.stream)} {
				var h headScanner
				got := false
				for i := 0; i < len(tc.stream); i += step {
					got = h.feed([]byte(tc.stream[i:min(i+step, len(tc.stream))])) || got
				}
				assert.Equal(t, tc.ambiguous, got, "reads of %d bytes", step)
			}
		})
	}
}

// FuzzHeadScanner: the scanner never panics, and how the connection's
// bytes arrive (split at any point, as reads return them) never changes
// whether it finds an ambiguous head.
func FuzzHeadScanner(f *testing.F) {
	f.Add([]byte("POST / HTTP/1.1\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n"), uint8(7))
	f.Add([]byte("GET / HTTP/1.1\nHost: x\n\nPOST / HTTP/1.0\ntransfer-encoding: x\ncontent-length: 1\n\n"), uint8(1))
	f.Add([]byte("POST / HTTP/1.1\r\nContent-Length: 4\r\n\r\nabcd"), uint8(3))
	f.Fuzz(func(t *testing.T, data []byte, step uint8) {
		var whole headScanner
		want := whole.feed(data)
		var split headScanner
		got := false
		n := int(step%16) + 1
		for i := 0; i < len(data); i += n {
			got = split.feed(data[i:min(i+n, len(data))]) || got
		}
		if got != want {
			t.Fatalf("fed whole: %v; in pieces of %d: %v", want, n, got)
		}
	})
}
