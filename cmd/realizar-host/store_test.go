package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/internal/pgtest"
	"github.com/realizar-host/realizar-host/internal/server"
	"github.com/realizar-host/realizar-host/internal/tenancy"
)

// keyLine is a new API key as tenants add and rotate print it.
var keyLine = regexp.MustCompile(`^[A-Za-z0-9_-]+\n$`)

// tenantsCmd runs realizar-host tenants with --store url.
func tenantsCmd(t *testing.T, bin, url string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return runBinary(t, bin, append(append([]string{"tenants"}, args...), "--store", url)...)
}

// newTenant adds a tenant and returns its key.
func newTenant(t *testing.T, bin, url, name string) string {
	t.Helper()
	out, errs, code := tenantsCmd(t, bin, url, "add", name)
	require.Equal(t, 0, code, errs)
	require.Regexp(t, keyLine, out)
	key := strings.TrimSpace(out)
	assert.Contains(t, errs, tenancy.HashKey(key), "stderr names the key's sha256")
	return key
}

func send(t *testing.T, method, url, key string, body []byte) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, b
}

// within polls f every 10 ms until it is true or d has passed, and
// returns how long it took.
func within(t *testing.T, d time.Duration, what string, f func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !f() {
		if time.Since(start) > d {
			t.Fatalf("%s: not within %v", what, d)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return time.Since(start)
}

// TestServeReplicas: two serve processes share one PostgreSQL. An upload
// through A is usable through B within a second, a delete through B is a
// 404 through A, another tenant's plugin is a 404 on either, killing A
// mid-stream leaves B serving, and PostgreSQL stopped gives clean 503s for
// what needs it, then recovery with nothing lost.
func TestServeReplicas(t *testing.T) {
	pg := pgtest.Shared(t)
	url := pg.NewDatabase(t)
	bin := e2eBinary(t)
	model := serveModel(t)

	acme := newTenant(t, bin, url, "acme")
	beta := newTenant(t, bin, url, "beta")
	_, errs, code := tenantsCmd(t, bin, url, "add", "acme")
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, errs, "tenant exists")
	_, errs, code = runBinary(t, bin, "serve", "--model", model, "--store", url, "--tenants", "x.json")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errs, "excludes --tenants and --plugin-dir")

	a, baseA, logsA := startServe(t, bin, "--model", model, "--store", url)
	_, baseB, logsB := startServe(t, bin, "--model", model, "--store", url)
	greedy, err := os.ReadFile(filepath.Join("..", "..", "host", "testdata", "greedy.wasm"))
	require.NoError(t, err)

	code, b := send(t, "POST", baseA+"/v1/plugins", acme, greedy)
	require.Equal(t, http.StatusOK, code, string(b))
	var up struct{ ID string }
	require.NoError(t, json.Unmarshal(b, &up))
	withPlugin := []byte(`{"prompt": "Hello", "max_tokens": 3, "realizar": {"sampler": {"plugin": "` + up.ID + `"}}}`)
	seen := within(t, time.Second, "upload through A usable through B", func() bool {
		code, _ := send(t, "POST", baseB+"/v1/completions", acme, withPlugin)
		return code == http.StatusOK
	})
	t.Logf("upload through A usable through B after %v", seen)
	code, b = send(t, "GET", baseB+"/v1/plugins", acme, nil)
	require.Equal(t, http.StatusOK, code)
	assert.Contains(t, string(b), `"name":"greedy"`)
	for _, base := range []string{baseA, baseB} {
		code, b = send(t, "POST", base+"/v1/completions", beta, withPlugin)
		assert.Equal(t, http.StatusNotFound, code, "another tenant's plugin: %s", b)
	}

	code, b = send(t, "DELETE", baseB+"/v1/plugins/"+up.ID, acme, nil)
	require.Equal(t, http.StatusOK, code, string(b))
	gone := within(t, time.Second, "delete through B is a 404 through A", func() bool {
		code, _ := send(t, "POST", baseA+"/v1/completions", acme, withPlugin)
		return code == http.StatusNotFound
	})
	t.Logf("delete through B a 404 through A after %v", gone)

	// A tenant added now is let in by both within a second.
	gamma := newTenant(t, bin, url, "gamma")
	plain := []byte(`{"prompt": "Hello", "max_tokens": 2, "temperature": 0}`)
	within(t, time.Second, "a new tenant admitted", func() bool {
		code, _ := send(t, "POST", baseA+"/v1/completions", gamma, plain)
		return code == http.StatusOK
	})

	// A is killed mid-stream; B goes on serving.
	req, err := http.NewRequest("POST", baseA+"/v1/completions", bytes.NewReader(
		[]byte(`{"prompt": "Once", "max_tokens": 200, "stream": true, "logit_bias": {"2": -100}}`)))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+acme)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_, err = bufio.NewReader(resp.Body).ReadBytes('\n')
	require.NoError(t, err)
	require.NoError(t, a.Process.Kill())
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	code, b = send(t, "POST", baseB+"/v1/completions", acme, plain)
	require.Equal(t, http.StatusOK, code, "B after A was killed: %s %s", b, logsA)

	// The database goes away: what needs it is a clean 503, the rest is served.
	code, b = send(t, "POST", baseB+"/v1/plugins", beta, greedy)
	require.Equal(t, http.StatusOK, code, string(b))
	require.NoError(t, pg.Stop())
	restarted := false
	defer func() {
		if !restarted {
			_ = pg.StartAgain()
		}
	}()
	within(t, 5*time.Second, "upload refused with a 503", func() bool {
		code, b = send(t, "POST", baseB+"/v1/plugins", acme, greedy)
		return code == http.StatusServiceUnavailable
	})
	var e struct{ Error server.APIError }
	require.NoError(t, json.Unmarshal(b, &e), string(b))
	assert.Equal(t, "store_unavailable", e.Error.Code)
	code, b = send(t, "POST", baseB+"/v1/completions", beta, []byte(`{"prompt": "Hello", "max_tokens": 2, "realizar": {"sampler": {"plugin": "`+up.ID+`"}}}`))
	assert.Equal(t, http.StatusOK, code, "a cached plugin is served without the database: %s", b)
	code, _ = send(t, "GET", baseB+"/v1/plugins", beta, nil)
	assert.Equal(t, http.StatusOK, code, "the listing is cached")
	code, b = send(t, "DELETE", baseB+"/v1/plugins/"+up.ID, beta, nil)
	assert.Equal(t, http.StatusServiceUnavailable, code, string(b))

	require.NoError(t, pg.StartAgain())
	restarted = true
	back := within(t, 10*time.Second, "upload after the database is back", func() bool {
		code, _ := send(t, "POST", baseB+"/v1/plugins", acme, greedy)
		return code == http.StatusOK
	})
	t.Logf("recovered %v after PostgreSQL restarted", back)
	code, b = send(t, "GET", baseB+"/v1/plugins", beta, nil)
	require.Equal(t, http.StatusOK, code)
	assert.Contains(t, string(b), up.ID, "nothing lost: %s", logsB)
}

// TestTenantsCommands: list, rotate, revoke, limits, import and remove,
// and their errors.
func TestTenantsCommands(t *testing.T) {
	pg := pgtest.Shared(t)
	url := pg.NewDatabase(t)
	bin := e2eBinary(t)
	_, errs, code := runBinary(t, bin, "tenants", "list")
	assert.Equal(t, exitUsage, code, "no store: %s", errs)

	first := newTenant(t, bin, url, "acme")
	out, errs, code := tenantsCmd(t, bin, url, "rotate", "acme")
	require.Equal(t, 0, code, errs)
	require.Regexp(t, keyLine, out)
	second := strings.TrimSpace(out)
	assert.NotEqual(t, first, second)
	_, errs, code = tenantsCmd(t, bin, url, "revoke", "acme", tenancy.HashKey("not-a-key"))
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, errs, "no such key")
	_, errs, code = tenantsCmd(t, bin, url, "revoke", "acme", tenancy.HashKey(first))
	require.Equal(t, 0, code, errs)
	_, errs, code = tenantsCmd(t, bin, url, "limits", "acme", `{"max_concurrent": 3, "max_plugins": 2}`)
	require.Equal(t, 0, code, errs)
	_, errs, code = tenantsCmd(t, bin, url, "limits", "acme", `{"max_concurent": 3}`)
	assert.Equal(t, exitUsage, code, "a misspelt field: %s", errs)
	_, _, code = tenantsCmd(t, bin, url, "limits", "nobody", `{}`)
	assert.Equal(t, exitFailure, code)

	file := filepath.Join(t.TempDir(), "tenants.json")
	require.NoError(t, os.WriteFile(file, fmt.Appendf(nil, `{"defaults": {"max_concurrent": 2},
		"tenants": [{"name": "b", "key_sha256": [%q]}, {"name": "c", "key_sha256": [%q]}]}`,
		tenancy.HashKey("kb"), tenancy.HashKey("kc")), 0o600))
	_, errs, code = tenantsCmd(t, bin, url, "import", file)
	require.Equal(t, 0, code, errs)
	_, errs, code = tenantsCmd(t, bin, url, "import", file)
	assert.Equal(t, exitFailure, code, "imported twice: %s", errs)

	out, errs, code = tenantsCmd(t, bin, url, "list", "--json")
	require.Equal(t, 0, code, errs)
	var list []struct {
		Name      string         `json:"name"`
		Limits    tenancy.Limits `json:"limits"`
		KeySHA256 []string       `json:"key_sha256"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &list))
	require.Len(t, list, 3)
	assert.Equal(t, "acme", list[0].Name)
	assert.Equal(t, []string{tenancy.HashKey(second)}, list[0].KeySHA256)
	assert.Equal(t, 3, list[0].Limits.MaxConcurrent)
	assert.Equal(t, tenancy.Limits{MaxConcurrent: 2}, list[1].Limits, "import stores what the file set, not the built-in defaults")

	_, errs, code = tenantsCmd(t, bin, url, "remove", "b")
	require.Equal(t, 0, code, errs)
	_, errs, code = tenantsCmd(t, bin, url, "remove", "b")
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, errs, "no such tenant")
	out, _, _ = tenantsCmd(t, bin, url, "list")
	assert.NotContains(t, out, "b\t")
	assert.Contains(t, out, "acme\tkeys 1")
}

// TestREADMEReplicaBlock runs the README's "Running several replicas"
// commands as written, in order, against a fresh database, with the README's
// example tenants file as tenants.json (the serve line and the export left
// out: the test sets REALIZAR_STORE).
func TestREADMEReplicaBlock(t *testing.T) {
	pg := pgtest.Shared(t)
	url := pg.NewDatabase(t)
	bin := e2eBinary(t)
	b, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	_, sec, ok := strings.Cut(string(b), "\n## Running several replicas\n")
	require.True(t, ok)
	_, block, ok := strings.Cut(sec, "```sh\n")
	require.True(t, ok)
	block, _, _ = strings.Cut(block, "```")
	var script []string
	for _, line := range strings.Split(block, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "export ") ||
			strings.HasPrefix(line, "realizar-host serve ") {
			continue
		}
		require.True(t, strings.HasPrefix(line, "realizar-host tenants "), "a README line the test does not know: %s", line)
		script = append(script, line)
	}
	require.Len(t, script, 7)

	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tenants.json"), []byte(readmeTenantsFile(t)), 0o600))
	require.NoError(t, os.Symlink(bin, filepath.Join(dir, "realizar-host")))
	cmd := exec.Command("bash", "-eu", "-o", "pipefail", "-c", strings.Join(script, "\n"))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"), "REALIZAR_STORE="+url)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)

	list, errs, code := tenantsCmd(t, bin, url, "list")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, list, "acme\tkeys 1")
	assert.Contains(t, list, "initech\tkeys 1")
	assert.NotContains(t, list, "globex")
	for _, f := range []string{"initech.key", "acme-2.key"} {
		key, err := os.ReadFile(filepath.Join(dir, f))
		require.NoError(t, err)
		assert.Regexp(t, keyLine, string(key), f)
	}
}
