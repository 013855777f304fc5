package server

import (
	"encoding/json"
	"reflect"
	"strings"
	"sync"
)

// paramFields maps each JSON field name of samplingParams to the field's
// index in samplingFields, so that a sampling parameter is read by its
// sampling.Params key.
var paramFields = sync.OnceValue(func() map[string][]int {
	out := map[string][]int{}
	for _, f := range reflect.VisibleFields(reflect.TypeFor[samplingFields]()) {
		if len(f.Index) != 2 || f.Index[0] != 0 {
			continue // not one of the embedded samplingParams' fields
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		out[name] = f.Index
	}
	return out
})

// paramField is f's field of the request field key (an invalid Value
// when there is none).
func (f *samplingFields) paramField(key string) reflect.Value {
	i, ok := paramFields()[key]
	if !ok {
		return reflect.Value{}
	}
	return reflect.ValueOf(f).Elem().FieldByIndex(i)
}

// number is the request's value of the number parameter key (a *float64
// or *int field) and whether the request gives it.
func (f *samplingFields) number(key string) (float64, bool) {
	v := f.paramField(key)
	if !v.IsValid() || v.Kind() != reflect.Pointer || v.IsNil() {
		return 0, false
	}
	switch e := v.Elem(); e.Kind() {
	case reflect.Float64:
		return e.Float(), true
	case reflect.Int:
		return float64(e.Int()), true
	}
	return 0, false
}

// has reports whether the request gives the parameter key: a number, a
// non-empty list or object, or a raw value other than null.
func (f *samplingFields) has(key string) bool {
	v := f.paramField(key)
	if !v.IsValid() {
		return false
	}
	if raw, ok := v.Interface().(json.RawMessage); ok {
		return present(raw)
	}
	switch v.Kind() {
	case reflect.Pointer:
		return !v.IsNil()
	case reflect.Slice, reflect.Map:
		return v.Len() > 0
	}
	return false
}
