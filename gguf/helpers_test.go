package gguf

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// sampleKV is metadata covering every value type, empty and nested arrays.
func sampleKV() []KV {
	return []KV{
		{"general.architecture", "llama"},
		{"general.alignment", uint32(64)},
		{"u8", uint8(200)},
		{"i8", int8(-100)},
		{"u16", uint16(60000)},
		{"i16", int16(-30000)},
		{"u32", uint32(4000000000)},
		{"i32", int32(-2000000000)},
		{"f32", float32(1.5)},
		{"bool", true},
		{"str", "héllo"},
		{"u64", uint64(1) << 60},
		{"i64", int64(-1) << 60},
		{"f64", 0.1},
		{"small.u64", uint64(7)},
		{"neg.i8", int8(-1)},
		{"exact.f64", 0.5},
		{"tokens", []string{"<unk>", "a", "", "▁b"}},
		{"scores", []float32{0, -1.5, 2}},
		{"types", []int32{1, 2, 3}},
		{"u8s", []uint8{1, 2, 255}},
		{"i64s", []int64{-5, 5}},
		{"big.u64s", []uint64{1 << 40}},
		{"bools", []bool{true, false}},
		{"empty", []string{}},
		{"nested", Array{ValueArray, []Array{
			{ValueInt32, []int32{1, 2}},
			{ValueString, []string{"x"}},
			{ValueArray, []Array{{ValueUint8, []uint8{}}}},
		}}},
	}
}

// sampleTensors are small tensors of several types, one of them empty.
func sampleTensors() []Tensor {
	mk := func(n int, seed byte) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = seed + byte(i*7)
		}
		return b
	}
	f32 := make([]byte, 0, 4*6)
	for i := range 6 {
		f32 = binary.LittleEndian.AppendUint32(f32, math.Float32bits(float32(i)+0.25))
	}
	return []Tensor{
		{Name: "token_embd.weight", Type: TypeF32, Dims: []int64{3, 2}, Data: f32},
		{Name: "blk.0.attn_q.weight", Type: TypeQ4_K, Dims: []int64{256, 2}, Data: mk(2*144, 1)},
		{Name: "blk.0.ffn_down.weight", Type: TypeQ8_0, Dims: []int64{64, 1, 1, 3}, Data: mk(3*2*34, 2)},
		{Name: "empty", Type: TypeF16, Dims: []int64{0}, Data: []byte{}},
		{Name: "odd.f16", Type: TypeF16, Dims: []int64{5}, Data: mk(10, 3)},
	}
}

// writeSample writes sampleKV and sampleTensors to a temporary file.
func writeSample(t testing.TB) (string, []byte) {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, sampleKV(), sampleTensors()))
	path := filepath.Join(t.TempDir(), "sample.gguf")
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
	return path, buf.Bytes()
}

// raw hand-assembles GGUF bytes, including malformed ones.
type raw struct{ b []byte }

func (r *raw) magic() *raw          { r.b = append(r.b, Magic...); return r }
func (r *raw) u32(v uint32) *raw    { r.b = binary.LittleEndian.AppendUint32(r.b, v); return r }
func (r *raw) u64(v uint64) *raw    { r.b = binary.LittleEndian.AppendUint64(r.b, v); return r }
func (r *raw) bytes(p ...byte) *raw { r.b = append(r.b, p...); return r }
func (r *raw) str(s string) *raw    { return r.u64(uint64(len(s))).bytes([]byte(s)...) }
func (r *raw) pad(align int) *raw {
	r.b = append(r.b, make([]byte, (align-len(r.b)%align)%align)...)
	return r
}
func (r *raw) zeros(n int) *raw           { r.b = append(r.b, make([]byte, n)...); return r }
func (r *raw) header(nT, nKV uint64) *raw { return r.magic().u32(3).u64(nT).u64(nKV) }

// kvU32 appends a uint32 key-value pair.
func (r *raw) kvU32(key string, v uint32) *raw { return r.str(key).u32(uint32(ValueUint32)).u32(v) }

// tensor appends a tensor info.
func (r *raw) tensor(name string, typ TensorType, off uint64, dims ...uint64) *raw {
	r.str(name).u32(uint32(len(dims)))
	for _, d := range dims {
		r.u64(d)
	}
	return r.u32(uint32(typ)).u64(off)
}
