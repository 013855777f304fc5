package main

import (
	"os/exec"
	"path/filepath"
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
		path := "../../plugins/wasm/" + tt.file + ".wasm"
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
