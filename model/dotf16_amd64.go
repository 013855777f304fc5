//go:build amd64 && !purego

package model

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// useAsm selects the assembly vector parts of simd.dotF16 and simd.swiglu
// (AVX2, FMA and F16C; FMA stands in for F16C, which
// x/sys/cpu does not report).
var useAsm = cpu.X86.HasAVX2 && cpu.X86.HasFMA

//go:noescape
func dotF16Sum16(x *byte, y *float32, vecs int, px *byte, py *float32) float32

//go:noescape
func dotF16Rows8(x *byte, xstride int, y *float32, vecs int, px *byte, py *float32, rows int, out *float32)

// dotF16Rows is rows calls of dotF16Sum over np elements in one assembly
// call: out[r] gets dotF16Sum(lanes, x[r*xstride:], y, np) for r < rows, the
// partial vector of row r (np not a multiple of lanes) taken from
// pad.px[16*r:] after fill. ok is false where the assembly is unavailable
// (or for 16 lanes, which has no rows kernel yet): the caller loops.
func dotF16Rows(lanes int, out []float32, x []byte, xstride int, y []float32, np, rows int, pad *f16Pad) bool {
	if !useAsm || lanes != 8 || rows <= 0 {
		return false
	}
	vecs, m := np/8, np%8
	_, _, _ = x[:(rows-1)*xstride+2*np], y[:np], out[:rows]
	var pxp *byte
	var pyp *float32
	if m > 0 {
		pad.fill(x, xstride, y, np, rows)
		pxp, pyp = &pad.px[0], &pad.py[0]
	}
	dotF16Rows8(unsafe.SliceData(x), xstride, unsafe.SliceData(y), vecs, pxp, pyp, rows, unsafe.SliceData(out))
	return true
}

// dotF16Sum is the vector part of simd.dotF16 over its first np elements
// and simd.reduceVectors, in registers: ok is false when the assembly is
// unavailable. The last, partial vector (np not a multiple of lanes) goes
// in zero-padded.
func dotF16Sum(lanes int, x []byte, y []float32, np int) (sum float32, ok bool) {
	if !useAsm {
		return 0, false
	}
	vecs, m := np/lanes, np%lanes
	_, _ = x[:2*np], y[:np]
	var px [32]byte
	var py [16]float32
	var pxp *byte
	var pyp *float32
	if m > 0 {
		i := vecs * lanes
		copy(px[:], x[2*i:2*np])
		copy(py[:], y[i:np])
		pxp, pyp = &px[0], &py[0]
	}
	xp, yp := unsafe.SliceData(x), unsafe.SliceData(y)
	if lanes == 16 {
		return dotF16Sum16(xp, yp, vecs, pxp, pyp), true
	}
	var out float32 // one row of the rows kernel: the same arithmetic
	dotF16Rows8(xp, 0, yp, vecs, pxp, pyp, 1, &out)
	return out, true
}

//go:noescape
func tinyRows4(x *byte, xstride int, y *float32, vecs int, px *byte, pxstride int, py *float32, wide int, out *[4]float32)

//go:noescape
func tinyRows16(x *byte, xstride int, y *float32, n, groups int, out *float32)

// dotF16RowsBatchAsm is simd.dotF16RowsBatch in assembly: with 16 lanes
// and AVX-512F, sixteen rows at a time in 512-bit registers (tinyRows16,
// the partial last vector by masked loads; rows not a multiple of 16 take
// the last sixteen again); otherwise four rows at a time (a row left over
// alone: the same row four times), the partial last vector of each row (n
// not a multiple of 8) zero-padded from pad. ok is false where there is
// no assembly (the Go loop runs).
func dotF16RowsBatchAsm(lanes int, out []float32, x []byte, xstride int, y []float32, n int, pad *f16Pad) bool {
	rows := len(out)
	if !useAsm || rows == 0 {
		return false
	}
	_, _ = x[:(rows-1)*xstride+2*n], y[:n]
	if lanes == 16 && hasAVX512F && rows >= 16 {
		xp, yp := unsafe.SliceData(x), unsafe.SliceData(y)
		tinyRows16(xp, xstride, yp, n, rows/16, unsafe.SliceData(out))
		if rows%16 != 0 {
			// The last sixteen rows again: the overlap gets the same bits.
			last := rows - 16
			tinyRows16((*byte)(unsafe.Add(unsafe.Pointer(xp), last*xstride)), xstride, yp, n, 1, &out[last])
		}
		return true
	}
	vecs, m := n/8, n%8
	var pxp *byte
	var pyp *float32
	if m > 0 {
		pad.fill(x, xstride, y, n, rows)
		pxp, pyp = &pad.px[0], &pad.py[0]
	}
	wide := 0
	if lanes == 16 {
		wide = 1
	}
	xp, yp := unsafe.SliceData(x), unsafe.SliceData(y)
	var o [4]float32
	r := 0
	for ; r+4 <= rows; r += 4 {
		var p *byte
		if pxp != nil {
			p = &pad.px[16*r]
		}
		tinyRows4((*byte)(unsafe.Add(unsafe.Pointer(xp), r*xstride)), xstride, yp, vecs, p, 16, pyp, wide, &o)
		copy(out[r:r+4], o[:])
	}
	for ; r < rows; r++ {
		var p *byte
		if pxp != nil {
			p = &pad.px[16*r]
		}
		tinyRows4((*byte)(unsafe.Add(unsafe.Pointer(xp), r*xstride)), 0, yp, vecs, p, 0, pyp, wide, &o)
		out[r] = o[0]
	}
	return true
}

//go:noescape
func dotF16RowsQ16(x *byte, xstride, rows int, y *float32, ystride int, ns *int32, nq int, out *float32, ostride int)

// useRowsQ16 selects dotF16RowsQ's assembly: the 16-lane arithmetic of
// dotF16Sum16 in 512-bit registers (AVX-512F).
var useRowsQ16 = useAsm && cpu.X86.HasAVX512F

// dotF16RowsQ sets out[j*ostride+r], for every row r < rows of x (f16,
// xstride bytes apart) and vector j < len(ns) of y (float32 values that
// are f16 values, ystride elements apart), to dotF16Sum's 16-lane vector
// sum of the row's first ns[j] elements with the vector's, its partial
// last vector zero-padded: simd.dotF16(row, y_j, ns[j], padded) where
// that takes no scalar tail (padded, or ns[j] a multiple of 64). Each row
// is read once for all the vectors. ok is false where the assembly is
// unavailable (no AVX-512F, or a purego or non-amd64 build).
func dotF16RowsQ(out []float32, ostride int, x []byte, xstride, rows int, y []float32, ystride int, ns []int32) (ok bool) {
	if !useRowsQ16 || rows <= 0 || len(ns) == 0 {
		return false
	}
	nq, longest := len(ns), int32(0)
	for j, n := range ns {
		_ = y[j*ystride : j*ystride+int(n)]
		longest = max(longest, n)
	}
	_, _ = x[:(rows-1)*xstride+2*int(longest)], out[:(nq-1)*ostride+rows]
	dotF16RowsQ16(unsafe.SliceData(x), xstride, rows, unsafe.SliceData(y), 4*ystride, &ns[0], nq,
		unsafe.SliceData(out), 4*ostride)
	return true
}
