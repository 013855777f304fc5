package quantize

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/realizar-host/realizar-host/gguf"
	"github.com/realizar-host/realizar-host/internal/quant"
)

// Options configures File and Write.
type Options struct {
	// FileType is the mixture to write (required).
	FileType FileType
	// Threads is the number of workers quantizing rows; 0 means
	// runtime.GOMAXPROCS(0). The output does not depend on it.
	Threads int
}

// Report describes a finished quantization.
type Report struct {
	// FileType is the file type written.
	FileType FileType
	// Tensors holds the decision for every tensor, in output order.
	Tensors []TensorPlan
	// SourceBytes and OutputBytes are the tensor data sizes in bytes
	// (without headers and padding).
	SourceBytes, OutputBytes int64
	// Elapsed is the wall time of the whole conversion.
	Elapsed time.Duration
}

// Histogram counts the output tensors by type.
func (r Report) Histogram() map[gguf.TensorType]int {
	h := make(map[gguf.TensorType]int)
	for _, t := range r.Tensors {
		h[t.To]++
	}
	return h
}

// splitKeys are the metadata keys of split files, which the single output
// file does not carry.
var splitKeys = map[string]bool{"split.no": true, "split.count": true, "split.tensors.count": true}

// quantizationVersion is ggml's GGML_QNT_VERSION, recorded as
// general.quantization_version.
const quantizationVersion = 2

// File quantizes the GGUF model at src (split files included) into a new
// file at dst with opts.FileType (see the package doc for the rules). dst is
// created or truncated, and removed again when File fails.
//
// Errors: ErrFileType; ErrArchitecture and ErrMetadata for a model without
// type rules; a *TensorError naming the tensor for a tensor that cannot be
// converted (wrapping ErrSourceType) or read; gguf's errors for a source
// that is not a valid GGUF; I/O errors of dst.
func File(dst, src string, opts Options) (rep Report, err error) {
	in, err := gguf.Open(src)
	if err != nil {
		return Report{}, err
	}
	defer in.Close()
	// Check the rules before creating dst, so a refused model leaves no file.
	if _, err := Plan(in, opts.FileType); err != nil {
		return Report{}, err
	}
	out, err := os.Create(dst)
	if err != nil {
		return Report{}, err
	}
	defer func() {
		err = errors.Join(err, out.Close())
		if err != nil {
			_ = os.Remove(dst)
		}
	}()
	return Write(out, in, opts)
}

// Write quantizes src into w as File does. It writes the header, then each
// tensor's data as soon as it is quantized; it holds one tensor's output in
// memory at a time.
//
// Errors: as File, and w's write errors.
func Write(w io.Writer, src *gguf.File, opts Options) (Report, error) {
	return write(w, src, src.KV, src.Tensors, func(p TensorPlan) ([]byte, error) { return src.TensorData(p.Name) }, opts)
}

// write is Write and WriteSource: the plan from md and tensors, the header
// from kv and the plan, then each tensor's data from data, converted.
func write(w io.Writer, md *gguf.File, kv []gguf.KV, tensors []gguf.TensorInfo, data func(TensorPlan) ([]byte, error), opts Options) (Report, error) {
	start := time.Now()
	plans, err := plan(md, tensors, opts.FileType)
	if err != nil {
		return Report{}, err
	}
	for _, p := range plans {
		if p.From != p.To && !convertible(p.From) {
			return Report{}, &TensorError{Name: p.Name, Err: fmt.Errorf("%w: %v to %v (sources must be F32, F16 or BF16)", ErrSourceType, p.From, p.To)}
		}
	}
	gw := gguf.NewWriter(w)
	if err := writeHeader(gw, kv, plans, opts.FileType); err != nil {
		return Report{}, err
	}
	threads := opts.Threads
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	pool := newPool(threads)
	defer pool.close()
	rep := Report{FileType: opts.FileType, Tensors: plans}
	var buf []byte
	for _, p := range plans {
		data, err := data(p)
		if err != nil {
			return Report{}, &TensorError{Name: p.Name, Err: err}
		}
		rep.SourceBytes += int64(len(data))
		out := data
		if p.From != p.To {
			buf, err = pool.convert(buf, p, data)
			if err != nil {
				return Report{}, &TensorError{Name: p.Name, Err: err}
			}
			out = buf
		}
		rep.OutputBytes += int64(len(out))
		if err := gw.WriteTensorData(p.Name, out); err != nil {
			return Report{}, &TensorError{Name: p.Name, Err: err}
		}
	}
	if err := gw.Close(); err != nil {
		return Report{}, err
	}
	rep.Elapsed = time.Since(start)
	return rep, nil
}

// convertible reports whether a tensor stored as t can be decoded to float32
// for quantization.
func convertible(t gguf.TensorType) bool {
	return t == gguf.TypeF32 || t == gguf.TypeF16 || t == gguf.TypeBF16
}

// writeHeader declares the metadata and the tensors of the output.
func writeHeader(gw *gguf.Writer, kvs []gguf.KV, plans []TensorPlan, ft FileType) error {
	for _, kv := range kvs {
		if splitKeys[kv.Key] || kv.Key == gguf.KeyQuantizationVersion || kv.Key == gguf.KeyFileType {
			continue
		}
		if err := gw.AddKV(kv.Key, kv.Value); err != nil {
			return err
		}
	}
	if err := gw.AddKV(gguf.KeyQuantizationVersion, uint32(quantizationVersion)); err != nil {
		return err
	}
	if err := gw.AddKV(gguf.KeyFileType, uint32(ft)); err != nil {
		return err
	}
	for _, p := range plans {
		if err := gw.AddTensor(p.Name, p.To, p.Dims...); err != nil {
			return &TensorError{Name: p.Name, Err: err}
		}
	}
	return nil
}

// chunkValues is the target number of values per work item: big enough to
// amortize the hand-off, small enough to spread a tensor over the workers.
const chunkValues = 1 << 16

// pool is a fixed set of workers quantizing row ranges.
type pool struct {
	jobs chan job
	wg   sync.WaitGroup
}

// job converts rows [r0, r1) of one tensor.
type job struct {
	p        *TensorPlan
	src, dst []byte
	r0, r1   int
	done     *sync.WaitGroup
	fail     func(error)
}

func newPool(n int) *pool {
	p := &pool{jobs: make(chan job)}
	p.wg.Add(n)
	for range n {
		go p.work()
	}
	return p
}

func (p *pool) close() {
	close(p.jobs)
	p.wg.Wait()
}

func (p *pool) work() {
	defer p.wg.Done()
	var row []float32
	for j := range p.jobs {
		n := int(j.p.Dims[0])
		if cap(row) < n {
			row = make([]float32, n)
		}
		row = row[:n]
		srs, _ := j.p.From.RowSize(int64(n))
		drs, _ := j.p.To.RowSize(int64(n))
		for r := j.r0; r < j.r1; r++ {
			if err := quant.Dequantize(quant.Type(j.p.From), row, j.src[int64(r)*srs:]); err != nil {
				j.fail(err)
				break
			}
			if err := quant.Quantize(quant.Type(j.p.To), j.dst[int64(r)*drs:(int64(r)+1)*drs], row); err != nil {
				j.fail(err)
				break
			}
		}
		j.done.Done()
	}
}

// convert quantizes the tensor of plan pl, whose source bytes are src, into
// buf (grown as needed) and returns the output bytes.
func (p *pool) convert(buf []byte, pl TensorPlan, src []byte) ([]byte, error) {
	n := pl.Dims[0]
	rows := int64(1)
	for _, d := range pl.Dims[1:] {
		rows *= d
	}
	drs, ok := pl.To.RowSize(n)
	if !ok {
		return nil, fmt.Errorf("row length %d does not fit %v", n, pl.To)
	}
	srs, _ := pl.From.RowSize(n)
	if int64(len(src)) < rows*srs {
		return nil, fmt.Errorf("source holds %d bytes, want %d", len(src), rows*srs)
	}
	size := rows * drs
	if int64(cap(buf)) < size {
		buf = make([]byte, size)
	}
	buf = buf[:size]
	if n == 0 || rows == 0 {
		return buf, nil
	}
	per := max(1, int(chunkValues/n))
	var (
		done  sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	fail := func(err error) {
		mu.Lock()
		if first == nil {
			first = err
		}
		mu.Unlock()
	}
	for r := 0; r < int(rows); r += per {
		done.Add(1)
		p.jobs <- job{p: &pl, src: src, dst: buf, r0: r, r1: min(int(rows), r+per), done: &done, fail: fail}
	}
	done.Wait()
	return buf, first
}
