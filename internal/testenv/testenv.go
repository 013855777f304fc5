// Package testenv finds what the module's tests need from outside the
// module — llama.cpp's vocabulary files, shared models and data, host
// toolchains — and handles their absence one way everywhere: the test is
// skipped on a developer's machine and fails under CI=true, where .ci/run
// installs everything, so that a skip never hides a missing install step.
package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// ci reports whether the tests run under CI (CI=true).
func ci() bool { return os.Getenv("CI") == "true" }

// Missing stops t for a missing dependency: t.Fatalf under CI, t.Skipf
// elsewhere. format should say what is missing and how to install it.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	if ci() {
		t.Fatalf(format+" (CI=true: a missing dependency fails)", args...)
	}
	t.Skipf(format, args...)
}

// Root is the module's root folder (the one holding go.mod), found from
// this file's location.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// VocabDir is the folder of llama.cpp's ggml-vocab-*.gguf files:
// $LLAMAREF_DIR/vocab, else <root>/.cache/llamaref/vocab (written by
// tools/llamaref/install.sh). Absent, it is Missing.
func VocabDir(t testing.TB) string {
	t.Helper()
	var dirs []string
	if d := os.Getenv("LLAMAREF_DIR"); d != "" {
		dirs = append(dirs, filepath.Join(d, "vocab"))
	}
	dirs = append(dirs, filepath.Join(Root(), ".cache", "llamaref", "vocab"))
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "ggml-vocab-gpt-2.gguf")); err == nil {
			return d
		}
	}
	Missing(t, "llama.cpp vocab files not found in %s: set LLAMAREF_DIR or run tools/llamaref/install.sh",
		strings.Join(dirs, ", "))
	return ""
}

// VocabFile is the path of file (such as "ggml-vocab-llama-bpe.gguf") in
// VocabDir; a missing file is Missing.
func VocabFile(t testing.TB, file string) string {
	t.Helper()
	p := filepath.Join(VocabDir(t), file)
	if _, err := os.Stat(p); err != nil {
		Missing(t, "%s not found: run tools/llamaref/install.sh", p)
	}
	return p
}

// Stories is the path of models/stories260K.gguf, the trained model
// committed in the repository (models/README.md); it is always there.
func Stories() string {
	return filepath.Join(Root(), "models", "stories260K.gguf")
}

// Shared is the path of rel (a file or folder, such as "maskbench") in
// ../shared beside this checkout (or, in a linked git worktree, beside the
// main checkout). Absent, it is Missing.
func Shared(t testing.TB, rel string) string {
	t.Helper()
	roots := []string{Root()}
	if out, err := exec.Command("git", "-C", Root(), "rev-parse", "--path-format=absolute", "--git-common-dir").Output(); err == nil {
		roots = append(roots, filepath.Dir(strings.TrimSpace(string(out))))
	}
	var tried []string
	for _, r := range roots {
		p := filepath.Join(r, "..", "shared", rel)
		if _, err := os.Stat(p); err == nil {
			return p
		}
		tried = append(tried, p)
	}
	Missing(t, "%s not found in %s", rel, strings.Join(tried, ", "))
	return ""
}

// Tool is the path of the program name (looked up in PATH, or used as a
// path when it contains a slash). Absent, it is Missing with install, the
// way to get it.
func Tool(t testing.TB, name, install string) string {
	t.Helper()
	if strings.Contains(name, "/") {
		if _, err := os.Stat(name); err != nil {
			Missing(t, "%s is missing: %s", name, install)
		}
		return name
	}
	p, err := exec.LookPath(name)
	if err != nil {
		Missing(t, "%s not found: %s", name, install)
	}
	return p
}

// envCompileCache names a folder in which tests keep wazero's compiled
// code, shared by every test binary that reads it (`make test` sets it to
// .cache/test-compiled, so the chat-template sandbox and the plugins are
// compiled once per run, not once per test and binary; the race pass, whose
// instrumented compiler is several times slower, compiles nothing).
const envCompileCache = "REALIZAR_TEST_COMPILE_CACHE"

// CompileCacheDir returns the folder of EnvCompileCache, created if
// needed, or "" when the variable is unset (each test then compiles in
// memory, as before). wazero keys its entries by module hash and wazero
// version and writes them atomically, so concurrent test binaries share it
// safely.
func CompileCacheDir(t testing.TB) string {
	dir := os.Getenv(envCompileCache)
	if dir == "" {
		return ""
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("testenv: %s: %v", envCompileCache, err)
	}
	return dir
}

// SDKDir is <root>/.cache/sdk, where scripts/sdk-install.sh installs the
// npm API clients pinned by server/testdata/sdk/package-lock.json (make
// test-deps runs it); with node on the PATH. Either absent, it is Missing.
func SDKDir(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(Root(), ".cache", "sdk")
	if _, err := os.Stat(filepath.Join(dir, "node_modules")); err != nil {
		Missing(t, "the npm API clients are not installed in %s: run scripts/sdk-install.sh (make test-deps)", dir)
	}
	if _, err := exec.LookPath("node"); err != nil {
		Missing(t, "node is required for the npm API clients (apt-get install nodejs npm)")
	}
	return dir
}

// SDKScript is the path of server/testdata/sdk/<name>, a node script that
// drives the npm API clients (see SDKDir).
func SDKScript(name string) string {
	return filepath.Join(Root(), "internal", "server", "testdata", "sdk", name)
}

// Generated checks a generated section of a committed text file: the text
// between the marker lines begin and end (each with its newline) of the
// file at path must be want. With update (a test's -update flag) the
// section is rewritten to want first. On a difference the test fails,
// saying hint (the command that regenerates it).
func Generated(t testing.TB, path, begin, end, want string, update bool, hint string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	b, e := strings.Index(text, begin), strings.Index(text, end)
	if b < 0 || e < b {
		t.Fatalf("%s: the generated section's marker lines %q and %q are missing or out of order", path, begin, end)
	}
	got := text[b+len(begin) : e]
	if update && got != want {
		text = text[:b+len(begin)] + want + text[e:]
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		got = want
	}
	if got != want {
		t.Errorf("%s: the generated section differs (run %s)\n--- want\n%s--- got\n%s", path, hint, want, got)
	}
}

// GeneratedFile checks a generated file: the file at path must be want,
// whole. With update (a test's -update flag) it is rewritten to want
// first. On a difference, or a file that cannot be read, the test fails,
// saying hint (the command that regenerates it).
func GeneratedFile(t testing.TB, path, want string, update bool, hint string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if update && (err != nil || string(raw) != want) {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		raw, err = []byte(want), nil
	}
	if err != nil {
		t.Fatalf("%s: %v (run %s)", path, err, hint)
	}
	if got := string(raw); got != want {
		t.Errorf("%s differs from what generates it (run %s)\n--- want\n%s--- got\n%s", path, hint, want, got)
	}
}
