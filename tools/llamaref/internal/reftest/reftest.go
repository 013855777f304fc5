package reftest

import (
	"testing"

	"github.com/realizar-host/realizar-host/internal/testenv"
	"github.com/realizar-host/realizar-host/tools/llamaref/ref"
)

// missing fails the test under CI and skips it elsewhere, with the reason
// (the main module's one rule, testenv.Missing).
func missing(t testing.TB, err error) {
	t.Helper()
	testenv.Missing(t, "a test dependency is missing: %v", err)
}

// Lib returns the loaded reference (see ref.OpenDefault).
func Lib(t testing.TB) *ref.Lib {
	t.Helper()
	l, err := ref.OpenDefault()
	if err != nil {
		missing(t, err)
	}
	return l
}

// SharedModel returns the path of ../shared/models/name.
func SharedModel(t testing.TB, name string) string {
	t.Helper()
	p, err := ref.SharedModel(name)
	if err != nil {
		missing(t, err)
	}
	return p
}

// Vocab returns the path of the reference's ggml-vocab-name.gguf.
func Vocab(t testing.TB, l *ref.Lib, name string) string {
	t.Helper()
	p, err := ref.VocabPath(l.Dir(), name)
	if err != nil {
		missing(t, err)
	}
	return p
}

// Model loads path with the reference and closes it when the test ends.
func Model(t testing.TB, l *ref.Lib, path string) *ref.Model {
	t.Helper()
	m, err := l.LoadModel(path)
	if err != nil {
		t.Fatalf("load %s: %v", path, err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// Context makes a pinned context on m, closed when the test ends.
func Context(t testing.TB, m *ref.Model, cfg ref.ContextConfig) *ref.Context {
	t.Helper()
	c, err := m.NewContext(cfg)
	if err != nil {
		t.Fatalf("context: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// Missing fails the test under CI=true and skips it elsewhere, giving err as
// the reason: for a dependency the test cannot run without.
func Missing(t testing.TB, err error) {
	t.Helper()
	missing(t, err)
}
