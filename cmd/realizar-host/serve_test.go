package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/host"
	"github.com/realizar-host/realizar-host/internal/fixture"
	"github.com/realizar-host/realizar-host/internal/tenancy"
)

// serveModel writes a one-layer, 64-wide llama fixture.
func serveModel(t *testing.T) string {
	t.Helper()
	c := fixture.Tiny()
	c.Embd, c.FF, c.Layers, c.Heads, c.HeadsKV, c.Context = 64, 128, 1, 2, 1, 256
	vocab, err := fixture.LlamaVocab()
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "tiny.gguf")
	require.NoError(t, fixture.GenerateFile(path, c, vocab))
	return path
}

// syncBuffer is a bytes.Buffer safe for one writer and one reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) WriteString(x string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b.WriteString(x)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// logLines keeps serve's stderr in logs, line by line, and sends the
// address of the first line that matches listening to addr.
type logLines struct {
	logs      *syncBuffer
	addr      chan string
	listening *regexp.Regexp
	partial   []byte
}

func (w *logLines) Write(p []byte) (int, error) {
	w.partial = append(w.partial, p...)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := string(w.partial[:i])
		w.partial = w.partial[i+1:]
		w.logs.WriteString(line + "\n")
		if m := w.listening.FindStringSubmatch(line); m != nil {
			select {
			case w.addr <- m[1]:
			default:
			}
		}
	}
}

// startServe runs the binary's serve and returns its base URL once ready.
func startServe(t *testing.T, bin string, args ...string) (*exec.Cmd, string, *syncBuffer) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	logs := &syncBuffer{}
	addr := make(chan string, 1)
	// A Writer, not StderrPipe: Wait returns only once every line is
	// written here (a pipe's last lines could be lost to Wait).
	cmd.Stderr = &logLines{logs: logs, addr: addr, listening: regexp.MustCompile(`msg=listening addr=(\S+)`)}
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	var base string
	select {
	case a := <-addr:
		base = "http://" + a
	case <-time.After(30 * time.Second):
		t.Fatalf("serve did not listen: %s", logs)
	}
	require.Eventually(t, func() bool {
		resp, err := http.Get(base + "/ready")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 30*time.Second, 20*time.Millisecond)
	return cmd, base, logs
}

func post(t *testing.T, url, key, contentType string, body []byte) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest("POST", url, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", contentType)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, b
}

// TestServeBinary: serve with a tenants file and a plugin dir answers a
// completion, serves its metrics on --metrics-addr only, keeps an uploaded
// plugin across a restart and exits 0 on SIGTERM.
func TestServeBinary(t *testing.T) {
	bin := buildBinary(t)
	model := serveModel(t)
	dir := t.TempDir()
	tenants := filepath.Join(dir, "tenants.json")
	require.NoError(t, os.WriteFile(tenants, fmt.Appendf(nil,
		`{"tenants": [{"name": "acme", "key_sha256": [%q]}, {"name": "beta", "key_sha256": [%q]}]}`,
		tenancy.HashKey("sk-acme"), tenancy.HashKey("sk-beta")), 0o600))
	plugins := filepath.Join(dir, "plugins")
	greedy, err := os.ReadFile(filepath.Join("..", "..", "host", "testdata", "greedy.wasm"))
	require.NoError(t, err)

	cmd, base, logs := startServe(t, bin, "--model", model, "--tenants", tenants, "--plugin-dir", plugins, "--slots", "2",
		"--metrics-addr", "127.0.0.1:0")
	code, b := post(t, base+"/v1/plugins", "sk-acme", "application/wasm", greedy)
	require.Equal(t, http.StatusOK, code, string(b))
	var up struct{ ID string }
	require.NoError(t, json.Unmarshal(b, &up))
	req := []byte(`{"model": "tiny", "prompt": "Hello", "max_tokens": 4, "realizar": {"sampler": {"plugin": "` + up.ID + `"}}}`)
	code, first := post(t, base+"/v1/completions", "sk-acme", "application/json", req)
	require.Equal(t, http.StatusOK, code, string(first))
	code, _ = post(t, base+"/v1/completions", "sk-other", "application/json", req)
	assert.Equal(t, http.StatusUnauthorized, code)
	// A second tenant gets the second KV-cache slot, a forward of its own.
	code, b = post(t, base+"/v1/completions", "sk-beta", "application/json",
		[]byte(`{"prompt": "Hello", "max_tokens": 4, "temperature": 0}`))
	require.Equal(t, http.StatusOK, code, string(b))

	// The metrics, labelled by tenant, are on their own listener only.
	m := regexp.MustCompile(`msg="metrics listening" metrics_addr=(\S+)`).FindStringSubmatch(logs.String())
	require.NotNil(t, m, "the metrics listener is logged: %s", logs)
	for url, want := range map[string]int{base + "/metrics": http.StatusNotFound, "http://" + m[1] + "/metrics": http.StatusOK} {
		resp, err := http.Get(url)
		require.NoError(t, err)
		b, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		require.NoError(t, err)
		require.Equal(t, want, resp.StatusCode, url)
		if want == http.StatusOK {
			assert.Contains(t, string(b), `realizar_requests_total{endpoint="completions",outcome="ok",tenant="beta"} 1`)
		}
	}

	// Its listener is guarded: Content-Length with Transfer-Encoding is a
	// 400 that closes the connection (server.GuardListener).
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.SetDeadline(time.Now().Add(10*time.Second)))
	_, err = io.WriteString(conn, "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n"+
		"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /health HTTP/1.1\r\nHost: x\r\n\r\n")
	require.NoError(t, err)
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	_, err = io.ReadAll(resp.Body)
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	rest, err := io.ReadAll(br)
	require.NoError(t, err, "the connection is closed")
	assert.Empty(t, rest, "nothing behind the request is answered")

	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, cmd.Wait(), "serve did not exit 0 on SIGTERM: %s", logs)
	assert.Contains(t, logs.String(), "msg=stopped")

	// Restarted over the same directory, the plugin is still there.
	_, base, _ = startServe(t, bin, "--model", model, "--tenants", tenants, "--plugin-dir", plugins)
	code, again := post(t, base+"/v1/completions", "sk-acme", "application/json", req)
	require.Equal(t, http.StatusOK, code, string(again))
	var r1, r2 struct{ Choices []struct{ Text string } }
	require.NoError(t, json.Unmarshal(first, &r1))
	require.NoError(t, json.Unmarshal(again, &r2))
	assert.Equal(t, r1.Choices[0].Text, r2.Choices[0].Text)
}

func TestServeRefusesOpenAddressWithoutTenants(t *testing.T) {
	bin := buildBinary(t)
	_, stderr, code := runBinary(t, bin, "serve", "--model", "x.gguf", "--addr", "0.0.0.0:0")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "loopback only")
	for _, args := range [][]string{{"--slots", "-1"}, {"--parallel", "0"}, {"--batch-tokens", "0"}, {"--kv-memory", "-1"}} {
		_, stderr, code = runBinary(t, bin, append([]string{"serve", "--model", "x.gguf"}, args...)...)
		assert.Equal(t, exitUsage, code, "%v", args)
		assert.Contains(t, stderr, args[0]+" "+args[1], "%v", args)
	}
	_, stderr, code = runBinary(t, bin, "serve", "--model", "x.gguf", "--pooling", "bogus")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, `--pooling "bogus": choose mean, cls, last or none (embeddings off)`)
}

// TestServeShutdownCancelsAfterGrace: SIGTERM during a long stream exits 0
// once the grace period has passed, cancelling the stream.
func TestServeShutdownCancelsAfterGrace(t *testing.T) {
	bin := buildBinary(t)
	cmd, base, logs := startServe(t, bin, "--model", serveModel(t), "--grace", "50ms")
	req, err := http.NewRequest("POST", base+"/v1/completions", bytes.NewReader([]byte(
		`{"prompt": "Once", "max_tokens": 250, "stream": true, "top_k": 40, "logit_bias": {"2": -100}}`)))
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	_, err = r.ReadBytes('\n') // the stream has begun
	require.NoError(t, err)

	start := time.Now()
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, cmd.Wait(), "serve did not exit 0: %s", logs)
	assert.Less(t, time.Since(start), 5*time.Second)
	_, _ = io.Copy(io.Discard, r) // the stream ends, one way or the other
	assert.Contains(t, logs.String(), "msg=stopped")
}

// serve warns when a cache bound cannot hold the embedded grammar
// processor (it would be compiled for every request), and not at the
// defaults.
func TestWarnSmallCaches(t *testing.T) {
	for _, tt := range []struct {
		name             string
		module, dir      int64
		hasDir           bool
		warnings, absent []string
	}{
		{"defaults", 256 << 20, host.DefaultCompilationCacheDirBytes, true, nil, []string{"WARN"}},
		{"unbounded", 0, 0, true, nil, []string{"WARN"}},
		{"small module cache", 100_000, 0, true, []string{"--module-cache-bytes is smaller", "module_cache_bytes=100000"}, []string{"--compiled-dir-bytes"}},
		{"small compiled dir", 0, 10_000_000, true, []string{"--compiled-dir-bytes is smaller"}, []string{"--module-cache-bytes"}},
		{"no plugin dir", 0, 10_000_000, false, nil, []string{"WARN"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			warnSmallCaches(slog.New(slog.NewTextHandler(&b, nil)), tt.module, tt.dir, tt.hasDir)
			for _, w := range tt.warnings {
				assert.Contains(t, b.String(), w)
			}
			for _, w := range tt.absent {
				assert.NotContains(t, b.String(), w)
			}
		})
	}
}
