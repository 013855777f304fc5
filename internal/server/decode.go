package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"reflect"
	"strings"

	"github.com/realizar-host/realizar-host/internal/plugins/sampling"
)

// decodeJSON reads the request body, one JSON object, into v (a pointer
// to a request struct). A body that is not one JSON object is a 400; a
// value of the wrong JSON type, or a number out of its field's range, is a
// 400 whose param and message name the request field (messages[*].role)
// and the JSON types, never encoding/json's Go types.
func decodeJSON(w http.ResponseWriter, r *http.Request, v any) error {
	body, err := readBody(w, r)
	if err != nil {
		return err
	}
	return decodeBody(body, v)
}

// readBody reads the request body, at most maxBodyBytes; more is a 413.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return nil, &APIError{Status: http.StatusRequestEntityTooLarge, Type: typeInvalidRequest, Code: "body_too_large",
			Message: fmt.Sprintf("the request body is over %d bytes", maxBodyBytes)}
	}
	return b, err
}

// decodeBody decodes body, one JSON value, into v (see decodeJSON).
func decodeBody(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	err := dec.Decode(v)
	if err == nil {
		// One value: anything but space after it is malformed.
		if _, more := dec.Token(); more != io.EOF {
			err = errTrailing
		}
	}
	if err == nil {
		return nil
	}
	return decodeError(reflect.TypeOf(v), err)
}

// errTrailing is a body with more after its JSON value.
var errTrailing = errors.New("more follows the body's JSON object")

// decodeError is the 400 for err, a failure of encoding/json decoding into
// a value of type root.
func decodeError(root reflect.Type, err error) *APIError {
	var fe *fieldError
	if errors.As(err, &fe) {
		return badRequest(fe.param, "%s", fe.msg)
	}
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		if typeErr.Field == "" {
			return badRequest("", "the body must be a JSON object, not %s", jsonValue(typeErr.Value))
		}
		field := fieldPath(root, typeErr.Field, typeErr.Type)
		if p, ok := sampling.Lookup(field); ok && p.Type == sampling.Int {
			// A sampling parameter's integer: its own range (sampling.Params),
			// not its Go type's.
			return badRequest(field, "%s must be an integer %s, not %s", field, p.Want(), jsonValue(typeErr.Value))
		}
		return badRequest(field, "%s must be %s, not %s", field, wantedJSON(typeErr.Type, typeErr.Value), jsonValue(typeErr.Value))
	}
	var syn *json.SyntaxError
	switch {
	case errors.As(err, &syn):
		return badRequest("", "the body is not valid JSON: %v (at byte %d)", syn, syn.Offset)
	case errors.Is(err, io.EOF):
		return badRequest("", "the body is empty; this endpoint takes a JSON object")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return badRequest("", "the body ends inside its JSON object")
	case errors.Is(err, errTrailing):
		return badRequest("", "the body must be one JSON object, and more follows it")
	}
	// Nothing else comes from the decoder; its text is not shown.
	return badRequest("", "the body is not a JSON object this endpoint takes")
}

// fieldError is a request field's value that a field's own decoder
// (stopField, promptField) refuses: param names the field, msg says what
// it must be.
type fieldError struct{ param, msg string }

func (e *fieldError) Error() string { return e.msg }

// jsonValue names a JSON value as encoding/json's UnmarshalTypeError
// describes it ("bool", "array", "number 1e309").
func jsonValue(v string) string {
	switch {
	case v == "bool":
		return "a boolean"
	case v == "array" || v == "object":
		return "an " + v
	case v == "string" || v == "number":
		return "a " + v
	case strings.HasPrefix(v, "number "):
		return strings.TrimPrefix(v, "number ")
	}
	return v
}

// wantedJSON is what a field of Go type t takes, in JSON terms; got is
// the value's description (a number out of an integer's or a float's range
// is named with the range).
func wantedJSON(t reflect.Type, got string) string {
	t = deref(t)
	number := strings.HasPrefix(got, "number ")
	switch t.Kind() {
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if number {
			bits := t.Bits()
			return fmt.Sprintf("an integer in [%d, %d], in digits (no fraction or exponent)", int64(-1)<<(bits-1), int64(1)<<(bits-1)-1)
		}
		return "an integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if number {
			return fmt.Sprintf("an integer in [0, %d], in digits (no fraction or exponent)", uint64(1)<<t.Bits()-1)
		}
		return "an integer"
	case reflect.Float32:
		if number {
			return fmt.Sprintf("a number of magnitude at most %.4g", math.MaxFloat32)
		}
		return "a number"
	case reflect.Float64:
		if number {
			return fmt.Sprintf("a number of magnitude at most %.4g", math.MaxFloat64)
		}
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "another JSON type"
}

// fieldPath is the request's name for a field path encoding/json reports
// in an error on a value of type leaf, walked from root: without the Go
// names of embedded structs ("samplingFields.temperature" is
// "temperature"), and with JSONPath's "[*]" where the path enters an
// array's elements or an object's values ("messages.role" is
// "messages[*].role": encoding/json does not say which one).
func fieldPath(root reflect.Type, path string, leaf reflect.Type) string {
	var b strings.Builder
	t := deref(root)
	for _, seg := range strings.Split(path, ".") {
		if t == nil || t.Kind() != reflect.Struct {
			// Not a struct: the path as encoding/json gives it.
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(seg)
			continue
		}
		f, ok := jsonField(t, seg)
		if !ok {
			if ef, found := t.FieldByName(seg); found && ef.Anonymous {
				t = deref(ef.Type) // an embedded struct's Go name
				continue
			}
			t = nil
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(seg)
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(seg)
		t = deref(f.Type)
		for (t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map) && t != deref(leaf) {
			if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 {
				break // []byte (json.RawMessage): a value of its own
			}
			b.WriteString("[*]")
			t = deref(t.Elem())
		}
	}
	return b.String()
}

// jsonField is struct t's field named name in JSON (its tag's name), not
// counting embedded structs' fields.
func jsonField(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous || !f.IsExported() {
			continue
		}
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if tag == "-" {
			continue
		}
		if tag == "" {
			tag = f.Name
		}
		if strings.EqualFold(tag, name) {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func deref(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}
