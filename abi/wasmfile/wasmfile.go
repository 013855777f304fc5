package wasmfile

import (
	"bytes"
	"errors"
	"fmt"
	"unicode/utf8"
)

// Magic is the first 8 bytes of a WebAssembly 1.0 binary: "\0asm" and version 1.
var Magic = []byte{0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00}

// ErrNotWasm: the bytes do not start with Magic.
var ErrNotWasm = errors.New("wasmfile: not a WebAssembly 1.0 binary")

// FormatError is a malformed binary: what was wrong and at which byte offset.
type FormatError struct {
	Offset int
	Reason string
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("wasmfile: offset %d: %s", e.Offset, e.Reason)
}

// Section ids this package reads.
const (
	SectionCustom = 0
	SectionType   = 1
	SectionImport = 2
	SectionMemory = 5
	SectionExport = 7
)

// External kinds of imports and exports.
const (
	ExternFunc   = 0
	ExternTable  = 1
	ExternMemory = 2
	ExternGlobal = 3
)

// FuncType is a function signature; value types are the binary's bytes
// (0x7f i32, 0x7e i64, 0x7d f32, 0x7c f64, ...).
type FuncType struct {
	Params, Results []byte
}

// Limits are a memory's sizes in pages (65536 bytes each); HasMax is false
// when the binary declares no maximum.
type Limits struct {
	Min, Max uint32
	HasMax   bool
}

// Import is one entry of the import section. Type is set for functions,
// Memory for memories.
type Import struct {
	Module, Name string
	Kind         byte
	Type         FuncType
	Memory       Limits
}

// Export is one entry of the export section.
type Export struct {
	Name  string
	Kind  byte
	Index uint32
}

// Custom is a custom section; Payload is a view into the parsed bytes.
type Custom struct {
	Name    string
	Offset  int // of the section's id byte
	Payload []byte
}

// Module is what Parse reads of a binary: enough to identify and vet a
// plugin before compiling it. Function bodies are not looked at.
type Module struct {
	Imports  []Import
	Exports  []Export
	Memories []Limits // declared (not imported) memories
	Customs  []Custom
}

// Export returns the export called name, if any.
func (m *Module) Export(name string) (Export, bool) {
	for _, e := range m.Exports {
		if e.Name == name {
			return e, true
		}
	}
	return Export{}, false
}

// CustomSection returns the payload of the last custom section called name.
func (m *Module) CustomSection(name string) ([]byte, bool) {
	for i := len(m.Customs) - 1; i >= 0; i-- {
		if m.Customs[i].Name == name {
			return m.Customs[i].Payload, true
		}
	}
	return nil, false
}

// Parse reads the type, import, memory, export and custom sections of a
// WebAssembly binary. It returns ErrNotWasm for a wrong magic or version and
// a *FormatError for anything malformed in the sections it reads or in the
// section framing. It never panics and allocates in proportion to len(b).
func Parse(b []byte) (*Module, error) {
	if len(b) < len(Magic) || !bytes.Equal(b[:len(Magic)], Magic) {
		return nil, ErrNotWasm
	}
	m := &Module{}
	var types []FuncType
	err := walkSections(b, func(id byte, start int, body *reader) error {
		err := m.section(id, start, body, &types)
		if err == nil && id != SectionCustom && body.off != len(body.b) {
			err = &FormatError{body.off, fmt.Sprintf("section %d has %d unread bytes", id, len(body.b)-body.off)}
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// section reads one section's body into m; other sections are skipped.
func (m *Module) section(id byte, start int, body *reader, types *[]FuncType) error {
	switch id {
	case SectionCustom:
		name, err := body.name()
		if err != nil {
			return err
		}
		m.Customs = append(m.Customs, Custom{Name: name, Offset: start, Payload: body.rest()})
	case SectionType:
		return body.vec(func(r *reader) error {
			t, err := r.funcType()
			*types = append(*types, t)
			return err
		})
	case SectionImport:
		return body.vec(func(r *reader) error {
			imp, err := r.importEntry(*types)
			m.Imports = append(m.Imports, imp)
			return err
		})
	case SectionMemory:
		return body.vec(func(r *reader) error {
			l, err := r.limits()
			m.Memories = append(m.Memories, l)
			return err
		})
	case SectionExport:
		return body.vec(func(r *reader) error {
			var e Export
			var err error
			if e.Name, err = r.name(); err != nil {
				return err
			}
			if e.Kind, err = r.byte(); err != nil {
				return err
			}
			e.Index, err = r.u32()
			m.Exports = append(m.Exports, e)
			return err
		})
	default:
		body.off = len(body.b)
	}
	return nil
}

// walkSections calls fn for each section with a reader over its body;
// start is the offset of the section's id byte.
func walkSections(b []byte, fn func(id byte, start int, body *reader) error) error {
	r := &reader{b: b, off: len(Magic)}
	for r.off < len(b) {
		start := r.off
		id, _ := r.byte()
		size, err := r.u32()
		if err != nil {
			return err
		}
		if int(size) > len(b)-r.off {
			return &FormatError{start, fmt.Sprintf("section %d of %d bytes runs past the end", id, size)}
		}
		body := &reader{b: b[:r.off+int(size)], off: r.off}
		if err := fn(id, start, body); err != nil {
			return err
		}
		r.off += int(size)
	}
	return nil
}

// SetCustomSection returns a copy of module with every custom section called
// name removed and one new custom section (name, payload) appended at the
// end. Applying it twice with the same arguments gives the same bytes.
func SetCustomSection(module []byte, name string, payload []byte) ([]byte, error) {
	if len(module) < len(Magic) || !bytes.Equal(module[:len(Magic)], Magic) {
		return nil, ErrNotWasm
	}
	out := append([]byte(nil), module[:len(Magic)]...)
	err := walkSections(module, func(id byte, start int, body *reader) error {
		end := len(body.b)
		if id == SectionCustom {
			n, err := body.name()
			if err != nil {
				return err
			}
			if n == name {
				return nil
			}
		}
		out = append(out, module[start:end]...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	var sec []byte
	sec = AppendU32(sec, uint32(len(name)))
	sec = append(sec, name...)
	sec = append(sec, payload...)
	out = append(out, SectionCustom)
	out = AppendU32(out, uint32(len(sec)))
	return append(out, sec...), nil
}

// AppendU32 appends v as an unsigned LEB128 (1 to 5 bytes), the binary
// format's integer encoding, for writers and tests that build modules.
func AppendU32(b []byte, v uint32) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// reader reads b from off; every error is a *FormatError at the failing offset.
type reader struct {
	b   []byte
	off int
}

func (r *reader) fail(reason string) error { return &FormatError{r.off, reason} }

func (r *reader) rest() []byte {
	p := r.b[r.off:]
	r.off = len(r.b)
	return p
}

func (r *reader) byte() (byte, error) {
	if r.off >= len(r.b) {
		return 0, r.fail("unexpected end")
	}
	c := r.b[r.off]
	r.off++
	return c, nil
}

// u32 reads an unsigned LEB128 of at most 5 bytes that fits 32 bits.
func (r *reader) u32() (uint32, error) {
	var v uint32
	for i := 0; i < 5; i++ {
		c, err := r.byte()
		if err != nil {
			return 0, err
		}
		if i == 4 && c > 0x0f {
			return 0, r.fail("integer overflows 32 bits")
		}
		v |= uint32(c&0x7f) << (7 * i)
		if c&0x80 == 0 {
			return v, nil
		}
	}
	return 0, r.fail("integer longer than 5 bytes")
}

func (r *reader) bytes(n uint32) ([]byte, error) {
	if int(n) > len(r.b)-r.off {
		return nil, r.fail(fmt.Sprintf("%d bytes run past the end", n))
	}
	p := r.b[r.off : r.off+int(n)]
	r.off += int(n)
	return p, nil
}

func (r *reader) name() (string, error) {
	n, err := r.u32()
	if err != nil {
		return "", err
	}
	p, err := r.bytes(n)
	if err != nil {
		return "", err
	}
	if !utf8.Valid(p) {
		return "", r.fail("name is not UTF-8")
	}
	return string(p), nil
}

// vec reads a count and calls fn that many times. Every entry takes at least
// one byte, so a count over the bytes left is refused before looping.
func (r *reader) vec(fn func(*reader) error) error {
	n, err := r.u32()
	if err != nil {
		return err
	}
	if int(n) > len(r.b)-r.off {
		return r.fail(fmt.Sprintf("count %d exceeds the bytes left", n))
	}
	for i := uint32(0); i < n; i++ {
		if err := fn(r); err != nil {
			return err
		}
	}
	return nil
}

func (r *reader) valTypes() ([]byte, error) {
	n, err := r.u32()
	if err != nil {
		return nil, err
	}
	p, err := r.bytes(n)
	if err != nil {
		return nil, err
	}
	for _, t := range p {
		switch t {
		case 0x7f, 0x7e, 0x7d, 0x7c, 0x7b, 0x70, 0x6f:
		default:
			return nil, r.fail(fmt.Sprintf("value type 0x%02x not supported", t))
		}
	}
	return p, nil
}

func (r *reader) funcType() (FuncType, error) {
	form, err := r.byte()
	if err != nil {
		return FuncType{}, err
	}
	if form != 0x60 {
		return FuncType{}, r.fail(fmt.Sprintf("type form 0x%02x is not a function type", form))
	}
	var t FuncType
	if t.Params, err = r.valTypes(); err != nil {
		return t, err
	}
	t.Results, err = r.valTypes()
	return t, err
}

func (r *reader) limits() (Limits, error) {
	flags, err := r.byte()
	if err != nil {
		return Limits{}, err
	}
	if flags > 3 {
		return Limits{}, r.fail(fmt.Sprintf("limits flags 0x%02x not supported", flags))
	}
	var l Limits
	if l.Min, err = r.u32(); err != nil {
		return l, err
	}
	if flags&1 != 0 {
		l.HasMax = true
		if l.Max, err = r.u32(); err != nil {
			return l, err
		}
	}
	return l, nil
}

func (r *reader) importEntry(types []FuncType) (Import, error) {
	var imp Import
	var err error
	if imp.Module, err = r.name(); err != nil {
		return imp, err
	}
	if imp.Name, err = r.name(); err != nil {
		return imp, err
	}
	if imp.Kind, err = r.byte(); err != nil {
		return imp, err
	}
	switch imp.Kind {
	case ExternFunc:
		idx, err := r.u32()
		if err != nil {
			return imp, err
		}
		if int(idx) >= len(types) {
			return imp, r.fail(fmt.Sprintf("import %s.%s: type index %d out of range", imp.Module, imp.Name, idx))
		}
		imp.Type = types[idx]
	case ExternTable:
		if _, err := r.byte(); err != nil {
			return imp, err
		}
		_, err = r.limits()
	case ExternMemory:
		imp.Memory, err = r.limits()
	case ExternGlobal:
		if _, err := r.byte(); err != nil {
			return imp, err
		}
		_, err = r.byte()
	default:
		return imp, r.fail(fmt.Sprintf("import kind 0x%02x not supported", imp.Kind))
	}
	return imp, err
}
