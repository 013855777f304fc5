package quant

import (
	"encoding/binary"
	"fmt"
)

//go:generate go run gen_panel.go

// Panels: Q4_K weights re-laid for products over eight rows at once.
//
// A matrix of block_q4_K rows keeps each row's blocks together, so a kernel
// that multiplies one row sums each block's products across the lanes of a
// vector and must reduce the lanes before every block's float step. PackPanels
// lays eight rows out side by side instead (a panel), with lane r of every
// vector holding row r: the kernels then sum each block of the eight rows in
// eight int32 lanes with no reduction, and a batched product reuses every
// unpacked vector of quants for several activation vectors. The layout is
// this package's own; the products follow ggml's CPU_REPACK order (see
// order.go) and have the bits of DotRepack's kernel row by row.
//
// Layout, for rows 8p..8p+7 of a matrix (panel p) and super-block b of the
// rows (256 weights), 1184 bytes at offset (p*nb + b)*PanelBlockSize:
//
//	[0, 16)      d[r], r = 0..7: the rows' block scales (f16, as in block_q4_K)
//	[16, 32)     dmin[r]: their min scales (f16)
//	[32, 96)     scale[s][r], s = 0..7 sub-blocks: the 6-bit scales, one byte each
//	[96, 160)    min[s][r]: the 6-bit mins, one byte each
//	[160, 1184)  quants: for k = 0..3 (the pair of sub-blocks 2k, 2k+1) and
//	             g = 0..7, 32 bytes at 160 + 256k + 32g holding, for r = 0..7,
//	             bytes 32k+4g .. 32k+4g+3 of row r's qs (low nibbles: weights
//	             4g..4g+3 of sub-block 2k; high nibbles: of sub-block 2k+1)
//
// 1184 bytes hold what eight 144-byte blocks hold (1152) with the 6-bit
// scales and mins unpacked to bytes.

// PanelRows is the rows of one panel.
const PanelRows = 8

// PanelBlockSize is the bytes of one super-block of a panel: eight rows of
// 256 Q4_K weights.
const PanelBlockSize = 1184

// PanelSize returns the bytes of the panels PackPanels makes of a matrix of
// type t with rows rows of n weights. It fails with a *LengthError wrapping
// ErrRowLength when n is not whole blocks and with an error wrapping
// ErrUnknownType for a type other than Q4_K; rows must be a multiple of
// PanelRows.
func PanelSize(t Type, rows, n int) (int, error) {
	if t != Q4_K {
		return 0, fmt.Errorf("quant: panels of %v: %w", t, ErrUnknownType)
	}
	if n < 0 || n%256 != 0 {
		return 0, &LengthError{Type: t, N: n, Err: ErrRowLength}
	}
	if rows < 0 || rows%PanelRows != 0 {
		return 0, fmt.Errorf("quant: panels of %d rows: not a multiple of %d", rows, PanelRows)
	}
	return rows / PanelRows * (n / 256) * PanelBlockSize, nil
}

// PackPanels writes the rows×n weights of type t in src (rows rows of
// t.RowSize(n) bytes, back to back) into dst as panels (see PanelSize;
// dst must hold at least that many bytes). Errors as PanelSize, and an
// error when src or dst is short.
func PackPanels(t Type, dst, src []byte, rows, n int) error {
	size, err := PanelSize(t, rows, n)
	if err != nil {
		return err
	}
	nb := n / 256
	rowSize := nb * 144
	if len(src) < rows*rowSize {
		return shortErr(t, n, "src", len(src), rows*rowSize)
	}
	if len(dst) < size {
		return fmt.Errorf("quant: panels need %d bytes, dst has %d", size, len(dst))
	}
	for p := range rows / PanelRows {
		for b := range nb {
			packPanelBlock(dst[(p*nb+b)*PanelBlockSize:][:PanelBlockSize], src[p*PanelRows*rowSize+b*144:], rowSize)
		}
	}
	return nil
}

// packPanelBlock lays out block b of eight rows: row r's block_q4_K is at
// src[r*rowSize:].
func packPanelBlock(dst, src []byte, rowSize int) {
	for r := range PanelRows {
		wb := src[r*rowSize : r*rowSize+144]
		copy(dst[2*r:2*r+2], wb[0:2])
		copy(dst[16+2*r:16+2*r+2], wb[2:4])
		for s := range 8 {
			sc, m := scaleMinK4(s, wb[4:16])
			dst[32+8*s+r] = sc
			dst[96+8*s+r] = m
		}
		for k := range 4 {
			for g := range 8 {
				copy(dst[160+256*k+32*g+4*r:][:4], wb[16+32*k+4*g:][:4])
			}
		}
	}
}

// DotPanelFunc multiplies the eight rows of n weights held by panel (one
// panel of PackPanels' output: n/256 super-blocks) with cols activation
// vectors and sets dst[c*stride+r], r = 0..7, to row r times vector c. The
// vectors lie back to back in acts, each ActivationSize(Q4_K, n) bytes.
//
// Every result has the bits Kernels.DotRepack's kernel gives for that row
// of the unpacked matrix and that vector. Where the build has four- and
// two-vector kernels, groups of four vectors (then two) share each
// unpacked vector of quants; a tail of three goes through the four-vector
// kernel when acts holds room for four there (ColsPadding), reading the
// padding and dropping its products.
//
// # Notes
//
// It panics with a *LengthError when n is not whole blocks or panel or acts
// is short, and when stride < 8 or dst is shorter than (cols-1)*stride+8.
// It writes only those dst entries, retains nothing, and is safe for
// concurrent use on disjoint entries.
type DotPanelFunc func(dst []float32, stride int, panel, acts []byte, n, cols int)

// panelBlocks computes out[c][r] for c < cols (at most 4): nb super-blocks
// of one panel times the activation vectors at a[c*as:], unchecked.
type panelBlocks func(out *[4][8]float32, panel, a []byte, as, nb, cols int)

// panelKernel wraps a panelBlocks kernel into a checked DotPanelFunc; four
// says whether it computes four vectors in one call for less than three
// calls' time (then a padded tail of three takes one call).
func panelKernel(f panelBlocks, four bool) DotPanelFunc {
	return func(dst []float32, stride int, panel, acts []byte, n, cols int) {
		if cols <= 0 {
			return
		}
		if stride < PanelRows {
			panic(fmt.Sprintf("quant: panel dst stride %d", stride))
		}
		_ = dst[(cols-1)*stride+PanelRows-1]
		if n < 0 || n%256 != 0 {
			panic(&LengthError{Type: Q4_K, N: n, Err: ErrRowLength})
		}
		nb := n / 256
		if len(panel) < nb*PanelBlockSize {
			panic(shortErr(Q4_K, n, "panel", len(panel), nb*PanelBlockSize))
		}
		as := nb * 292
		if len(acts) < cols*as {
			panic(shortErr(Q4_K, n, "acts", len(acts), cols*as))
		}
		var out [4][8]float32
		for c := 0; c < cols; c += 4 {
			k := min(cols-c, 4)
			run := k
			if four && k == 3 && len(acts) >= (c+4)*as {
				run = 4 // the padding's products are dropped below
			}
			if nb == 0 {
				out = [4][8]float32{}
			} else {
				f(&out, panel, acts[c*as:], as, nb, run)
			}
			for i := range k {
				copy(dst[(c+i)*stride:(c+i)*stride+PanelRows], out[i][:])
			}
		}
	}
}

// panelBlocksRef is the portable panel kernel: for each row and vector the
// exact integer sums of q4KBlock, in DotRepack's float order.
func panelBlocksRef(out *[4][8]float32, panel, a []byte, as, nb, cols int) {
	for c := range cols {
		for r := range PanelRows {
			var acc, accm float32
			for b := range nb {
				pb, ab := panel[b*PanelBlockSize:(b+1)*PanelBlockSize], a[c*as+292*b:c*as+292*b+292]
				var sumi, summ int32
				for k := range 4 {
					var lo, hi int32
					for g := range 8 {
						for i := range 4 {
							q := pb[160+256*k+32*g+4*r+i]
							lo += int32(q&0xF) * int32(int8(ab[4+64*k+4*g+i]))
							hi += int32(q>>4) * int32(int8(ab[4+64*k+32+4*g+i]))
						}
					}
					sumi += int32(pb[32+8*(2*k)+r])*lo + int32(pb[32+8*(2*k+1)+r])*hi
				}
				for j := range 16 {
					summ += int32(int16(binary.LittleEndian.Uint16(ab[260+2*j:]))) * int32(pb[96+8*(j/2)+r])
				}
				da := q8KD(ab)
				d, dmin := f16At(pb, 2*r)*da, f16At(pb, 16+2*r)*da
				acc = fma32(float32(sumi), d, acc)
				accm = fma32(float32(summ), dmin, accm)
			}
			out[c][r] = acc - accm
		}
	}
}

var (
	refPanelTable  = map[Type]DotPanelFunc{Q4_K: panelKernel(panelBlocksRef, false)}
	fastPanelTable = map[Type]DotPanelFunc{Q4_K: panelKernel(panelBlocksFast, hasPanelFour)}
	// The AVX2 panel kernel of a CPU that has AVX-512 VNNI, kept testable
	// there (see Implementations).
	avx2PanelTable = map[Type]DotPanelFunc{Q4_K: panelKernel(panelBlocksAVX2, hasPanelFour)}
)

func refDotPanel(t Type) DotPanelFunc  { return refPanelTable[t] }
func fastDotPanel(t Type) DotPanelFunc { return fastPanelTable[t] }
func avx2DotPanel(t Type) DotPanelFunc { return avx2PanelTable[t] }

// PanelsForMatrix reports whether the products DotForMatrix and
// DotForExperts pick for a matrix of type t with the given number of rows
// are in the order the panel kernels follow (ggml's CPU_REPACK order):
// then PackPanels with DotPanelFor's kernel gives the bits of those row
// kernels on the unpacked rows.
func PanelsForMatrix(t Type, rows int) bool {
	return matrixRepack(t, rows) && fastDotPanel(t) != nil
}

// DotPanelFor returns the fast panel kernel for weight type t (Q4_K). It
// fails with an error wrapping ErrUnknownType for the other types.
func DotPanelFor(t Type) (DotPanelFunc, error) {
	if f := fastDotPanel(t); f != nil {
		return f, nil
	}
	return nil, fmt.Errorf("quant: panel kernel for %v: %w", t, ErrUnknownType)
}
