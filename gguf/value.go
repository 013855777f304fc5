package gguf

import "fmt"

// KV is one metadata key-value pair.
//
// Value holds one of the Go types uint8, int8, uint16, int16, uint32, int32,
// float32, bool, string, uint64, int64, float64 or Array, matching the GGUF
// value types one to one. The reader always returns arrays as Array; the
// Writer also accepts a plain slice of those scalar types ([]string,
// []int32, …).
type KV struct {
	Key   string
	Value any
}

// Type returns the GGUF type of kv.Value, and false when the Go type has no
// GGUF counterpart.
func (kv KV) Type() (ValueType, bool) { return ValueTypeOf(kv.Value) }

// Array is a metadata array value.
//
// Values is a slice of the element type: []uint8, []int8, []uint16, []int16,
// []uint32, []int32, []float32, []bool, []string, []uint64, []int64,
// []float64, or []Array when Elem is ValueArray (a nested array).
type Array struct {
	Elem   ValueType
	Values any
}

// Len is the number of elements, or -1 when Values is not a slice this
// package knows.
func (a Array) Len() int {
	switch v := a.Values.(type) {
	case []uint8:
		return len(v)
	case []int8:
		return len(v)
	case []uint16:
		return len(v)
	case []int16:
		return len(v)
	case []uint32:
		return len(v)
	case []int32:
		return len(v)
	case []float32:
		return len(v)
	case []bool:
		return len(v)
	case []string:
		return len(v)
	case []uint64:
		return len(v)
	case []int64:
		return len(v)
	case []float64:
		return len(v)
	case []Array:
		return len(v)
	}
	return -1
}

// ValueTypeOf returns the GGUF type of a Go value as KV.Value holds it; a
// plain slice of a scalar type counts as an array.
func ValueTypeOf(v any) (ValueType, bool) {
	switch v.(type) {
	case uint8:
		return ValueUint8, true
	case int8:
		return ValueInt8, true
	case uint16:
		return ValueUint16, true
	case int16:
		return ValueInt16, true
	case uint32:
		return ValueUint32, true
	case int32:
		return ValueInt32, true
	case float32:
		return ValueFloat32, true
	case bool:
		return ValueBool, true
	case string:
		return ValueString, true
	case uint64:
		return ValueUint64, true
	case int64:
		return ValueInt64, true
	case float64:
		return ValueFloat64, true
	case Array, []uint8, []int8, []uint16, []int16, []uint32, []int32,
		[]float32, []bool, []string, []uint64, []int64, []float64:
		return ValueArray, true
	}
	return 0, false
}

// asArray returns v as an Array when it is one or a plain scalar slice.
func asArray(v any) (Array, bool) {
	switch s := v.(type) {
	case Array:
		return s, true
	case []uint8:
		return Array{ValueUint8, s}, true
	case []int8:
		return Array{ValueInt8, s}, true
	case []uint16:
		return Array{ValueUint16, s}, true
	case []int16:
		return Array{ValueInt16, s}, true
	case []uint32:
		return Array{ValueUint32, s}, true
	case []int32:
		return Array{ValueInt32, s}, true
	case []float32:
		return Array{ValueFloat32, s}, true
	case []bool:
		return Array{ValueBool, s}, true
	case []string:
		return Array{ValueString, s}, true
	case []uint64:
		return Array{ValueUint64, s}, true
	case []int64:
		return Array{ValueInt64, s}, true
	case []float64:
		return Array{ValueFloat64, s}, true
	}
	return Array{}, false
}

// typeName describes a value's type for error messages: "uint32",
// "[]string", "[][]int32".
func typeName(v any) string {
	if a, ok := asArray(v); ok {
		if a.Elem == ValueArray {
			if inner, ok := a.Values.([]Array); ok && len(inner) > 0 {
				return "[]" + typeName(inner[0])
			}
			return "[][]?"
		}
		return "[]" + a.Elem.String()
	}
	if t, ok := ValueTypeOf(v); ok {
		return t.String()
	}
	return fmt.Sprintf("%T", v)
}
