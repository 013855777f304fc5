package cuda

import (
	"fmt"

	"github.com/realizar-host/realizar-host/internal/arch"
	"github.com/realizar-host/realizar-host/internal/quant"
	"github.com/realizar-host/realizar-host/model"
)

// checkArch reports whether the GPU forward computes c's architecture: one
// whose registration says GPU (arch.Arch.GPU). The GPU forward computes the
// llama block with qwen2's biases and NEOX RoPE, qwen3's per-head Q/K
// RMSNorm, phi3's block (fused QKV and gate-up products, LongRoPE's factors
// and attn_factor, partial rotary, the query scaled), gemma3's (scaled
// embeddings, GELU, post-sublayer norms, sliding-window layers with their
// own RoPE, the logit softcap) and qwen3moe's routed experts, with RoPE
// scaled linearly or by YaRN.
//
// Errors: wraps ErrUnsupportedArch naming the architecture.
func checkArch(c model.Config) error {
	if !gpuArch(c.Arch) {
		return fmt.Errorf("%w %q (the GPU forward runs %s; the CPU forward runs it)", ErrUnsupportedArch, c.Arch,
			arch.List(arch.Where(func(a arch.Arch) bool { return a.GPU }), "and"))
	}
	return nil
}

// gpuArch reports whether name's registration says the GPU forward
// computes it.
func gpuArch(name string) bool {
	a, ok := arch.Lookup(name)
	return ok && a.GPU
}

// poolAlign is the alignment in bytes of every tensor's offset in the
// pooled device allocation (the driver's allocation granularity for
// coalesced loads).
const poolAlign = 256

// poolTensor is one tensor to place in the pool: Rows rows of Cols values
// of ggml type Type (a vector is one row).
type poolTensor struct {
	name string
	typ  quant.Type
	rows int
	cols int
}

// placement is where a tensor lives in the pool: bytes [Offset,
// Offset+Size).
type placement struct {
	poolTensor
	rowBytes int64 // bytes per row
	offset   int64 // a multiple of poolAlign
	size     int64 // Rows*RowBytes
}

// poolPlan lays out tensors back to back in one allocation of Size bytes.
type poolPlan struct {
	tensors []placement // in the order given
	size    int64       // total bytes, a multiple of poolAlign
}

// planPool places ts in order, each at the next poolAlign-aligned offset.
//
// Errors: a *TensorError naming the first tensor whose type has no GPU
// kernel (wrapping ErrUnsupportedType) or whose row length is not whole
// blocks of its type (wrapping the quant row-length error).
func planPool(ts []poolTensor) (poolPlan, error) {
	p := poolPlan{tensors: make([]placement, 0, len(ts))}
	for _, t := range ts {
		if _, ok := kernelTypes[t.typ]; !ok {
			return poolPlan{}, &TensorError{Tensor: t.name, Err: ErrUnsupportedType, Detail: "ggml type " + t.typ.String()}
		}
		rb, err := t.typ.RowSize(t.cols)
		if err != nil {
			return poolPlan{}, &TensorError{Tensor: t.name, Err: err}
		}
		if t.rows < 0 {
			return poolPlan{}, &TensorError{Tensor: t.name, Err: fmt.Errorf("cuda: %d rows", t.rows)}
		}
		size := int64(t.rows) * int64(rb)
		p.tensors = append(p.tensors, placement{poolTensor: t, rowBytes: int64(rb), offset: p.size, size: size})
		p.size = alignUp(p.size+size, poolAlign)
	}
	return p, nil
}

func alignUp(n, a int64) int64 { return (n + a - 1) / a * a }
