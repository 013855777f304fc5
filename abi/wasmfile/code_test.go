package wasmfile_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/abi/wasmfile"
)

func uleb(b []byte, v int) []byte { return wasmfile.AppendU32(b, uint32(v)) }

// moduleWithBody is a module of one function () -> () whose body (locals
// included) is body.
func moduleWithBody(body []byte) []byte {
	m := append([]byte(nil), wasmfile.Magic...)
	m = append(m, 1, 4, 1, 0x60, 0, 0) // type section: () -> ()
	m = append(m, 3, 2, 1, 0)          // function section: one of type 0
	code := uleb(nil, 1)
	code = uleb(code, len(body))
	code = append(code, body...)
	m = append(m, wasmfile.SectionCode)
	m = uleb(m, len(code))
	return append(m, code...)
}

// nested is a body of depth blocks inside each other.
func nested(depth int) []byte {
	b := []byte{0} // no locals
	for range depth {
		b = append(b, 0x02, 0x40)
	}
	for range depth {
		b = append(b, 0x0B)
	}
	return append(b, 0x0B)
}

// brTable is a body with one br_table of n targets (all to the function's
// block) on a constant.
func brTable(n int) []byte {
	b := []byte{0, 0x02, 0x40, 0x41, 0x00, 0x0E}
	b = uleb(b, n)
	for range n + 1 {
		b = append(b, 0)
	}
	return append(b, 0x0B, 0x0B)
}

// Every module the repository ships or tests with passes DefaultCodeLimits:
// the embedded plugins, the test plugins and the chat-template guest.
func TestScanCodeShippedModules(t *testing.T) {
	files, err := filepath.Glob("../../internal/plugins/wasm/*.wasm")
	require.NoError(t, err)
	more, err := filepath.Glob("../../host/testdata/*.wasm")
	require.NoError(t, err)
	files = append(append(files, more...), "../../internal/chatsandbox/wasm/render.wasm.gz")
	require.Greater(t, len(files), 20)
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		if filepath.Ext(f) == ".gz" {
			z, err := gzip.NewReader(bytes.NewReader(b))
			require.NoError(t, err)
			b, err = io.ReadAll(z)
			require.NoError(t, err)
		}
		if !bytes.HasPrefix(b, wasmfile.Magic) {
			continue // notwasm.wasm
		}
		st, err := wasmfile.ScanCode(b, wasmfile.DefaultCodeLimits)
		assert.NoError(t, err, f)
		assert.Positive(t, st.Functions, f)
	}
}

func TestScanCodeLimits(t *testing.T) {
	lim := wasmfile.DefaultCodeLimits
	for _, tc := range []struct {
		name  string
		body  []byte
		limit string
	}{
		{"nesting at the limit", nested(lim.Depth), ""},
		{"nesting past it", nested(lim.Depth + 1), "depth"},
		{"br_table at the limit", brTable(lim.BrTable), ""},
		{"br_table past it", brTable(lim.BrTable + 1), "br_table"},
		{"a million br_table targets", brTable(1_000_000), "br_table"},
		{"locals past the limit", append(uleb(uleb([]byte{1}, lim.Locals+1), 0x7f), 0x0B), "locals"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := wasmfile.ScanCode(moduleWithBody(tc.body), lim)
			if tc.limit == "" {
				require.NoError(t, err)
				return
			}
			var le *wasmfile.CodeLimitError
			require.ErrorAs(t, err, &le)
			assert.ErrorIs(t, err, wasmfile.ErrCodeLimit)
			assert.Equal(t, tc.limit, le.Limit)
			assert.Equal(t, 0, le.Function)
			assert.Contains(t, err.Error(), tc.limit)
		})
	}
	st, err := wasmfile.ScanCode(moduleWithBody(nested(7)), wasmfile.CodeLimits{})
	require.NoError(t, err)
	assert.Equal(t, wasmfile.CodeStats{Functions: 1, MaxDepth: 7, MaxBodyBytes: 23}, st)
}

// Malformed bodies are *FormatError with an offset, never a panic.
func TestScanCodeMalformed(t *testing.T) {
	for name, body := range map[string][]byte{
		"truncated":          nested(3)[:5],
		"unknown opcode":     {0, 0x06, 0x0B},
		"bytes after end":    {0, 0x0B, 0x01},
		"br_table too large": {0, 0x0E, 0xff, 0xff, 0xff, 0x0f},
		"bad 0xfc":           {0, 0xFC, 0x7f, 0x0B},
	} {
		_, err := wasmfile.ScanCode(moduleWithBody(body), wasmfile.CodeLimits{})
		var fe *wasmfile.FormatError
		assert.ErrorAs(t, err, &fe, name)
	}
	_, err := wasmfile.ScanCode([]byte("nope"), wasmfile.DefaultCodeLimits)
	assert.ErrorIs(t, err, wasmfile.ErrNotWasm)
}

func FuzzScanCode(f *testing.F) {
	f.Add(moduleWithBody(nested(3)))
	f.Add(moduleWithBody(brTable(4)))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = wasmfile.ScanCode(b, wasmfile.DefaultCodeLimits)
	})
}
