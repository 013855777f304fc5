package wasmfile_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/abi/wasmfile"
)

// tiny is (module (import "realizar" "vocab_size" (func (result i32)))
// (memory 2 5) (func (export "f")) (@custom "x" "hi")), built by hand.
var tiny = []byte{
	0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
	// type section: 2 types: () -> i32, () -> ()
	0x01, 0x08, 0x02, 0x60, 0x00, 0x01, 0x7f, 0x60, 0x00, 0x00,
	// import section: realizar.vocab_size func type 0
	0x02, 0x17, 0x01, 0x08, 'r', 'e', 'a', 'l', 'i', 'z', 'a', 'r',
	0x0a, 'v', 'o', 'c', 'a', 'b', '_', 's', 'i', 'z', 'e', 0x00, 0x00,
	// function section: one function of type 1
	0x03, 0x02, 0x01, 0x01,
	// memory section: min 2 max 5
	0x05, 0x04, 0x01, 0x01, 0x02, 0x05,
	// export section: "f" func 1
	0x07, 0x05, 0x01, 0x01, 'f', 0x00, 0x01,
	// code section: one empty body
	0x0a, 0x04, 0x01, 0x02, 0x00, 0x0b,
	// custom "x" = "hi"
	0x00, 0x04, 0x01, 'x', 'h', 'i',
}

func TestParse(t *testing.T) {
	m, err := wasmfile.Parse(tiny)
	require.NoError(t, err)
	require.Len(t, m.Imports, 1)
	imp := m.Imports[0]
	assert.Equal(t, "realizar", imp.Module)
	assert.Equal(t, "vocab_size", imp.Name)
	assert.Equal(t, byte(wasmfile.ExternFunc), imp.Kind)
	assert.Equal(t, []byte{}, imp.Type.Params)
	assert.Equal(t, []byte{0x7f}, imp.Type.Results)
	assert.Equal(t, []wasmfile.Limits{{Min: 2, Max: 5, HasMax: true}}, m.Memories)
	e, ok := m.Export("f")
	require.True(t, ok)
	assert.Equal(t, uint32(1), e.Index)
	p, ok := m.CustomSection("x")
	require.True(t, ok)
	assert.Equal(t, "hi", string(p))
}

func TestParseRefuses(t *testing.T) {
	cut := func(n int) []byte { return append([]byte(nil), tiny[:n]...) }
	for name, tc := range map[string]struct {
		in      []byte
		notWasm bool
	}{
		"empty":             {nil, true},
		"ELF":               {[]byte("\x7fELF\x02\x01\x01\x00\x00\x00"), true},
		"version 2":         {[]byte{0, 'a', 's', 'm', 2, 0, 0, 0}, true},
		"section past end":  {cut(12), false},
		"truncated imports": {append(cut(18), 0x17), false},
		"leb too long":      {append(cut(8), 0x01, 0xff, 0xff, 0xff, 0xff, 0xff), false},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := wasmfile.Parse(tc.in)
			require.Error(t, err)
			if tc.notWasm {
				assert.ErrorIs(t, err, wasmfile.ErrNotWasm)
				return
			}
			var fe *wasmfile.FormatError
			assert.True(t, errors.As(err, &fe), "%v", err)
		})
	}
}

func TestSetCustomSectionIsIdempotent(t *testing.T) {
	meta, err := wasmfile.MarshalMeta(wasmfile.Meta{ABI: 1, Kind: "sampler", Name: "greedy", Version: "1.0.0", Description: "argmax <&>"})
	require.NoError(t, err)
	assert.Equal(t, `{"abi":1,"kind":"sampler","name":"greedy","version":"1.0.0","description":"argmax <&>"}`, string(meta))
	once, err := wasmfile.SetCustomSection(tiny, "realizar.meta", meta)
	require.NoError(t, err)
	twice, err := wasmfile.SetCustomSection(once, "realizar.meta", meta)
	require.NoError(t, err)
	assert.Equal(t, once, twice)
	m, err := wasmfile.Parse(twice)
	require.NoError(t, err)
	p, ok := m.CustomSection("realizar.meta")
	require.True(t, ok)
	got, err := wasmfile.UnmarshalMeta(p)
	require.NoError(t, err)
	assert.Equal(t, "greedy", got.Name)
	_, ok = m.CustomSection("x")
	assert.True(t, ok, "other custom sections are kept")
}

func TestMetaValidate(t *testing.T) {
	good := wasmfile.Meta{ABI: 1, Kind: "stop", Name: "strings"}
	require.NoError(t, good.Validate())
	for name, m := range map[string]wasmfile.Meta{
		"bad kind":   {ABI: 1, Kind: "filter", Name: "x"},
		"empty name": {ABI: 1, Kind: "stop"},
		"upper name": {ABI: 1, Kind: "stop", Name: "Greedy"},
	} {
		assert.Error(t, m.Validate(), name)
	}
	_, err := wasmfile.UnmarshalMeta([]byte(`{"abi":1,"kind":"stop","name":"x","extra":1}`))
	assert.Error(t, err)
}

// FuzzParse: Parse never panics, and a module it accepts survives
// SetCustomSection and parses again with the section present.
func FuzzParse(f *testing.F) {
	f.Add(tiny)
	f.Add([]byte{0, 'a', 's', 'm', 1, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, err := wasmfile.Parse(b); err != nil {
			return
		}
		out, err := wasmfile.SetCustomSection(b, "realizar.meta", []byte("{}"))
		require.NoError(t, err)
		m, err := wasmfile.Parse(out)
		require.NoError(t, err)
		_, ok := m.CustomSection("realizar.meta")
		require.True(t, ok)
	})
}

// From ABI 2 the metadata tolerates x- keys, keeps them in X and writes them
// back sorted after the five keys; other unknown keys stay refused, and a v1
// object refuses x- keys too.
func TestMetaExtensionKeys(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		ok       bool
		x        map[string]string
	}{
		{"v1 plain", `{"abi":1,"kind":"stop","name":"x","version":"","description":""}`, true, nil},
		{"v1 x- key", `{"abi":1,"kind":"stop","name":"x","x-tool":"a"}`, false, nil},
		{"v2 x- keys", `{"x-b":[1, 2],"abi":2,"kind":"processor","name":"x","version":"1","description":"d","x-a":{"k":true}}`, true,
			map[string]string{"x-a": `{"k":true}`, "x-b": `[1, 2]`}},
		{"v2 unknown key", `{"abi":2,"kind":"stop","name":"x","extra":1}`, false, nil},
		{"v2 bad type", `{"abi":2,"kind":3,"name":"x","x-a":1}`, false, nil},
		{"v2 trailing", `{"abi":2,"kind":"stop","name":"x","x-a":1} {}`, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := wasmfile.UnmarshalMeta([]byte(tc.in))
			if !tc.ok {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.NoError(t, m.Validate())
			require.Len(t, m.X, len(tc.x))
			for k, v := range tc.x {
				assert.JSONEq(t, v, string(m.X[k]))
			}
		})
	}
	out, err := wasmfile.MarshalMeta(wasmfile.Meta{ABI: 2, Kind: "processor", Name: "allow",
		X: map[string]json.RawMessage{"x-z": []byte(` 1 `), "x-a": []byte(`{"k": [true]}`)}})
	require.NoError(t, err)
	assert.Equal(t, `{"abi":2,"kind":"processor","name":"allow","version":"","description":"","x-a":{"k":[true]},"x-z":1}`, string(out))
	back, err := wasmfile.UnmarshalMeta(out)
	require.NoError(t, err)
	assert.Len(t, back.X, 2)
	assert.Error(t, wasmfile.Meta{ABI: 1, Kind: "stop", Name: "x", X: map[string]json.RawMessage{"x-a": []byte("1")}}.Validate())
	assert.Error(t, wasmfile.Meta{ABI: 2, Kind: "stop", Name: "x", X: map[string]json.RawMessage{"a": []byte("1")}}.Validate())
}
