package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/internal/testenv"
)

// TestPluginCheckLanguages: the policies written in Rust and AssemblyScript
// pass plugin check with their configs, and a bad config fails it (exit
// status of a bad plugin, the guest's log line quoted).
func TestPluginCheckLanguages(t *testing.T) {
	tests := []struct {
		file, config, want string
	}{
		{"min-p", `{"min_p":0.1,"temperature":0.7}`, "ok: sampler min-p 1.0.0 (ABI v1)"},
		{"logit-bias", `{"logit_bias":{"5":2,"6":false}}`, "ok: processor logit-bias 1.0.0 (ABI v1)"},
		{"max-lines", `{"lines":2,"keep_newline":true}`, "ok: stop max-lines 1.0.0 (ABI v1)"},
		// ABI 2, the allowed-token mask: C, Rust, AssemblyScript.
		{"allow", `{"tokens":[1,2,3]}`, "ok: processor allow 1.0.0 (ABI v2)"},
		{"allow-rust", `{"tokens":[1,2,3,4,5,6,7,8,9,10],"once":true}`, "ok: processor allow-rust 1.0.0 (ABI v2)"},
		{"allow-as", `{"tokens":[4,5],"eog":false}`, "ok: processor allow-as 1.0.0 (ABI v2)"},
	}
	for _, tt := range tests {
		path := "../../internal/plugins/wasm/" + tt.file + ".wasm"
		out, stderr, code := runIn(t, "", "plugin", "check", path, "--config", tt.config, "--steps", "8", "--vocab", "1000")
		require.Equal(t, 0, code, "%s: %s", tt.file, stderr)
		assert.Contains(t, out, tt.want)
		assert.Contains(t, out, "8 steps at vocab 1000")

		_, stderr, code = runIn(t, "", "plugin", "check", path, "--config", `{"typo":1}`)
		assert.Equal(t, exitBadPlugin, code, tt.file)
		assert.Contains(t, stderr, "config: unknown key typo", tt.file)
	}
}

// guestTool returns the path of a plugin toolchain's program, installed by
// scripts/guests-install.sh; a missing one fails under CI and skips
// elsewhere.
func guestTool(t *testing.T, path string) string {
	t.Helper()
	return testenv.Tool(t, path, "run scripts/guests-install.sh")
}

// TestPluginRustASExamples builds the README's Rust and AssemblyScript
// plugins (testdata/plugin-rust, testdata/plugin-as) with the commands the
// README gives, adds their metadata, checks them and samples stories260K
// greedily with each: the same text as the Go example.
func TestPluginRustASExamples(t *testing.T) {
	model := storiesModel(t)
	dir := t.TempDir()
	lib := filepath.Join(dir, "librealizar.rlib")
	rustFlags := []string{"--edition", "2021", "--target", "wasm32-unknown-unknown", "-C", "opt-level=2", "-C", "panic=abort"}
	tests := []struct {
		name  string
		build [][]string
	}{
		{"top1-rust", [][]string{
			append([]string{guestTool(t, "/usr/bin/rustc")}, append(rustFlags, "--crate-type", "rlib", "--crate-name", "realizar",
				"-o", lib, "../../abi/guest/rust/realizar.rs")...),
			append([]string{"/usr/bin/rustc"}, append(rustFlags, "--crate-type", "cdylib", "-C", "link-arg=-zstack-size=65536",
				"-C", "link-arg=--strip-all", "--extern", "realizar="+lib, "-o", filepath.Join(dir, "top1-rust.wasm"),
				"testdata/plugin-rust/top1.rs")...),
		}},
		{"top1-as", [][]string{
			{guestTool(t, "../../.cache/asc/node_modules/.bin/asc"), "testdata/plugin-as/top1.ts", "--runtime", "stub",
				"--use", "abort=", "-O2", "-o", filepath.Join(dir, "top1-as.wasm")},
		}},
	}
	for _, tt := range tests {
		for _, args := range tt.build {
			out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
			require.NoError(t, err, "%v: %s", args, out)
		}
		raw, wasm := filepath.Join(dir, tt.name+".wasm"), filepath.Join(dir, tt.name+"-meta.wasm")
		out, err := exec.Command("go", "run", "../../abi/cmd/wasmmeta", "-kind", "sampler", "-name", tt.name, "-version", "1.0.0",
			"-description", "the most likely token", raw, wasm).CombinedOutput()
		require.NoError(t, err, "%s", out)

		stdout, stderr, code := runIn(t, "", "plugin", "check", wasm, "--steps", "4")
		require.Equal(t, 0, code, stderr)
		assert.Contains(t, stdout, "ok: sampler "+tt.name+" 1.0.0 (ABI v1)")
		stdout, stderr, code = runIn(t, "", "run", "-m", model, "-p", "Once upon a time", "-n", "12", "--sampler", wasm)
		require.Equal(t, 0, code, stderr)
		assert.Equal(t, ", there was a little girl named Lily. She", stdout, tt.name)
	}
}

// TestPluginCGoExamples builds the README's C plugins (testdata/plugin-c)
// and its Go stop policy and processor (testdata/plugin-go-stop,
// testdata/plugin-go-processor) with the README's commands, adds their
// metadata, checks them and runs stories260K greedily with each: the C
// sampler gives the Go one's text, the stop policies end the turn at the
// first period, the processors take every comma out of it.
func TestPluginCGoExamples(t *testing.T) {
	model := storiesModel(t)
	dir := t.TempDir()
	clang := testenv.Tool(t, "clang-14", "apt-get install clang-14 lld-14")
	cBuild := func(src string) func(out string) *exec.Cmd {
		return func(out string) *exec.Cmd {
			return exec.Command(clang, "--target=wasm32", "-O2", "-nostdlib", "-Wl,--no-entry", "-o", out, src)
		}
	}
	goBuild := func(pkg string) func(out string) *exec.Cmd {
		return func(out string) *exec.Cmd {
			cmd := exec.Command("go", "build", "-buildmode=c-shared", "-trimpath", "-o", out, ".")
			cmd.Dir = pkg
			cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
			return cmd
		}
	}
	tests := []struct {
		name, kind string
		build      func(out string) *exec.Cmd
		flag       string
		want       string // stdout of run -n 40
		stop       string // the stats line's stop reason
	}{
		{"top1-c", "sampler", cBuild("testdata/plugin-c/top1.c"), "--sampler",
			", there was a little girl named Lily. She loved to play outside in the park. One day, she saw a big, red ball.", "max-tokens"},
		{"period", "stop", cBuild("testdata/plugin-c/period.c"), "--stop",
			", there was a little girl named Lily.", "stop-policy"},
		{"period-go", "stop", goBuild("testdata/plugin-go-stop"), "--stop",
			", there was a little girl named Lily.", "stop-policy"},
		{"nocomma", "processor", cBuild("testdata/plugin-c/nocomma.c"), "--processor",
			" there was a little girl named Lily. She loved to play outside in the park. One day she went to the park to play with her", "max-tokens"},
		{"nocomma-go", "processor", goBuild("testdata/plugin-go-processor"), "--processor",
			" there was a little girl named Lily. She loved to play outside in the park. One day she went to the park to play with her", "max-tokens"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, wasm := filepath.Join(dir, tt.name+".wasm"), filepath.Join(dir, tt.name+"-meta.wasm")
			out, err := tt.build(raw).CombinedOutput()
			require.NoError(t, err, "%s", out)
			out, err = exec.Command("go", "run", "../../abi/cmd/wasmmeta", "-kind", tt.kind, "-name", tt.name,
				"-version", "1.0.0", "-description", "README example", raw, wasm).CombinedOutput()
			require.NoError(t, err, "%s", out)

			stdout, stderr, code := runIn(t, "", "plugin", "check", wasm, "--steps", "4")
			require.Equal(t, 0, code, stderr)
			assert.Contains(t, stdout, "ok: "+tt.kind+" "+tt.name+" 1.0.0 (ABI v1)")
			args := []string{"run", "-m", model, "-p", "Once upon a time", "-n", "40", tt.flag, wasm}
			if tt.kind != "sampler" {
				args = append(args, "--sampler", "greedy")
			}
			stdout, stderr, code = runIn(t, "", args...)
			require.Equal(t, 0, code, stderr)
			assert.Equal(t, tt.want, stdout)
			assert.Contains(t, stderr, "| stop "+tt.stop+" |")
		})
	}
	// A stop plugin and --stop-string together: the strings policy is
	// chained after the plugin, and whichever stops first ends the turn.
	period := filepath.Join(dir, "period-meta.wasm")
	for _, tt := range []struct{ stop, want string }{
		{"girl", ", there was a little "},
		{"park", ", there was a little girl named Lily."},
	} {
		stdout, stderr, code := runIn(t, "", "run", "-m", model, "-p", "Once upon a time", "-n", "40", "--sampler", "greedy",
			"--stop", period, "--stop-string", tt.stop)
		require.Equal(t, 0, code, stderr)
		assert.Equal(t, tt.want, stdout, tt.stop)
		assert.Contains(t, stderr, "| stop stop-policy |")
	}
}

// TestREADMEPluginExamples: every plugin example in testdata is in README.md
// as written (a Go file without its doc comment, which the README replaces
// with prose), so the README shows what the tests build.
func TestREADMEPluginExamples(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	files, err := filepath.Glob("testdata/plugin-*/*")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		src := string(b)
		if strings.HasSuffix(f, ".go") {
			// Drop the comment lines between the build constraint and the package clause.
			head, rest, ok := strings.Cut(src, "\npackage ")
			require.True(t, ok, f)
			var kept []string
			for i, line := range strings.Split(head, "\n") {
				if i == 0 || !strings.HasPrefix(line, "//") {
					kept = append(kept, line)
				}
			}
			src = strings.Join(kept, "\n") + "\npackage " + rest
		}
		assert.True(t, strings.Contains(string(readme), src), "README.md does not show %s as written", f)
	}
}

// TestGoGuestCrash: a Go guest's runtime crash is reported by its first
// line, the cause, not by the traceback's last frame; running out of its
// memory cap is reported as the cap even when its deadline fires while it
// fails (testdata/faulty-go).
func TestGoGuestCrash(t *testing.T) {
	model := storiesModel(t)
	dir := t.TempDir()
	raw, wasm := filepath.Join(dir, "faulty.wasm"), filepath.Join(dir, "faulty-meta.wasm")
	build := exec.Command("go", "build", "-buildmode=c-shared", "-trimpath", "-o", raw, ".")
	build.Dir = filepath.Join("testdata", "faulty-go")
	build.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)
	out, err = exec.Command("go", "run", "../../abi/cmd/wasmmeta", "-kind", "sampler", "-name", "faulty", "-version", "1.0.0",
		"-description", "fails on purpose", raw, wasm).CombinedOutput()
	require.NoError(t, err, "%s", out)
	for _, tt := range []struct{ fault, want, notWant string }{
		{"nilmap", `host: plugin trapped: wasm error: unreachable (guest "panic: assignment to entry in nil map")`, "asm_wasm.s"},
		{"oom", `host: plugin memory limit exceeded: asked to grow memory past 64 pages: wasm error: unreachable (guest "fatal error: out of memory")`, "timed out"},
	} {
		t.Run(tt.fault, func(t *testing.T) {
			// A small cap and a long deadline: the cap is reached on a loaded machine too.
			manifest := filepath.Join(dir, tt.fault+".json")
			require.NoError(t, os.WriteFile(manifest, []byte(`{"path": "faulty-meta.wasm", "config": {"fault": "`+tt.fault+
				`"}, "limits": {"memory_pages": 64, "call_timeout_ms": 20000}}`), 0o644))
			_, stderr, code := runIn(t, "", "run", "-m", model, "-p", "Once", "-n", "3", "--sampler", manifest)
			assert.Equal(t, exitBadPlugin, code)
			assert.Contains(t, stderr, tt.want)
			assert.NotContains(t, stderr, tt.notWant)

			// --json's stop reason says the turn failed.
			out, _, code := runIn(t, "", "run", "-m", model, "-p", "Once", "-n", "3", "--sampler", manifest, "--json")
			assert.Equal(t, exitBadPlugin, code)
			assert.Contains(t, out, `"stop_reason": "error"`)

			// plugin check names the export that failed.
			_, stderr, code = runIn(t, "", "plugin", "check", manifest)
			assert.Equal(t, exitBadPlugin, code)
			assert.Contains(t, stderr, "realizar-host: realizar_sample failed: plugin sampler faulty")
			assert.Contains(t, stderr, tt.want)
		})
	}
	_, stderr, code := runIn(t, "", "plugin", "check", "../../host/testdata/bad.wasm", "--config", `{"refuse":true}`)
	assert.Equal(t, exitBadPlugin, code)
	assert.Contains(t, stderr, "realizar-host: realizar_init failed: plugin sampler bad")
}

// readmeBlock returns the body of the first fenced block of the given
// language in README.md's section headed heading ("### In C") that holds
// marker.
func readmeBlock(t *testing.T, heading, lang, marker string) string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	_, sec, ok := strings.Cut(string(b), "\n"+heading+"\n")
	require.True(t, ok, "README.md has no %q", heading)
	for {
		var block string
		_, block, ok = strings.Cut(sec, "```"+lang+"\n")
		require.True(t, ok, "README.md's %q has no %s block holding %q", heading, lang, marker)
		block, sec, _ = strings.Cut(block, "```")
		if strings.Contains(block, marker) {
			return block
		}
	}
}

// TestREADMEManifestExample builds the C top1 as README's "In C" says, with
// its commands as written (clang-14, wasmmeta, plugin check), then runs the
// manifest of "Policies" as written beside it: its sha256 pin is the whole
// digest of that build, so it loads.
func TestREADMEManifestExample(t *testing.T) {
	testenv.Tool(t, "clang-14", "apt-get install clang-14 lld-14")
	dir := t.TempDir()
	out, err := exec.Command("go", "build", "-o", filepath.Join(dir, "wasmmeta"), "../../abi/cmd/wasmmeta").CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.NoError(t, os.Symlink(e2eBinary(t), filepath.Join(dir, "realizar-host")))
	src, err := os.ReadFile("testdata/plugin-c/top1.c")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "top1.c"), src, 0o644))

	build := exec.Command("bash", "-eu", "-o", "pipefail", "-c", readmeBlock(t, "### In C", "sh", "clang-14 "))
	build.Dir = dir
	build.Env = append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err = build.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "ok: sampler top1-c 1.0.0 (ABI v1)")

	manifest := filepath.Join(dir, "manifest.json")
	require.NoError(t, os.WriteFile(manifest, []byte(readmeBlock(t, "## Policies", "json", `"path": "top1-meta.wasm"`)), 0o644))
	stdout, stderr, code := runIn(t, "", "run", "-m", storiesModel(t), "-p", "Once upon a time", "-n", "12", "--sampler", manifest)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, ", there was a little girl named Lily. She", stdout)
}

// TestREADMEPackagesExample: README's "Using the packages" shows
// testdata/packages-go as it is, and its commands, run as written (the
// clone's path for /path/to/realizar-host), build it in a module of its own
// and print what the README says it prints.
func TestREADMEPackagesExample(t *testing.T) {
	src, err := os.ReadFile("testdata/packages-go/main.go")
	require.NoError(t, err)
	program := readmeBlock(t, "## Using the packages", "go", "package main")
	assert.Equal(t, string(src), program, "README.md does not show testdata/packages-go/main.go as it is")

	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	script := strings.ReplaceAll(readmeBlock(t, "## Using the packages", "sh", "go run ."), "/path/to/realizar-host", root)
	first, rest, ok := strings.Cut(script, "\n")
	require.True(t, ok)
	require.True(t, strings.HasPrefix(first, "mkdir story && cd story"), first)
	// The user saves the program as main.go after the first line.
	script = first + "\ncp " + filepath.Join(root, "cmd/realizar-host/testdata/packages-go/main.go") + " main.go\n" + rest
	cmd := exec.Command("bash", "-eu", "-o", "pipefail", "-c", script)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "GOFLAGS=", "GOPROXY=off")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	want := readmeBlock(t, "## Using the packages", "text", "(40 tokens")
	assert.True(t, strings.HasSuffix(string(out), want), "the output is not the README's:\n%s", out)
}
