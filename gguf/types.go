package gguf

import "strconv"

// TensorType is a ggml tensor element type, numbered as ggml numbers it
// (the uint32 stored in a tensor info).
type TensorType uint32

// The ggml tensor types. Ids 4, 5, 31–33 and 36–38 belonged to types ggml has
// removed; they, and ids from 43 on, are unknown to this package.
const (
	TypeF32     TensorType = 0
	TypeF16     TensorType = 1
	TypeQ4_0    TensorType = 2
	TypeQ4_1    TensorType = 3
	TypeQ5_0    TensorType = 6
	TypeQ5_1    TensorType = 7
	TypeQ8_0    TensorType = 8
	TypeQ8_1    TensorType = 9
	TypeQ2_K    TensorType = 10
	TypeQ3_K    TensorType = 11
	TypeQ4_K    TensorType = 12
	TypeQ5_K    TensorType = 13
	TypeQ6_K    TensorType = 14
	TypeQ8_K    TensorType = 15
	TypeIQ2_XXS TensorType = 16
	TypeIQ2_XS  TensorType = 17
	TypeIQ3_XXS TensorType = 18
	TypeIQ1_S   TensorType = 19
	TypeIQ4_NL  TensorType = 20
	TypeIQ3_S   TensorType = 21
	TypeIQ2_S   TensorType = 22
	TypeIQ4_XS  TensorType = 23
	TypeI8      TensorType = 24
	TypeI16     TensorType = 25
	TypeI32     TensorType = 26
	TypeI64     TensorType = 27
	TypeF64     TensorType = 28
	TypeIQ1_M   TensorType = 29
	TypeBF16    TensorType = 30
	TypeTQ1_0   TensorType = 34
	TypeTQ2_0   TensorType = 35
	TypeMXFP4   TensorType = 39
	TypeNVFP4   TensorType = 40
	TypeQ1_0    TensorType = 41
	TypeQ2_0    TensorType = 42
)

// qkK is the number of elements in a k-quant super-block.
const qkK = 256

// typeInfo holds the format facts of one tensor type: its name and the size
// of one block in elements and in bytes.
type typeInfo struct {
	name      string
	blockSize int
	typeSize  int
}

var typeInfos = map[TensorType]typeInfo{
	TypeF32:     {"F32", 1, 4},
	TypeF16:     {"F16", 1, 2},
	TypeQ4_0:    {"Q4_0", 32, 2 + 16},
	TypeQ4_1:    {"Q4_1", 32, 2 + 2 + 16},
	TypeQ5_0:    {"Q5_0", 32, 2 + 4 + 16},
	TypeQ5_1:    {"Q5_1", 32, 2 + 2 + 4 + 16},
	TypeQ8_0:    {"Q8_0", 32, 2 + 32},
	TypeQ8_1:    {"Q8_1", 32, 2 + 2 + 32},
	TypeQ2_K:    {"Q2_K", qkK, 2 + 2 + qkK/16 + qkK/4},
	TypeQ3_K:    {"Q3_K", qkK, 2 + qkK/4 + qkK/8 + 12},
	TypeQ4_K:    {"Q4_K", qkK, 2 + 2 + qkK/2 + 12},
	TypeQ5_K:    {"Q5_K", qkK, 2 + 2 + qkK/2 + qkK/8 + 12},
	TypeQ6_K:    {"Q6_K", qkK, 2 + qkK/2 + qkK/4 + qkK/16},
	TypeQ8_K:    {"Q8_K", qkK, 4 + qkK + qkK/8},
	TypeIQ2_XXS: {"IQ2_XXS", qkK, 2 + qkK/4},
	TypeIQ2_XS:  {"IQ2_XS", qkK, 2 + qkK/4 + qkK/32},
	TypeIQ3_XXS: {"IQ3_XXS", qkK, 2 + qkK/4 + qkK/8},
	TypeIQ1_S:   {"IQ1_S", qkK, 2 + qkK/8 + qkK/16},
	TypeIQ4_NL:  {"IQ4_NL", 32, 2 + 16},
	TypeIQ3_S:   {"IQ3_S", qkK, 2 + qkK/4 + qkK/8 + qkK/32 + 4},
	TypeIQ2_S:   {"IQ2_S", qkK, 2 + qkK/4 + qkK/16},
	TypeIQ4_XS:  {"IQ4_XS", qkK, 2 + 2 + qkK/2 + qkK/64},
	TypeI8:      {"I8", 1, 1},
	TypeI16:     {"I16", 1, 2},
	TypeI32:     {"I32", 1, 4},
	TypeI64:     {"I64", 1, 8},
	TypeF64:     {"F64", 1, 8},
	TypeIQ1_M:   {"IQ1_M", qkK, qkK/8 + qkK/16 + qkK/32},
	TypeBF16:    {"BF16", 1, 2},
	TypeTQ1_0:   {"TQ1_0", qkK, 2 + 4*13},
	TypeTQ2_0:   {"TQ2_0", qkK, 2 + 64},
	TypeMXFP4:   {"MXFP4", 32, 1 + 16},
	TypeNVFP4:   {"NVFP4", 64, 4 + 32},
	TypeQ1_0:    {"Q1_0", 128, 2 + 16},
	TypeQ2_0:    {"Q2_0", 64, 2 + 16},
}

// Known reports whether t is a tensor type this package knows the layout of.
func (t TensorType) Known() bool {
	_, ok := typeInfos[t]
	return ok
}

// String returns ggml's upper-case name of the type ("Q4_K", "F32"), or
// "TensorType(N)" for an unknown id.
func (t TensorType) String() string {
	if ti, ok := typeInfos[t]; ok {
		return ti.name
	}
	return "TensorType(" + strconv.FormatUint(uint64(t), 10) + ")"
}

// BlockSize is the number of elements in one block of the type (1 for plain
// types like F32, 32 for Q8_0, 256 for the k-quants); 0 for an unknown type.
// A row's length (Dims[0]) must be a multiple of it.
func (t TensorType) BlockSize() int { return typeInfos[t].blockSize }

// TypeSize is the number of bytes one block of the type occupies (4 for F32,
// 34 for Q8_0, 144 for Q4_K); 0 for an unknown type.
func (t TensorType) TypeSize() int { return typeInfos[t].typeSize }

// RowSize returns the bytes of a row of n elements of type t, and false when
// t is unknown, n is negative or not a multiple of the block size.
func (t TensorType) RowSize(n int64) (int64, bool) {
	ti, ok := typeInfos[t]
	if !ok || n < 0 || n%int64(ti.blockSize) != 0 {
		return 0, false
	}
	return n / int64(ti.blockSize) * int64(ti.typeSize), true
}

// TensorTypeByName returns the type whose String is name ("Q4_K").
func TensorTypeByName(name string) (TensorType, bool) {
	for t, ti := range typeInfos {
		if ti.name == name {
			return t, true
		}
	}
	return 0, false
}

// ValueType is the type tag of a metadata value, numbered as GGUF numbers it.
type ValueType uint32

// The GGUF metadata value types.
const (
	ValueUint8   ValueType = 0
	ValueInt8    ValueType = 1
	ValueUint16  ValueType = 2
	ValueInt16   ValueType = 3
	ValueUint32  ValueType = 4
	ValueInt32   ValueType = 5
	ValueFloat32 ValueType = 6
	ValueBool    ValueType = 7
	ValueString  ValueType = 8
	ValueArray   ValueType = 9
	ValueUint64  ValueType = 10
	ValueInt64   ValueType = 11
	ValueFloat64 ValueType = 12
)

var valueTypeNames = [...]string{
	"uint8", "int8", "uint16", "int16", "uint32", "int32", "float32",
	"bool", "string", "array", "uint64", "int64", "float64",
}

// Known reports whether t is one of the thirteen GGUF value types.
func (t ValueType) Known() bool { return int(t) < len(valueTypeNames) }

// String returns the lower-case name of the type ("uint32", "array").
func (t ValueType) String() string {
	if t.Known() {
		return valueTypeNames[t]
	}
	return "ValueType(" + strconv.FormatUint(uint64(t), 10) + ")"
}

// fixedSize is the encoded size in bytes of a scalar of type t, or 0 for
// strings, arrays and unknown types.
func (t ValueType) fixedSize() int {
	switch t {
	case ValueUint8, ValueInt8, ValueBool:
		return 1
	case ValueUint16, ValueInt16:
		return 2
	case ValueUint32, ValueInt32, ValueFloat32:
		return 4
	case ValueUint64, ValueInt64, ValueFloat64:
		return 8
	}
	return 0
}

// minSize is the smallest encoding of a value of type t: a string is at
// least its 8-byte length, an array its 4-byte type and 8-byte count.
func (t ValueType) minSize() int64 {
	switch t {
	case ValueString:
		return 8
	case ValueArray:
		return 12
	}
	return int64(t.fixedSize())
}
