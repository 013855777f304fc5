package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSlowBodyCutOff: serve's http.Server cuts off a request whose body
// trickles in past --read-timeout (here 300 ms, for a body that would take
// 20 s), and closes an idle keep-alive connection after --idle-timeout,
// while a handler that runs longer than the read timeout after reading its
// body (a streamed turn) is not cut off.
func TestSlowBodyCutOff(t *testing.T) {
	const read, idle = 300 * time.Millisecond, 500 * time.Millisecond
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if r.URL.Path == "/slow" {
			select {
			case <-time.After(3 * read):
			case <-r.Context().Done():
				http.Error(w, "cancelled", http.StatusServiceUnavailable)
				return
			}
		}
		_, _ = io.WriteString(w, "ok")
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	hs := newHTTPServer(h, context.Background(), read, idle)
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { _ = hs.Close() })

	t.Run("slow body", func(t *testing.T) {
		conn, err := net.Dial("tcp", ln.Addr().String())
		require.NoError(t, err)
		defer conn.Close()
		_, err = fmt.Fprintf(conn, "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n")
		require.NoError(t, err)
		start := time.Now()
		done := make(chan struct{})
		go func() { // one byte every 200 ms: 20 s for the body
			defer close(done)
			for range 100 {
				if _, err := conn.Write([]byte("a")); err != nil {
					return
				}
				time.Sleep(200 * time.Millisecond)
			}
		}()
		_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err == nil { // the handler saw its read fail
			assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
			_ = resp.Body.Close()
		}
		assert.Less(t, time.Since(start), 2*time.Second)
		_ = conn.Close()
		<-done
	})
	t.Run("long handler after its body", func(t *testing.T) {
		resp, err := http.Post("http://"+ln.Addr().String()+"/slow", "application/json", strings.NewReader("{}"))
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		assert.Equal(t, http.StatusOK, resp.StatusCode, string(b))
	})
	t.Run("idle connection", func(t *testing.T) {
		conn, err := net.Dial("tcp", ln.Addr().String())
		require.NoError(t, err)
		defer conn.Close()
		_, err = fmt.Fprintf(conn, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		require.NoError(t, err)
		br := bufio.NewReader(conn)
		resp, err := http.ReadResponse(br, nil)
		require.NoError(t, err)
		_, _ = io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		start := time.Now()
		_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, err = br.ReadByte() // the server closes the idle connection
		assert.ErrorIs(t, err, io.EOF)
		assert.Less(t, time.Since(start), 2*time.Second)
	})
}
