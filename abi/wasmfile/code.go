package wasmfile

import (
	"errors"
	"fmt"
)

// SectionCode is the id of the code section (function bodies).
const SectionCode = 10

// ErrCodeLimit is wrapped by every *CodeLimitError.
var ErrCodeLimit = errors.New("wasmfile: code past a compile limit")

// CodeLimits cap what ScanCode accepts: the shapes whose compilation time
// or memory grows faster than their size (deeply nested blocks, a br_table
// with a million targets, a function with a million locals). Zero fields
// are unlimited.
type CodeLimits struct {
	Functions int // function bodies in the module
	Depth     int // nesting of block, loop and if in one function
	BrTable   int // targets of one br_table
	Locals    int // declared locals of one function
	BodyBytes int // bytes of one function body
}

// DefaultCodeLimits are the limits the host applies before compiling an
// upload. The Go guests nest deepest and have the largest br_tables of the
// modules the repository ships (the grammar processor: depth 642; the
// chat-template guest: a br_table of 1,144 targets, bodies of 50 KB), the
// C, Rust and AssemblyScript ones stay under 20 and 100; the limits are
// about twice that. wazero's compile time grows about quadratically with
// both (measured on this 2-core machine under load: depth 1,000 in 78 ms,
// 4,000 in 0.9 s, 8,000 in 7.2 s; a br_table of 2,000 targets in 0.2 s,
// 20,000 in 3.0 s, 60,000 in 16.7 s).
var DefaultCodeLimits = CodeLimits{Functions: 100_000, Depth: 1_500, BrTable: 2_500, Locals: 50_000, BodyBytes: 4 << 20}

// CodeLimitError is a module past one of its CodeLimits: which limit,
// in which function (its index among the module's bodies) and the byte
// offset where it was passed.
type CodeLimitError struct {
	Limit    string // "functions", "depth", "br_table", "locals" or "body bytes"
	Function int
	Offset   int
	Value    int // what was seen (at least the limit plus one)
	Max      int
}

func (e *CodeLimitError) Error() string {
	return fmt.Sprintf("wasmfile: function %d at offset %d: %s %d past the limit of %d", e.Function, e.Offset, e.Limit, e.Value, e.Max)
}

// Unwrap makes errors.Is(err, ErrCodeLimit) true.
func (e *CodeLimitError) Unwrap() error { return ErrCodeLimit }

// CodeStats are the largest shapes ScanCode met.
type CodeStats struct {
	Functions, MaxDepth, MaxBrTable, MaxLocals, MaxBodyBytes int
}

// ScanCode walks the code section of module b instruction by instruction
// (the MVP, sign extension, saturating conversions, bulk memory, reference
// types, tail calls, SIMD and threads opcodes), without validating types,
// and returns the largest shapes it met, or a *CodeLimitError for the first
// limit passed, a *FormatError for a malformed body or an unknown opcode,
// or ErrNotWasm. Its time and memory are linear in len(b): it is the cheap
// check that runs before a compiler.
func ScanCode(b []byte, lim CodeLimits) (CodeStats, error) {
	if len(b) < len(Magic) || string(b[:len(Magic)]) != string(Magic) {
		return CodeStats{}, ErrNotWasm
	}
	var st CodeStats
	err := walkSections(b, func(id byte, _ int, body *reader) error {
		if id != SectionCode {
			return nil
		}
		fn := 0
		return body.vec(func(r *reader) error {
			st.Functions++
			if over(lim.Functions, st.Functions) {
				return &CodeLimitError{"functions", fn, r.off, st.Functions, lim.Functions}
			}
			size, err := r.u32()
			if err != nil {
				return err
			}
			start := r.off
			if _, err := r.bytes(size); err != nil {
				return err
			}
			if over(lim.BodyBytes, int(size)) {
				return &CodeLimitError{"body bytes", fn, start, int(size), lim.BodyBytes}
			}
			st.MaxBodyBytes = max(st.MaxBodyBytes, int(size))
			f := &reader{b: r.b[:start+int(size)], off: start}
			err = scanBody(f, fn, lim, &st)
			fn++
			return err
		})
	})
	return st, err
}

func over(limit, v int) bool { return limit > 0 && v > limit }

// scanBody reads one function body: its locals, then instructions up to
// the end that closes the function.
func scanBody(r *reader, fn int, lim CodeLimits, st *CodeStats) error {
	locals := 0
	if err := r.vec(func(r *reader) error {
		n, err := r.u32()
		if err != nil {
			return err
		}
		if _, err := r.byte(); err != nil {
			return err
		}
		locals += int(n)
		if over(lim.Locals, locals) {
			return &CodeLimitError{"locals", fn, r.off, locals, lim.Locals}
		}
		return nil
	}); err != nil {
		return err
	}
	st.MaxLocals = max(st.MaxLocals, locals)
	depth := 1 // the function's own block
	for depth > 0 {
		at := r.off
		op, err := r.byte()
		if err != nil {
			return err
		}
		switch {
		case op == 0x02 || op == 0x03 || op == 0x04: // block, loop, if
			if err := r.blockType(); err != nil {
				return err
			}
			depth++
			if over(lim.Depth, depth-1) {
				return &CodeLimitError{"depth", fn, at, depth - 1, lim.Depth}
			}
			st.MaxDepth = max(st.MaxDepth, depth-1)
		case op == 0x0B: // end
			depth--
		case op == 0x0E: // br_table
			n, err := r.u32()
			if err != nil {
				return err
			}
			if over(lim.BrTable, int(n)) {
				return &CodeLimitError{"br_table", fn, at, int(n), lim.BrTable}
			}
			if int(n) > len(r.b)-r.off {
				return r.fail(fmt.Sprintf("br_table of %d targets exceeds the bytes left", n))
			}
			st.MaxBrTable = max(st.MaxBrTable, int(n))
			for range n + 1 {
				if _, err := r.u32(); err != nil {
					return err
				}
			}
		default:
			if err := r.immediates(op, at); err != nil {
				return err
			}
		}
	}
	if r.off != len(r.b) {
		return r.fail(fmt.Sprintf("%d bytes after the function's end", len(r.b)-r.off))
	}
	return nil
}

// blockType skips a block type: 0x40, a value type, or a type index as a
// signed LEB128 of at most 33 bits.
func (r *reader) blockType() error {
	c, err := r.byte()
	if err != nil {
		return err
	}
	if c == 0x40 || c >= 0x6f && c <= 0x7f {
		return nil
	}
	r.off--
	return r.skipLEB(5)
}

// skipLEB skips one LEB128 of at most n bytes.
func (r *reader) skipLEB(n int) error {
	for i := 0; i < n; i++ {
		c, err := r.byte()
		if err != nil {
			return err
		}
		if c&0x80 == 0 {
			return nil
		}
	}
	return r.fail("integer too long")
}

// memarg skips an alignment and an offset.
func (r *reader) memarg() error {
	if err := r.skipLEB(5); err != nil {
		return err
	}
	return r.skipLEB(10) // memory64 offsets are 64-bit
}

// immediates skips the immediates of op (read at offset at); an opcode
// this scanner does not know is a *FormatError.
func (r *reader) immediates(op byte, at int) error {
	switch {
	case op <= 0x01 || op == 0x05 || op == 0x0F || op == 0x1A || op == 0x1B || op == 0xD1:
		return nil // no immediate
	case op == 0x0C || op == 0x0D || op == 0x10 || op == 0x12 || op >= 0x20 && op <= 0x26 || op == 0xD2:
		return r.skipLEB(5) // label, function, local, global or table index
	case op == 0x11 || op == 0x13: // call_indirect, return_call_indirect
		if err := r.skipLEB(5); err != nil {
			return err
		}
		return r.skipLEB(5)
	case op == 0x1C: // select t*
		n, err := r.u32()
		if err != nil {
			return err
		}
		_, err = r.bytes(n)
		return err
	case op >= 0x28 && op <= 0x3E:
		return r.memarg()
	case op == 0x3F || op == 0x40: // memory.size, memory.grow
		_, err := r.byte()
		return err
	case op == 0x41:
		return r.skipLEB(5)
	case op == 0x42:
		return r.skipLEB(10)
	case op == 0x43:
		_, err := r.bytes(4)
		return err
	case op == 0x44:
		_, err := r.bytes(8)
		return err
	case op >= 0x45 && op <= 0xC4:
		return nil // numeric, sign extension
	case op == 0xD0: // ref.null t
		_, err := r.byte()
		return err
	case op == 0xFC:
		return r.prefixFC(at)
	case op == 0xFD:
		return r.prefixFD(at)
	case op == 0xFE:
		return r.prefixFE(at)
	}
	return &FormatError{at, fmt.Sprintf("unknown opcode 0x%02x", op)}
}

// prefixFC: saturating conversions, bulk memory and table operations.
func (r *reader) prefixFC(at int) error {
	sub, err := r.u32()
	if err != nil {
		return err
	}
	n := 0 // index or byte immediates, each skipped as a LEB128
	switch {
	case sub <= 7:
	case sub == 9 || sub == 11 || sub == 13 || sub >= 15 && sub <= 17:
		n = 1
	case sub == 8 || sub == 10 || sub == 12 || sub == 14:
		n = 2
	default:
		return &FormatError{at, fmt.Sprintf("unknown opcode 0xfc %d", sub)}
	}
	for range n {
		if err := r.skipLEB(5); err != nil {
			return err
		}
	}
	return nil
}

// prefixFD: SIMD.
func (r *reader) prefixFD(at int) error {
	sub, err := r.u32()
	if err != nil {
		return err
	}
	switch {
	case sub <= 11 || sub == 92 || sub == 93: // loads and stores
		return r.memarg()
	case sub == 12 || sub == 13: // v128.const, i8x16.shuffle
		_, err := r.bytes(16)
		return err
	case sub >= 21 && sub <= 34: // extract and replace lane
		_, err := r.byte()
		return err
	case sub >= 84 && sub <= 91: // load and store lane
		if err := r.memarg(); err != nil {
			return err
		}
		_, err := r.byte()
		return err
	case sub <= 0x113:
		return nil
	}
	return &FormatError{at, fmt.Sprintf("unknown opcode 0xfd %d", sub)}
}

// prefixFE: threads (atomics).
func (r *reader) prefixFE(at int) error {
	sub, err := r.u32()
	if err != nil {
		return err
	}
	switch {
	case sub == 3: // atomic.fence
		_, err := r.byte()
		return err
	case sub <= 0x4E:
		return r.memarg()
	}
	return &FormatError{at, fmt.Sprintf("unknown opcode 0xfe %d", sub)}
}
