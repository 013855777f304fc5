package model

import (
	"fmt"

	"github.com/realizar-host/realizar-host/internal/quant"
)

// linear is a weight matrix y = W·x (+ b), with an optional f32 bias. Its
// rows are a view of the file until the model copies them into its one
// slab (Model.packMatrices): a Q4_K matrix that the panel kernels multiply
// in its own order (quant.PanelsForMatrix) as panels (pack), which its
// products read instead of the rows, any other as its rows (keep).
type linear struct {
	name    string
	typ     quant.Type
	rows    int    // output width (ne[1])
	cols    int    // input width, the row length (ne[0])
	rowSize int    // bytes per row
	data    []byte // rows*rowSize bytes, a view of the file or a copy (keep)
	dot     quant.DotFunc
	dotCols quant.DotColsFunc
	// dotBatch is the kernel ggml's mul_mat uses for two or more columns
	// where that is not dotCols' order (llamafile's, for F16 and F32
	// matrices: quant.DotColsBatchForMatrix), or nil; matJob.rows gives it
	// the columns the actCache marks batched.
	dotBatch quant.DotColsFunc
	actSize  int // bytes of one activation row (ActivationSize(typ, cols))
	bias     []float32
	// panels holds the rows as quant.PackPanels lays them out (rows/8
	// panels of panelSize bytes), or nil; dotPanel multiplies one panel.
	panels    []byte
	panelSize int
	dotPanel  quant.DotPanelFunc
}

// panelLayout returns the panel kernel and the bytes of the matrix's
// panels when quant.PanelsForMatrix says the panel kernels give its
// products' bits; ok is false for a matrix that keeps its rows.
func (l *linear) panelLayout() (f quant.DotPanelFunc, size int, ok bool) {
	if l.data == nil || !quant.PanelsForMatrix(l.typ, l.rows) {
		return nil, 0, false
	}
	f, err := quant.DotPanelFor(l.typ)
	if err != nil {
		return nil, 0, false
	}
	size, err = quant.PanelSize(l.typ, l.rows, l.cols)
	if err != nil {
		return nil, 0, false
	}
	return f, size, true
}

// pack copies the matrix into p (the size panelLayout gives, multiplied by
// f) and reports whether it did; the products then read the panels only.
// A matrix packed already keeps its panels.
func (l *linear) pack(p []byte, f quant.DotPanelFunc) bool {
	if l.panels != nil {
		return true
	}
	if err := quant.PackPanels(l.typ, p, l.data, l.rows, l.cols); err != nil {
		return false
	}
	l.panels, l.panelSize, l.dotPanel = p, len(p)/(l.rows/quant.PanelRows), f
	return true
}

// keep copies the matrix's rows into p (len(p) == len(l.data)), which its
// products then read instead of the file's.
func (l *linear) keep(p []byte) {
	copy(p, l.data)
	l.data = p
}

// panel returns panel i (rows 8i..8i+7).
func (l *linear) panel(i int) []byte { return l.panels[i*l.panelSize : (i+1)*l.panelSize] }

// newLinear checks a weight's type and length: every row must be whole
// blocks of a type with a dot-product kernel. Its kernels are the ones
// llama.cpp picks for a matrix of that type and row count (ggml_mul_mat).
func newLinear(name string, typ quant.Type, rows, cols int, data []byte) (linear, error) {
	return newLinearFor(name, typ, rows, cols, data, true)
}

// newLinearFor is newLinear; matrix false takes the kernels of one expert's
// slice of a merged expert tensor, which ggml_mul_mat_id multiplies (the
// AMX buffer holds only ggml_mul_mat weights, CPU_REPACK both:
// quant.DotForExperts).
func newLinearFor(name string, typ quant.Type, rows, cols int, data []byte, matrix bool) (linear, error) {
	dotFor, dotColsFor := quant.DotForMatrix, quant.DotColsForMatrix
	if !matrix {
		dotFor, dotColsFor = quant.DotForExperts, quant.DotColsForExperts
	}
	dot, err := dotFor(typ, rows)
	if err != nil {
		return linear{}, &TensorError{Tensor: name, Err: ErrUnsupportedType, Detail: typ.String()}
	}
	dotCols, err := dotColsFor(typ, rows)
	if err != nil {
		return linear{}, &TensorError{Tensor: name, Err: ErrUnsupportedType, Detail: typ.String()}
	}
	rowSize, err := typ.RowSize(cols)
	if err != nil {
		return linear{}, &TensorError{Tensor: name, Err: ErrShape, Detail: err.Error()}
	}
	actSize, err := quant.ActivationSize(typ, cols)
	if err != nil {
		return linear{}, &TensorError{Tensor: name, Err: ErrShape, Detail: err.Error()}
	}
	if len(data) < rows*rowSize {
		return linear{}, &TensorError{Tensor: name, Err: ErrShape,
			Detail: fmt.Sprintf("%d bytes of data, want %d", len(data), rows*rowSize)}
	}
	var dotBatch quant.DotColsFunc
	if matrix {
		// ggml_mul_mat_id (the experts) never calls llamafile.
		dotBatch, _ = quant.DotColsBatchForMatrix(typ, rows, cols)
	}
	return linear{name: name, typ: typ, rows: rows, cols: cols, rowSize: rowSize,
		data: data[:rows*rowSize], dot: dot, dotCols: dotCols, dotBatch: dotBatch, actSize: actSize}, nil
}

// row returns the bytes of row r.
func (l *linear) row(r int) []byte { return l.data[r*l.rowSize : (r+1)*l.rowSize] }

// matJob is one matrix product in a batch of products that share an input.
type matJob struct {
	w   *linear
	out []float32 // [batch*w.rows]: out[b*rows+r] = row r · x_b (+ bias[r])
}

// actCache holds one input batch quantized to each vec_dot_type in use, so a
// batch of products quantizes its input once per type.
type actCache struct {
	x     []float32 // [batch*cols]
	cols  int
	batch int
	// batched marks the columns whose products take a matrix's batch
	// kernel (linear.dotBatch) where it has one: [batch], or nil for none.
	batched []bool
	enc     map[quant.Type][]byte // type → batch rows of encoded activations
	buf     map[quant.Type][]byte // reused storage per type
	task    matTask               // matmul's loop body, reused
}

func newActCache() *actCache {
	return &actCache{enc: map[quant.Type][]byte{}, buf: map[quant.Type][]byte{}}
}

// reset makes x ([batch*cols]float32) the input, no column batched;
// encodings are made lazily.
func (a *actCache) reset(x []float32, cols, batch int) {
	a.resetBatched(x, cols, batch, nil)
}

// resetBatched is reset with batched ([batch], or nil) marking the columns
// that take a matrix's batch kernel.
func (a *actCache) resetBatched(x []float32, cols, batch int, batched []bool) {
	a.x, a.cols, a.batch, a.batched = x, cols, batch, batched
	clear(a.enc)
}

// encode makes sure the batch is encoded for w (in w's vec_dot_type, row b
// at b*w.actSize), quantizing on first use, and returns the encoding.
func (a *actCache) encode(w *linear) []byte {
	t := w.typ.VecDotType()
	if e, ok := a.enc[t]; ok {
		return e
	}
	need := w.actSize * a.batch
	room := need // a batch keeps quant.ColsPadding vectors of room past its end
	if a.batch > 1 {
		room += w.actSize * quant.ColsPadding
	}
	b := a.buf[t]
	if cap(b) < room {
		b = make([]byte, room)
		a.buf[t] = b
	}
	b = b[:room]
	for i := range a.batch {
		encodeActs(w.typ, b[i*w.actSize:(i+1)*w.actSize], a.x[i*a.cols:(i+1)*a.cols])
	}
	a.enc[t] = b
	return b
}

// rowGrain is the fewest weight rows a worker claims at once; rowTile is
// how many rows a batched product multiplies with every column before
// moving on (16 rows of a 4096-wide Q4_K matrix are 36 KiB: they stay in L1
// or L2 while the batch's columns stream past), and colTile how many columns
// one batched-kernel call takes (8 Q8_K activations of 4096 values are
// 37 KiB, reused by every row of the tile).
//
// decodeChunks is how many chunks a thread gets of a one-column product
// (decode's): the first thread to finish a loop waits for the others by
// half a chunk on average, at grainFor's four chunks a thread 1/16 of the
// product's work at two threads, on every one of a layer's products.
const (
	decodeChunks = 16
	rowGrain     = 16
	rowTile      = 16
	colTile      = 8
)

// matmul runs every job over the input held by acts: the rows of all jobs
// are split across the pool together (one wake-up for Q, K and V), in
// units of quant.PanelRows rows (a panel), and each tile of weight rows is
// read from memory once for the whole batch.
func matmul(p *pool, acts *actCache, jobs ...matJob) {
	total := 0
	for _, j := range jobs {
		total += unitsOf(j.w.rows)
		acts.encode(j.w)
	}
	t := &acts.task
	t.acts = acts
	t.jobs = append(t.buf[:0], jobs...)
	grain := p.grainFor(total, rowGrain/quant.PanelRows)
	if acts.batch == 1 {
		grain = p.grainForChunks(total, rowGrain/quant.PanelRows, decodeChunks)
	}
	p.run(total, grain, t)
	t.jobs = nil
}

// unitsOf is the work units of a matrix of rows rows: panels of
// quant.PanelRows rows, the last one short when rows is not a multiple.
func unitsOf(rows int) int { return (rows + quant.PanelRows - 1) / quant.PanelRows }

// matTask is matmul's loop body over the rows of all its jobs together. It
// lives in the actCache, so a product allocates nothing.
type matTask struct {
	acts *actCache
	jobs []matJob  // in job order; usually buf's storage
	buf  [3]matJob // room for Q, K and V
}

func (t *matTask) do(_, lo, hi int) {
	base := 0
	for i := range t.jobs {
		j := &t.jobs[i]
		// The part of units [lo, hi) that falls in this job's units.
		units := unitsOf(j.w.rows)
		a, b := max(lo-base, 0), min(hi-base, units)
		base += units
		if a < b {
			j.rows(t.acts, a*quant.PanelRows, min(b*quant.PanelRows, j.w.rows))
		}
	}
}

// rows computes output rows [a, b) of the job for every column of the batch.
// One column is Step's decode: the row kernel directly. More go through the
// batched kernel, which decodes each weight block once for several columns
// and gives the same bits — or, for the columns acts marks batched, the
// matrix's batch kernel (dotBatch) where it has one.
func (j *matJob) rows(acts *actCache, a, b int) {
	w := j.w
	enc := acts.enc[w.typ.VecDotType()]
	if w.panels != nil {
		j.panels(enc, acts.batch, a, b)
	} else if acts.batch == 1 {
		for r := a; r < b; r++ {
			j.out[r] = w.dot(w.data[r*w.rowSize:(r+1)*w.rowSize], enc, w.cols)
		}
	} else {
		for t0 := a; t0 < b; t0 += rowTile {
			t1 := min(t0+rowTile, b)
			for c0 := 0; c0 < acts.batch; c0 += colTile {
				c1 := min(c0+colTile, acts.batch)
				// Runs of columns of one kernel: batched columns take
				// dotBatch where the matrix has one.
				for r0 := c0; r0 < c1; {
					f, r1 := w.dotCols, r0+1
					if w.dotBatch != nil && acts.batched != nil {
						on := acts.batched[r0]
						for r1 < c1 && acts.batched[r1] == on {
							r1++
						}
						if on {
							f = w.dotBatch
						}
					} else {
						r1 = c1
					}
					cols := enc[r0*w.actSize:] // with the padding past r1 (quant.ColsPadding)
					for r := t0; r < t1; r++ {
						f(j.out[r0*w.rows+r:], w.rows, w.data[r*w.rowSize:(r+1)*w.rowSize], cols, w.cols, r1-r0)
					}
					r0 = r1
				}
			}
		}
	}
	if w.bias != nil {
		for c := range acts.batch {
			dst := j.out[c*w.rows : (c+1)*w.rows]
			for r := a; r < b; r++ {
				dst[r] += w.bias[r]
			}
		}
	}
}

// panelTile is how many panels a batched panel product multiplies with
// every column tile before moving on (2 panels of a 4096-wide Q4_K matrix
// are 37 KiB).
const panelTile = 2

// panels computes output rows [a, b) (whole panels: a and b multiples of
// quant.PanelRows, as matTask.do splits them) of a packed matrix for every
// column of the batch through its panel kernel, which gives the row
// kernels' bits.
func (j *matJob) panels(enc []byte, batch, a, b int) {
	w := j.w
	p0, p1 := a/quant.PanelRows, b/quant.PanelRows
	if batch == 1 {
		for p := p0; p < p1; p++ {
			w.dotPanel(j.out[p*quant.PanelRows:], w.rows, w.panel(p), enc, w.cols, 1)
		}
		return
	}
	for t0 := p0; t0 < p1; t0 += panelTile {
		t1 := min(t0+panelTile, p1)
		for c0 := 0; c0 < batch; c0 += colTile {
			c1 := min(c0+colTile, batch)
			cols := enc[c0*w.actSize:] // with the padding past c1 (quant.ColsPadding)
			for p := t0; p < t1; p++ {
				w.dotPanel(j.out[c0*w.rows+p*quant.PanelRows:], w.rows, w.panel(p), cols, w.cols, c1-c0)
			}
		}
	}
}
