package server

import (
	"encoding/json"
	"reflect"
	"strings"
	"sync"

	"github.com/realizar-host/realizar-host/engine"
	"github.com/realizar-host/realizar-host/internal/turnfields"
)

// embeddedFields maps each JSON field name of samplingFields' embedded
// struct of type t to the field's index in samplingFields.
func embeddedFields(t reflect.Type) map[string][]int {
	out := map[string][]int{}
	outer := reflect.TypeFor[samplingFields]()
	emb, ok := outer.FieldByName(t.Name())
	if !ok || !emb.Anonymous {
		return out
	}
	for _, f := range reflect.VisibleFields(outer) {
		if len(f.Index) != 2 || f.Index[0] != emb.Index[0] {
			continue // not one of t's fields
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		out[name] = f.Index
	}
	return out
}

// paramFields maps each JSON field name of samplingParams to the field's
// index in samplingFields, so that a sampling parameter is read by its
// sampling.Params key; turnFields does the same for turnParams and
// turnfields.Fields.
var (
	paramFields = sync.OnceValue(func() map[string][]int { return embeddedFields(reflect.TypeFor[samplingParams]()) })
	turnFields  = sync.OnceValue(func() map[string][]int { return embeddedFields(reflect.TypeFor[turnParams]()) })
)

// paramField is f's field of the request field key (an invalid Value
// when there is none).
func (f *samplingFields) paramField(key string) reflect.Value {
	return f.embeddedField(paramFields(), key)
}

// turnField is f's field of the turn field key (turnfields.Fields; an
// invalid Value when there is none).
func (f *samplingFields) turnField(key string) reflect.Value {
	return f.embeddedField(turnFields(), key)
}

// embeddedField is f's field at index[key] (an invalid Value when key has
// none).
func (f *samplingFields) embeddedField(index map[string][]int, key string) reflect.Value {
	i, ok := index[key]
	if !ok {
		return reflect.Value{}
	}
	return reflect.ValueOf(f).Elem().FieldByIndex(i)
}

// applyTurn sets cfg's fields of turnfields.Fields: each to the
// request's value, or to its default where the request has none (or
// null).
func (f *samplingFields) applyTurn(cfg *engine.GenerateConfig) {
	turnfields.Apply(cfg, func(tf turnfields.Field) *bool {
		v := f.turnField(tf.Key)
		if !v.IsValid() {
			return nil // turn_fields.go is stale (TestTurnFieldsFile)
		}
		p, _ := v.Interface().(*bool)
		return p
	})
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
