package gguf

import "math"

// Lookup returns the value stored under key (see KV for its Go types).
func (f *File) Lookup(key string) (any, bool) {
	i, ok := f.kvIndex[key]
	if !ok {
		return nil, false
	}
	return f.KV[i].Value, true
}

// get returns the value under key or a *KeyError wrapping ErrKeyNotFound.
func (f *File) get(key, want string) (any, error) {
	v, ok := f.Lookup(key)
	if !ok {
		return nil, &KeyError{Key: key, Want: want, Err: ErrKeyNotFound}
	}
	return v, nil
}

func mismatch(key, want string, v any) error {
	return &KeyError{Key: key, Want: want, Got: typeName(v), Err: ErrTypeMismatch}
}

// String returns the string stored under key.
//
// Errors: a *KeyError wrapping ErrKeyNotFound or ErrTypeMismatch.
func (f *File) String(key string) (string, error) {
	v, err := f.get(key, "string")
	if err != nil {
		return "", err
	}
	s, ok := v.(string)
	if !ok {
		return "", mismatch(key, "string", v)
	}
	return s, nil
}

// Bool returns the bool stored under key.
//
// Errors: a *KeyError wrapping ErrKeyNotFound or ErrTypeMismatch.
func (f *File) Bool(key string) (bool, error) {
	v, err := f.get(key, "bool")
	if err != nil {
		return false, err
	}
	b, ok := v.(bool)
	if !ok {
		return false, mismatch(key, "bool", v)
	}
	return b, nil
}

// Uint32 returns the integer stored under key; any integer type is accepted
// when its value fits in a uint32.
//
// Errors: a *KeyError wrapping ErrKeyNotFound or ErrTypeMismatch.
func (f *File) Uint32(key string) (uint32, error) {
	v, err := f.get(key, "uint32")
	if err != nil {
		return 0, err
	}
	i, u, signed, ok := integer(v)
	switch {
	case ok && signed && i >= 0 && i <= math.MaxUint32:
		return uint32(i), nil
	case ok && !signed && u <= math.MaxUint32:
		return uint32(u), nil
	}
	return 0, mismatch(key, "uint32", v)
}

// Int32 returns the integer stored under key; any integer type is accepted
// when its value fits in an int32.
//
// Errors: a *KeyError wrapping ErrKeyNotFound or ErrTypeMismatch.
func (f *File) Int32(key string) (int32, error) {
	v, err := f.get(key, "int32")
	if err != nil {
		return 0, err
	}
	if n, ok := toInt32(v); ok {
		return n, nil
	}
	return 0, mismatch(key, "int32", v)
}

// Uint64 returns the integer stored under key; any non-negative integer is
// accepted.
//
// Errors: a *KeyError wrapping ErrKeyNotFound or ErrTypeMismatch.
func (f *File) Uint64(key string) (uint64, error) {
	v, err := f.get(key, "uint64")
	if err != nil {
		return 0, err
	}
	i, u, signed, ok := integer(v)
	switch {
	case ok && signed && i >= 0:
		return uint64(i), nil
	case ok && !signed:
		return u, nil
	}
	return 0, mismatch(key, "uint64", v)
}

// Float32 returns the float stored under key; a float64 is accepted when it
// converts to float32 exactly.
//
// Errors: a *KeyError wrapping ErrKeyNotFound or ErrTypeMismatch.
func (f *File) Float32(key string) (float32, error) {
	v, err := f.get(key, "float32")
	if err != nil {
		return 0, err
	}
	switch x := v.(type) {
	case float32:
		return x, nil
	case float64:
		if float64(float32(x)) == x {
			return float32(x), nil
		}
	}
	return 0, mismatch(key, "float32", v)
}

// Strings returns the string array stored under key.
//
// # Notes
//
// The slice is the File's own; callers must not modify it.
//
// Errors: a *KeyError wrapping ErrKeyNotFound or ErrTypeMismatch.
func (f *File) Strings(key string) ([]string, error) {
	v, err := f.get(key, "[]string")
	if err != nil {
		return nil, err
	}
	if a, ok := v.(Array); ok {
		if s, ok := a.Values.([]string); ok {
			return s, nil
		}
	}
	return nil, mismatch(key, "[]string", v)
}

// Float32s returns the float32 array stored under key.
//
// # Notes
//
// The slice is the File's own; callers must not modify it.
//
// Errors: a *KeyError wrapping ErrKeyNotFound or ErrTypeMismatch.
func (f *File) Float32s(key string) ([]float32, error) {
	v, err := f.get(key, "[]float32")
	if err != nil {
		return nil, err
	}
	if a, ok := v.(Array); ok {
		if s, ok := a.Values.([]float32); ok {
			return s, nil
		}
	}
	return nil, mismatch(key, "[]float32", v)
}

// Int32s returns the integer array stored under key as a new []int32; any
// integer element type is accepted when every element fits in an int32.
//
// Errors: a *KeyError wrapping ErrKeyNotFound or ErrTypeMismatch.
func (f *File) Int32s(key string) ([]int32, error) {
	v, err := f.get(key, "[]int32")
	if err != nil {
		return nil, err
	}
	a, ok := v.(Array)
	if !ok || a.Elem == ValueArray || a.Elem == ValueString || a.Elem == ValueBool ||
		a.Elem == ValueFloat32 || a.Elem == ValueFloat64 {
		return nil, mismatch(key, "[]int32", v)
	}
	out := make([]int32, a.Len())
	for i := range out {
		n, ok := toInt32(index(a, i))
		if !ok {
			return nil, mismatch(key, "[]int32", v)
		}
		out[i] = n
	}
	return out, nil
}

// index returns element i of an integer array.
func index(a Array, i int) any {
	switch s := a.Values.(type) {
	case []uint8:
		return s[i]
	case []int8:
		return s[i]
	case []uint16:
		return s[i]
	case []int16:
		return s[i]
	case []uint32:
		return s[i]
	case []int32:
		return s[i]
	case []uint64:
		return s[i]
	case []int64:
		return s[i]
	}
	return nil
}

func toInt32(v any) (int32, bool) {
	i, u, signed, ok := integer(v)
	switch {
	case ok && signed && i >= math.MinInt32 && i <= math.MaxInt32:
		return int32(i), true
	case ok && !signed && u <= math.MaxInt32:
		return int32(u), true
	}
	return 0, false
}

// integer widens an integer value: signed types to i, unsigned to u.
func integer(v any) (i int64, u uint64, signed, ok bool) {
	switch x := v.(type) {
	case int8:
		return int64(x), 0, true, true
	case int16:
		return int64(x), 0, true, true
	case int32:
		return int64(x), 0, true, true
	case int64:
		return x, 0, true, true
	case uint8:
		return 0, uint64(x), false, true
	case uint16:
		return 0, uint64(x), false, true
	case uint32:
		return 0, uint64(x), false, true
	case uint64:
		return 0, x, false, true
	}
	return 0, 0, false, false
}
