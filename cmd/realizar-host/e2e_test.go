package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/gguf"
	"github.com/realizar-host/realizar-host/internal/pgtest"
	"github.com/realizar-host/realizar-host/internal/tenancy"
	"github.com/realizar-host/realizar-host/internal/testenv"
)

// End-to-end tests: they build the realizar-host binary and run it on the
// real stories260K model (models/, committed) and on small synthetic files.

// storiesText is llama.cpp's greedy continuation of "Once upon a time" on
// stories260K, up to the end of its first paragraph (models/README.md).
const storiesText = "Once upon a time, there was a little girl named Lily. She loved to play outside in the park. " +
	"One day, she saw a big, red ball. She wanted to play with it, but it was too high."

var (
	binOnce sync.Once
	binPath string
	binErr  error
	binDir  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.StopShared()
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// e2eBinary builds realizar-host once for every test of the package.
func e2eBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		if binDir, binErr = os.MkdirTemp("", "realizar-host-e2e"); binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "realizar-host")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %v: %s", err, out)
		}
	})
	require.NoError(t, binErr)
	return binPath
}

// storiesModel returns the path of models/stories260K.gguf.
func storiesModel(t *testing.T) string {
	t.Helper()
	return testenv.Stories()
}

// runInLimit bounds one run of the binary in runIn: every case runs in
// seconds; a child still running after this is hung.
const runInLimit = 3 * time.Minute

// runIn runs the binary with stdin and returns stdout, stderr and the exit
// status.
func runIn(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), runInLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, e2eBinary(t), args...)
	// A child that outlives runInLimit gets SIGQUIT: the Go runtime prints
	// every goroutine's stack to stderr, so a hang is reported with where
	// it hung instead of stalling the package until go test's own timeout.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGQUIT) }
	cmd.WaitDelay = 10 * time.Second
	cmd.Env = append(os.Environ(), envModel+"=")
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	require.NoError(t, ctx.Err(), "realizar-host %v ran past %v; its stacks:\n%s", args, runInLimit, errb.String())
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return out.String(), errb.String(), code
}

// statsRe matches run's stats line.
var statsRe = regexp.MustCompile(`^prompt (\d+) tok \(reused (\d+)\) \| generated (\d+) tok \| prefill .* tok/s \| decode .* tok/s \| policies .* µs/step \| stop ([a-z-]+) \| seed (\d+)$`)

func TestRunGreedyStories(t *testing.T) {
	model := storiesModel(t)
	t.Run("llama.cpp text", func(t *testing.T) {
		out, stderr, code := runIn(t, "", "run", "-m", model, "-p", "Once upon a time", "-n", "60",
			"--sampler", "greedy", "--echo", "--seed", "3")
		require.Equal(t, 0, code, stderr)
		assert.True(t, strings.HasPrefix(out, storiesText), "stdout: %q", out)
		m := statsRe.FindStringSubmatch(strings.TrimSpace(stderr))
		require.NotNil(t, m, "stderr: %q", stderr)
		assert.Equal(t, []string{"5", "0", "60", "max-tokens", "3"}, m[1:])
	})
	t.Run("stdin prompt and stop string", func(t *testing.T) {
		out, stderr, code := runIn(t, "Once upon a time", "run", "-m", model, "-n", "200",
			"--sampler", "greedy", "--stop-string", "\n")
		require.Equal(t, 0, code, stderr)
		assert.Equal(t, strings.TrimPrefix(storiesText, "Once upon a time"), out)
		assert.Contains(t, stderr, "| stop stop-policy |")
	})
	t.Run("stop string across tokens is never printed", func(t *testing.T) {
		// " park" is one token after "in the"; "the park" spans two.
		for _, stop := range []string{"park", "the park", "Lily. She"} {
			out, stderr, code := runIn(t, "", "run", "-m", model, "-p", "Once upon a time", "-n", "60",
				"--sampler", "greedy", "--stop-string", stop)
			require.Equal(t, 0, code, stderr)
			full := strings.TrimPrefix(storiesText, "Once upon a time")
			assert.Equal(t, full[:strings.Index(full, stop)], out, "stop %q", stop)
			assert.NotContains(t, out, stop)
		}
	})
	t.Run("the earliest of several stop strings wins", func(t *testing.T) {
		out, stderr, code := runIn(t, "", "run", "-m", model, "-p", "Once upon a time", "-n", "60",
			"--sampler", "greedy", "--stop-string", "red ball", "--stop-string", "girl")
		require.Equal(t, 0, code, stderr)
		full := strings.TrimPrefix(storiesText, "Once upon a time")
		assert.Equal(t, full[:strings.Index(full, "girl")], out)
	})
}

// TestRunProcessorAndLog chains a processor configured by a manifest
// (banning the piece " there") before a sampler loaded from a file (the
// test guest, which logs a line at init) and prints the plugin logs.
func TestRunProcessorAndLog(t *testing.T) {
	model := storiesModel(t)
	manifest := filepath.Join(t.TempDir(), "ban.json")
	require.NoError(t, os.WriteFile(manifest, []byte(`{"path": "`+mustAbs(t, "../../host/testdata/ban.wasm")+
		`", "config": {"ban": " there"}}`), 0o644))
	out, stderr, code := runIn(t, "", "run", "-m", model, "-p", "Once upon a time", "-n", "8",
		"--sampler", "../../host/testdata/greedy.wasm", "--processor", manifest, "--plugin-log")
	require.Equal(t, 0, code, stderr)
	assert.True(t, strings.HasPrefix(out, ","), out)
	assert.NotContains(t, out, " there")
	assert.Contains(t, stderr, "[sampler greedy 1.0.0 (sha256 ")
}

// TestRunStandard: the default sampler is the embedded standard chain; its
// flags are sugar for its config, and a seed reproduces a sampled run.
func TestRunStandard(t *testing.T) {
	model := storiesModel(t)
	out, stderr, code := runIn(t, "", "run", "-m", model, "-p", "Once upon a time", "-n", "60", "--temperature", "0", "--echo")
	require.Equal(t, 0, code, stderr)
	assert.True(t, strings.HasPrefix(out, storiesText), "temperature 0 is greedy: %q", out)

	sampled := []string{"run", "-m", model, "-p", "Once upon a time", "-n", "40", "--seed", "42", "--top-k", "20", "--json"}
	first, stderr, code := runIn(t, "", sampled...)
	require.Equal(t, 0, code, stderr)
	second, _, _ := runIn(t, "", sampled...)
	var a, b turnJSON
	require.NoError(t, json.Unmarshal([]byte(first), &a))
	require.NoError(t, json.Unmarshal([]byte(second), &b))
	assert.Equal(t, "standard", a.Sampler)
	assert.Equal(t, a.Tokens, b.Tokens, "same seed, same tokens")
	assert.Equal(t, uint64(42), a.Seed)
}

// TestRunMirostatAndDRY: --mirostat 2 is the mirostat-v2 sampler,
// --mirostat 1 the standard sampler's Mirostat (a target of 0 bits keeps
// one candidate: the greedy text); --dry-multiplier loads the dry
// processor, except with a --samplers order without dry.
func TestRunMirostatAndDRY(t *testing.T) {
	model := storiesModel(t)
	text := func(args ...string) string {
		t.Helper()
		out, stderr, code := runIn(t, "", append([]string{"run", "-m", model, "-p", "Once upon a time", "-n", "40"}, args...)...)
		require.Equal(t, 0, code, stderr)
		return out
	}
	greedy := text("--temperature", "0")
	assert.Equal(t, greedy, text("--mirostat", "1", "--mirostat-ent", "0", "--mirostat-lr", "1", "--temperature", "1", "--seed", "3"))
	dry := []string{"--temperature", "0", "--dry-multiplier", "100", "--dry-allowed-length", "0"}
	assert.NotEqual(t, greedy, text(dry...), "DRY changes the greedy text")
	assert.Equal(t, greedy, text(append(dry, "--samplers", "top_k;temperature")...), "no dry in the order: no DRY")
	var doc turnJSON
	require.NoError(t, json.Unmarshal([]byte(text("--mirostat", "2", "--mirostat-ent", "4", "--top-k", "5", "--seed", "1", "--json")), &doc))
	assert.Equal(t, "mirostat-v2", doc.Sampler)
	require.NoError(t, json.Unmarshal([]byte(text(append(dry, "--json")...)), &doc))
	require.Len(t, doc.Policies, 2, "the dry processor, then the sampler")
	assert.True(t, strings.HasPrefix(doc.Policies[0], "processor dry "), doc.Policies[0])
	assert.True(t, strings.HasPrefix(doc.Policies[1], "sampler standard "), doc.Policies[1])
}

func TestRunJSON(t *testing.T) {
	model := storiesModel(t)
	out, stderr, code := runIn(t, "", "run", "-m", model, "-p", "Once upon a time", "-n", "8",
		"--sampler", "greedy", "--seed", "11", "--json", "--logprobs", "2")
	require.Equal(t, 0, code, stderr)
	var doc turnJSON
	require.NoError(t, json.Unmarshal([]byte(out), &doc), out)
	assert.Equal(t, ", there was a little girl", doc.Text)
	assert.Len(t, doc.Tokens, 8)
	assert.Equal(t, 5, doc.PromptTokens)
	assert.Equal(t, "max-tokens", doc.StopReason)
	assert.Equal(t, uint64(11), doc.Seed)
	assert.Equal(t, "greedy", doc.Sampler)
	assert.Equal(t, 7, doc.Timings.DecodeTokens)
	require.Len(t, doc.Logprobs, 8)
	for i, lp := range doc.Logprobs {
		assert.Equal(t, doc.Tokens[i], lp.Token)
		require.Len(t, lp.Top, 2)
		assert.Equal(t, lp.Token, lp.Top[0].Token, "greedy picks the most likely token")
		assert.LessOrEqual(t, lp.Logprob, float32(0))
	}
	assert.Empty(t, stderr, "--json prints nothing else")
}

// TestRunInterrupt sends SIGINT once text is streaming: the turn stops, its
// partial text and stats are printed and the exit status is 130.
func TestRunInterrupt(t *testing.T) {
	model := storiesModel(t)
	cmd := exec.Command(e2eBinary(t), "run", "-m", model, "-p", "Once upon a time", "-n", "2000",
		"--sampler", "greedy", "--ignore-eos")
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	r := bufio.NewReader(stdout)
	first, err := r.ReadString('.') // the first sentence has streamed
	require.NoError(t, err)
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	rest, _ := io.ReadAll(r)
	err = cmd.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "stderr: %s", stderr.String())
	assert.Equal(t, exitInterrupted, ee.ExitCode())
	out := first + string(rest)
	assert.True(t, strings.HasPrefix(out, ", there was a little girl named Lily."), out)
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	require.Len(t, lines, 2, stderr.String())
	m := statsRe.FindStringSubmatch(lines[0])
	require.NotNil(t, m, lines[0])
	assert.Equal(t, "cancelled", m[4])
	n, _ := strconv.Atoi(m[3])
	assert.Less(t, n, 2000)
	assert.Equal(t, "realizar-host: interrupted", lines[1])
}

func TestChatReusesPrefix(t *testing.T) {
	model := storiesModel(t)
	out, stderr, code := runIn(t, "Hello there\nTell me a story\n/reset\nHi\n/exit\nnever read\n",
		"chat", "-m", model, "-n", "16", "--sampler", "greedy", "--seed", "1")
	require.Equal(t, 0, code, stderr)
	var stats [][]string
	for line := range strings.SplitSeq(stderr, "\n") {
		if m := statsRe.FindStringSubmatch(line); m != nil {
			stats = append(stats, m)
		}
	}
	require.Len(t, stats, 3, stderr)
	prompt1, _ := strconv.Atoi(stats[0][1])
	gen1, _ := strconv.Atoi(stats[0][3])
	reused2, _ := strconv.Atoi(stats[1][2])
	assert.Equal(t, "0", stats[0][2], "the first turn reuses nothing")
	assert.Equal(t, prompt1+gen1-1, reused2, "the second turn reuses the first turn's prompt and reply")
	prompt3, _ := strconv.Atoi(stats[2][1])
	reused3, _ := strconv.Atoi(stats[2][2])
	assert.Less(t, reused3, prompt3, "/reset starts a new conversation: only the shared template prefix is reused")
	assert.Contains(t, stderr, "(conversation reset)")
	replies := strings.Split(strings.TrimRight(out, "\n"), "\n")
	require.GreaterOrEqual(t, len(replies), 3, "each reply ends its line: %q", out)

	// The reply after /reset, which reused a prefix, equals the reply of a
	// chat that starts with that message.
	fresh, stderr, code := runIn(t, "Hi\n/exit\n", "chat", "-m", model, "-n", "16", "--sampler", "greedy", "--seed", "1")
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, strings.TrimRight(fresh, "\n"), replies[len(replies)-1])
}

func TestPerplexityAndBench(t *testing.T) {
	model := storiesModel(t)
	text := filepath.Join(t.TempDir(), "text.txt")
	require.NoError(t, os.WriteFile(text, []byte(storiesText), 0o644))
	out, stderr, code := runIn(t, "", "perplexity", "-m", model, "--file", text, "--json")
	require.Equal(t, 0, code, stderr)
	var ppl pplResult
	require.NoError(t, json.Unmarshal([]byte(out), &ppl))
	assert.Equal(t, 1, ppl.Chunks)
	assert.Equal(t, ppl.Tokens-1, ppl.Scored)
	// The model's own greedy text is very likely under it.
	assert.Greater(t, ppl.Perplexity, 1.0)
	assert.Less(t, ppl.Perplexity, 3.0)

	// Nonsense is a usage error, never "perplexity NaN over 0 tokens".
	empty := filepath.Join(t.TempDir(), "empty.txt")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--file", text, "--ctx-size", "1"}, exitUsage, "--ctx-size 1 leaves no token to predict"},
		{[]string{"--file", text, "--ctx-size", "-1"}, exitUsage, "--ctx-size -1 is negative"},
		{[]string{"--file", empty}, exitBadFile, "nothing to score"},
	} {
		out, stderr, code := runIn(t, "", append([]string{"perplexity", "-m", model}, tt.args...)...)
		assert.Equal(t, tt.code, code, "%v: %s", tt.args, stderr)
		assert.Contains(t, stderr, tt.want, tt.args)
		assert.NotContains(t, out, "NaN", tt.args)
	}

	out, stderr, code = runIn(t, "", "bench", "-m", model, "--prompt-tokens", "16", "--gen-tokens", "8",
		"--repetitions", "3", "--json")
	require.Equal(t, 0, code, stderr)
	var b benchResult
	require.NoError(t, json.Unmarshal([]byte(out), &b))
	assert.Len(t, b.Runs, 3)
	assert.Greater(t, b.Prefill.Median, 0.0)
	assert.Greater(t, b.Decode.Median, 0.0)
	assert.LessOrEqual(t, b.Decode.Min, b.Decode.Median)
	assert.GreaterOrEqual(t, b.Decode.Max, b.Decode.Median)
	assert.Regexp(t, `^cpu-`, b.Backend, "the backend's name, not the engine's notice line")

	out, stderr, code = runIn(t, "", "bench", "-m", model, "--prompt-tokens", "8", "--gen-tokens", "4", "--repetitions", "1")
	require.Equal(t, 0, code, stderr)
	assert.Regexp(t, `^\S+stories260K\.gguf \| backend cpu-\S+ \| 1 run\n`, out)
}

// stories260K has no llama.rope.freq_base: inspect shows the default the
// forward applies, and says it is one.
func TestInspectDefaultRopeBase(t *testing.T) {
	model := storiesModel(t)
	out, stderr, code := runIn(t, "", "inspect", model)
	require.Equal(t, 0, code, stderr)
	assert.Regexp(t, `(?m)^rope_freq_base:\s+10000 \(default: the file has no llama\.rope\.freq_base; llama\.cpp's default applies\)$`, out)
	out, stderr, code = runIn(t, "", "inspect", model, "--json")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, `"rope_freq_base_default": true`)
}

func TestInspectTokens(t *testing.T) {
	model := storiesModel(t)
	out, stderr, code := runIn(t, "", "inspect", model, "--tokens", "Once upon a time", "--json")
	require.Equal(t, 0, code, stderr)
	var doc struct{ Tokens []tokenJSON }
	require.NoError(t, json.Unmarshal([]byte(out), &doc))
	assert.Equal(t, []tokenJSON{{1, "<s>"}, {403, " Once"}, {407, " upon"}, {261, " a"}, {378, " time"}}, doc.Tokens)
	out, _, code = runIn(t, "", "inspect", model, "--tokens", "Once")
	require.Equal(t, 0, code)
	assert.Regexp(t, `(?m)^\s*403\s+" Once"$`, out)
}

func TestPluginCheck(t *testing.T) {
	out, stderr, code := runIn(t, "", "plugin", "check", "../../host/testdata/greedy.wasm", "--steps", "4", "--vocab", "1000")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "ok: sampler greedy 1.0.0 (ABI v1)")
	assert.Contains(t, out, "sha256: ")
	assert.Contains(t, out, "4 steps at vocab 1000")

	out, stderr, code = runIn(t, "", "plugin", "check", "../../host/testdata/stopstr.wasm", "--config", `{"stop":"t1"}`, "--json")
	require.Equal(t, 0, code, stderr)
	var rep checkReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Equal(t, "stop", rep.Meta.Kind)
	assert.Len(t, rep.SHA256, 64)
	assert.Equal(t, uint32(1), rep.MemoryPages)

	// An embedded policy by name, as run takes it.
	out, stderr, code = runIn(t, "", "plugin", "check", "standard", "--config", `{"top_k":5}`, "--steps", "4")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "ok: sampler standard 1.0.0 (ABI v1)")
}

// TestRunPromptFromStdin: a piped prompt loses its trailing newline, so
// echo TEXT | run gives the tokens (and the text) of --prompt TEXT; with
// --prompt given, stdin is not read.
func TestRunPromptFromStdin(t *testing.T) {
	model := storiesModel(t)
	args := []string{"run", "-m", model, "-n", "4", "--sampler", "greedy", "--json"}
	var docs []turnJSON
	for _, in := range []struct {
		stdin string
		args  []string
	}{
		{"", []string{"-p", "Once upon a time"}},
		{"Once upon a time\n", nil},
		{"Once upon a time\r\n", nil},
		{"ignored text\n", []string{"-p", "Once upon a time"}},
	} {
		out, stderr, code := runIn(t, in.stdin, append(args, in.args...)...)
		require.Equal(t, 0, code, stderr)
		var doc turnJSON
		require.NoError(t, json.Unmarshal([]byte(out), &doc), out)
		docs = append(docs, doc)
	}
	for i, doc := range docs {
		assert.Equal(t, 5, doc.PromptTokens, "case %d", i)
		assert.Equal(t, docs[0].Text, doc.Text, "case %d", i)
	}
}

// rewriteStories writes a copy of stories260K with edit applied to its
// metadata and tensors.
func rewriteStories(t *testing.T, model string, edit func(kv []gguf.KV, ts []gguf.Tensor)) string {
	t.Helper()
	f, err := gguf.Open(model)
	require.NoError(t, err)
	defer f.Close()
	kv := append([]gguf.KV(nil), f.KV...)
	var ts []gguf.Tensor
	for _, ti := range f.Tensors {
		data, err := f.TensorData(ti.Name)
		require.NoError(t, err)
		ts = append(ts, gguf.Tensor{Name: ti.Name, Type: ti.Type, Dims: ti.Dims, Data: data})
	}
	edit(kv, ts)
	out := filepath.Join(t.TempDir(), "edited.gguf")
	require.NoError(t, gguf.WriteFile(out, kv, ts))
	return out
}

// TestRunErrors: each failure prints one line naming its cause and exits
// with its documented status.
func TestRunErrors(t *testing.T) {
	model := storiesModel(t)
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.gguf")
	require.NoError(t, os.WriteFile(garbage, []byte("definitely not a GGUF file"), 0o644))
	mamba := rewriteStories(t, model, func(kv []gguf.KV, _ []gguf.Tensor) {
		for i := range kv {
			if kv[i].Key == gguf.KeyArchitecture {
				kv[i].Value = "mamba"
			}
		}
	})
	int8 := rewriteStories(t, model, func(_ []gguf.KV, ts []gguf.Tensor) {
		for i := range ts {
			if ts[i].Name == "blk.0.attn_q.weight" {
				ts[i].Type, ts[i].Data = gguf.TypeI8, make([]byte, ts[i].Dims[0]*ts[i].Dims[1])
			}
		}
	})
	manifest := filepath.Join(dir, "stop.json")
	require.NoError(t, os.WriteFile(manifest, []byte(`{"path": "`+mustAbs(t, "../../host/testdata/stopstr.wasm")+`", "config": {"stop": "x"}}`), 0o644))
	badManifest := filepath.Join(dir, "list.json")
	require.NoError(t, os.WriteFile(badManifest, []byte(`[]`), 0o644))
	long := strings.Repeat("Once upon a time ", 20)

	run := []string{"run", "-p", "Once upon a time", "-n", "4"}
	absentText := filepath.Join(dir, "absent.txt")
	tests := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"no model", run, exitUsage, "no model: pass --model"},
		{"model is a directory", append(run, "-m", dir), exitBadFile, dir + " is a directory, not a GGUF file"},
		{"missing prompt file", []string{"run", "-m", model, "--prompt-file", absentText}, exitBadFile,
			"--prompt-file: open " + absentText + ": no such file"},
		{"empty prompt", append(run, "-m", model, "-p", ""), exitUsage, "--prompt is empty"},
		{"sampling flag with greedy", append(run, "-m", model, "--sampler", "greedy", "--temperature", "0.5"), exitUsage,
			"--temperature applies to the standard sampler only; the embedded greedy sampler takes no sampling parameters"},
		{"top-p out of range", append(run, "-m", model, "--top-p", "5"), exitUsage, "--top-p 5: must be in [0, 1]"},
		{"negative top-k", append(run, "-m", model, "--top-k", "-1"), exitUsage, "--top-k -1: must be >= 0"},
		{"negative temperature", append(run, "-m", model, "--temperature", "-1"), exitUsage, "--temperature -1: must be >= 0"},
		{"presence-penalty out of range", append(run, "-m", model, "--presence-penalty", "3"), exitUsage,
			"--presence-penalty 3: must be in [-2, 2]"},
		{"xtc-threshold out of range", append(run, "-m", model, "--xtc-threshold", "0.6"), exitUsage,
			"--xtc-threshold 0.6: must be in [0, 0.5]"},
		{"min-p out of range", append(run, "-m", model, "--min-p", "1.5"), exitUsage, "--min-p 1.5: must be in [0, 1]"},
		{"top-n-sigma out of range", append(run, "-m", model, "--top-n-sigma", "-2"), exitUsage,
			"--top-n-sigma -2: must be -1 or >= 0 (-1 and 0 are off)"},
		{"mirostat 3", append(run, "-m", model, "--mirostat", "3"), exitUsage, "--mirostat 3: must be 0, 1 or 2"},
		{"mirostat 2 with greedy", append(run, "-m", model, "--mirostat", "2", "--sampler", "greedy"), exitUsage,
			"--mirostat 2 is the mirostat-v2 sampler; it cannot go with --sampler greedy"},
		{"mirostat-ent out of range", append(run, "-m", model, "--mirostat", "2", "--mirostat-ent", "-1"), exitUsage,
			"--mirostat-ent -1: must be >= 0"},
		{"dry-base out of range", append(run, "-m", model, "--dry-multiplier", "0.8", "--dry-base", "0.5"), exitUsage,
			"--dry-base 0.5: must be >= 1"},
		{"unknown sampler stage", append(run, "-m", model, "--samplers", "top_k;bogus"), exitUsage, `--samplers: "bogus" is unknown`},
		{"adaptive_p not offered", append(run, "-m", model, "--samplers", "penalties;adaptive_p"), exitUsage,
			`--samplers: "adaptive_p" is not offered`},
		{"embedded policy of the wrong kind", append(run, "-m", model, "--stop", "greedy"), exitBadPlugin,
			"realizar-host: --stop greedy: wrong plugin kind: plugin greedy is a sampler, not a stop\n"},
		{"sampler config typo", append(run, "-m", model, "--sampler-config", `{"temprature":0}`), exitBadPlugin,
			") refused its config: unknown key temprature (the keys are temperature, top_k,"},
		{"sampler config out of range", append(run, "-m", model, "--sampler-config", `{"top_p":5}`), exitBadPlugin,
			") refused its config: top_p must be in [0, 1]"},
		{"stop config typo", append(run, "-m", model, "--stop", "strings", "--stop-config", `{"stops":["x"]}`), exitBadPlugin,
			"refused its config: unknown key stops (the keys are stop, include)"},
		{"plugin check config typo", []string{"plugin", "check", "standard", "--config", `{"temprature":0}`}, exitBadPlugin,
			"refused its config: unknown key temprature"},
		{"perplexity missing text", []string{"perplexity", "-m", model, "--file", absentText}, exitBadFile, "--file: open " + absentText},
		{"bench without repetitions", []string{"bench", "-m", model, "--repetitions", "0"}, exitUsage, "--repetitions must be >= 1, not 0"},
		{"bench with an empty prompt", []string{"bench", "-m", model, "--prompt-tokens", "0"}, exitUsage, "--prompt-tokens must be >= 1, not 0"},
		{"missing file", append(run, "-m", filepath.Join(dir, "absent.gguf")), exitBadFile, "absent.gguf: no such file"},
		{"not GGUF", append(run, "-m", garbage), exitBadFile, "bad magic"},
		{"unsupported architecture", append(run, "-m", mamba), exitBadFile, "unsupported architecture"},
		{"unsupported tensor type", append(run, "-m", int8), exitBadFile, "blk.0.attn_q.weight"},
		{"sampling flag with a custom sampler", append(run, "-m", model, "--sampler", "my.wasm", "--top-k", "5"), exitUsage,
			"--top-k configures the standard sampler, not my.wasm"},
		{"stop config and stop string for strings", append(run, "-m", model, "--stop", "strings", "--stop-config", `{"stop":["x"]}`,
			"--stop-string", "x"), exitUsage, "--stop-string and --stop-config both configure the stop strings"},
		{"bad config argument", append(run, "-m", model, "--sampler-config", "[1]"), exitUsage, "--sampler-config: not a JSON object"},
		{"logprobs without json", append(run, "-m", model, "--logprobs", "2"), exitUsage, "--logprobs needs --json"},
		// An unknown name and a missing file exit alike; the names offered are the flag's kind's.
		{"unknown policy name", append(run, "-m", model, "--sampler", "nucleus"), exitBadPlugin,
			`--sampler "nucleus": not an embedded sampler (greedy, standard, mirostat-v2), a .wasm file or a .json manifest`},
		{"unknown policy file", append(run, "-m", model, "--sampler", "nucleus.wasm"), exitBadPlugin, `--sampler nucleus.wasm: no such file`},
		{"unknown stop policy", append(run, "-m", model, "--stop", "nucleus"), exitBadPlugin,
			`--stop "nucleus": not an embedded stop (strings, repetition, max-time)`},
		{"unknown processor", append(run, "-m", model, "--processor", "nucleus"), exitBadPlugin,
			`--processor "nucleus": not an embedded processor (dry, json, grammar)`},
		{"missing plugin", append(run, "-m", model, "--sampler", filepath.Join(dir, "absent.wasm")), exitBadPlugin,
			"realizar-host: --sampler " + filepath.Join(dir, "absent.wasm") + ": no such file or directory\n"},
		{"plugin check unknown name", []string{"plugin", "check", "nosuch"}, exitBadPlugin,
			`plugin check "nosuch": not an embedded policy (samplers greedy, standard, mirostat-v2; processors dry, json, grammar; ` +
				`stops strings, repetition, max-time; drafters lookup), a .wasm file or a .json manifest`},
		{"plugin check bad manifest", []string{"plugin", "check", badManifest}, exitBadPlugin,
			"realizar-host: " + badManifest + ": manifest: not a JSON object but an array\n"},
		{"plugin check missing file", []string{"plugin", "check", filepath.Join(dir, "absent.wasm")}, exitBadPlugin,
			"realizar-host: plugin check " + filepath.Join(dir, "absent.wasm") + ": no such file or directory\n"},
		{"not a plugin", append(run, "-m", model, "--sampler", "../../host/testdata/notwasm.wasm"), exitBadPlugin, "not a valid WebAssembly module"},
		{"wrong kind", append(run, "-m", model, "--sampler", "../../host/testdata/stopstr.wasm"), exitBadPlugin, "wrong plugin kind"},
		{"wrong kind in a manifest", append(run, "-m", model, "--sampler", manifest), exitBadPlugin, "wrong plugin kind"},
		{"forbidden import", append(run, "-m", model, "--sampler", "../../host/testdata/pathopen.wasm"), exitBadPlugin, "forbidden import"},
		{"plugin traps", append(run, "-m", model, "--sampler", "../../host/testdata/bad.wasm", "--seed", "2"), exitBadPlugin,
			"sampler bad 1.0.0"},
		{"--gpu without a GPU backend", []string{"run", "-p", "Once", "-m", model, "--gpu"}, exitFailure, "--gpu: "},
		{"context overflow", []string{"run", "-p", long, "-m", model, "--ctx-size", "16"}, exitContext,
			"context length exceeded"},
		{"plugin check not wasm", []string{"plugin", "check", "../../host/testdata/notwasm.wasm"}, exitBadPlugin, "not a valid WebAssembly module"},
		{"perplexity missing model", []string{"perplexity", "-m", filepath.Join(dir, "absent.gguf"), "--file", garbage}, exitBadFile, "absent.gguf"},
		{"bench overflow", []string{"bench", "-m", model, "--ctx-size", "16", "--prompt-tokens", "16"}, exitContext, "exceed the context of 16"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := runIn(t, "", tc.args...)
			assert.Equal(t, tc.code, code, "stderr: %s", stderr)
			assert.Contains(t, stderr, tc.msg)
			assert.True(t, strings.HasPrefix(stderr, "realizar-host: "), stderr)
			assert.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
			assert.NotContains(t, stderr, "goroutine")
			assert.Empty(t, stdout)
		})
	}
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	require.NoError(t, err)
	return a
}

// TestModelFromEnv: REALIZAR_MODEL names the model when --model is absent.
func TestModelFromEnv(t *testing.T) {
	model := storiesModel(t)
	cmd := exec.Command(e2eBinary(t), "run", "-p", "Once upon a time", "-n", "3", "--sampler", "greedy")
	cmd.Env = append(os.Environ(), envModel+"="+model)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	out, err := cmd.Output()
	require.NoError(t, err, stderr.String())
	assert.Equal(t, ", there was", string(out))
	assert.Less(t, time.Since(start), 30*time.Second)
}

// TestPluginGoExample builds the README's Go plugin (testdata/plugin-go),
// adds its metadata with abi/cmd/wasmmeta, checks it and samples with it.
func TestPluginGoExample(t *testing.T) {
	model := storiesModel(t)
	dir := t.TempDir()
	raw, wasm := filepath.Join(dir, "top1.wasm"), filepath.Join(dir, "top1-meta.wasm")
	build := exec.Command("go", "build", "-buildmode=c-shared", "-trimpath", "-o", raw, ".")
	build.Dir = filepath.Join("testdata", "plugin-go")
	build.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)
	meta := exec.Command("go", "run", "../../abi/cmd/wasmmeta", "-kind", "sampler", "-name", "top1", "-version", "1.0.0",
		"-description", "the most likely token", raw, wasm)
	out, err = meta.CombinedOutput()
	require.NoError(t, err, "%s", out)

	stdout, stderr, code := runIn(t, "", "plugin", "check", wasm, "--steps", "4")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "ok: sampler top1 1.0.0 (ABI v1)")
	stdout, stderr, code = runIn(t, "", "run", "-m", model, "-p", "Once upon a time", "-n", "12", "--sampler", wasm)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, ", there was a little girl named Lily. She", stdout)

	// The README's example tenants take this plugin: its size fits every
	// tenant's max_plugin_bytes.
	info, err := os.Stat(wasm)
	require.NoError(t, err)
	ts, err := tenancy.ParseTenants([]byte(readmeTenantsFile(t)))
	require.NoError(t, err)
	for _, tn := range ts.All() {
		assert.LessOrEqual(t, info.Size(), int64(tn.Limits.MaxPluginBytes), "README tenant %s", tn.Name)
	}
}

// readmeTenantsFile is the example tenants file of README.md's "Tenants"
// section: its first json block.
func readmeTenantsFile(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	_, sec, ok := strings.Cut(string(b), "\n### Tenants\n")
	require.True(t, ok, "README has no Tenants section")
	_, block, ok := strings.Cut(sec, "```json\n")
	require.True(t, ok, "README's Tenants section has no json block")
	block, _, _ = strings.Cut(block, "```")
	return block
}

// TestRunSpeculative: --lookup and --prediction give the plain text and
// tokens, and count their drafts in --json and the stats line.
func TestRunSpeculative(t *testing.T) {
	model := storiesModel(t)
	args := []string{"run", "-m", model, "-p", "Once upon a time", "-n", "200", "--sampler", "greedy", "--seed", "3", "--json"}
	var plain, spec turnJSON
	out, stderr, code := runIn(t, "", args...)
	require.Equal(t, 0, code, stderr)
	require.NoError(t, json.Unmarshal([]byte(out), &plain))
	assert.Nil(t, plain.Drafts)
	pred := filepath.Join(t.TempDir(), "pred.txt")
	require.NoError(t, os.WriteFile(pred, []byte(plain.Text), 0o644))
	for _, src := range [][]string{{"--lookup"}, {"--prediction", pred}} {
		out, stderr, code := runIn(t, "", append(args, src...)...)
		require.Equal(t, 0, code, stderr)
		require.NoError(t, json.Unmarshal([]byte(out), &spec))
		assert.Equal(t, plain.Tokens, spec.Tokens, src)
		assert.Equal(t, plain.Text, spec.Text, src)
		require.NotNil(t, spec.Drafts, src)
		assert.Positive(t, spec.Drafts.Accepted, src)
		assert.Equal(t, spec.Drafts.Drafted-spec.Drafts.Accepted, spec.Drafts.Rejected)
	}
	_, stderr, code = runIn(t, "", "run", "-m", model, "-p", "Once upon a time", "-n", "40", "--sampler", "greedy", "--lookup")
	require.Equal(t, 0, code, stderr)
	assert.Regexp(t, `\| drafts \d+ accepted / \d+ rejected in (1 pass|\d+ passes) \|`, stderr)
	for _, tt := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--lookup", "--prediction", pred}, "give one draft source"},
		{[]string{"--lookup", "--draft-max", "33"}, "--draft-max 33: must be in [0, 32]"},
		{[]string{"--prediction", pred, "--draft-max", "-1"}, "--draft-max -1: must be in [0, 32]"},
		{[]string{"--draft-max", "4"}, "--draft-max needs a draft source"},
		{[]string{"--draft-max", "0"}, "--draft-max needs a draft source"},
	} {
		for _, sub := range [][]string{{"run", "-p", "x"}, {"chat"}} {
			_, stderr, code = runIn(t, "", append(append(sub, "-m", model), tt.args...)...)
			assert.Equal(t, exitUsage, code, sub, tt.args, stderr)
			assert.Contains(t, stderr, tt.msg, sub, tt.args)
		}
	}
	for _, n := range []string{"0", "32"} {
		_, stderr, code = runIn(t, "", "run", "-m", model, "-p", "x", "-n", "4", "--lookup", "--draft-max", n)
		assert.Equal(t, 0, code, n, stderr)
	}
}

// TestReadmePredictionExample: README.md's prediction request is one JSON
// object with a max_tokens, so that it ends on any model.
func TestReadmePredictionExample(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	_, rest, ok := strings.Cut(string(b), "curl -s localhost:8080/v1/chat/completions -d '{\n  \"messages\": [{\"role\": \"user\", \"content\": \"Rename x")
	require.True(t, ok, "the prediction example")
	body, _, ok := strings.Cut(`{
  "messages": [{"role": "user", "content": "Rename x`+rest, "'")
	require.True(t, ok)
	var req struct {
		MaxTokens  *int            `json:"max_tokens"`
		Prediction json.RawMessage `json:"prediction"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &req), body)
	require.NotNil(t, req.MaxTokens, body)
	assert.Positive(t, *req.MaxTokens)
	assert.NotEmpty(t, req.Prediction)
}
