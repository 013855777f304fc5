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
	Name string
	Type quant.Type
	Rows int
	Cols int
}

// placement is where a tensor lives in the pool: bytes [Offset,
// Offset+Size).
type placement struct {
	poolTensor
	RowBytes int64 // bytes per row
	Offset   int64 // a multiple of poolAlign
	Size     int64 // Rows*RowBytes
}

// poolPlan lays out tensors back to back in one allocation of Size bytes.
type poolPlan struct {
	Tensors []placement // in the order given
	Size    int64       // total bytes, a multiple of poolAlign
}

// planPool places ts in order, each at the next poolAlign-aligned offset.
//
// Errors: a *TensorError naming the first tensor whose type has no GPU
// kernel (wrapping ErrUnsupportedType) or whose row length is not whole
// blocks of its type (wrapping the quant row-length error).
func planPool(ts []poolTensor) (poolPlan, error) {
	p := poolPlan{Tensors: make([]placement, 0, len(ts))}
	for _, t := range ts {
		if _, ok := kernelTypes[t.Type]; !ok {
			return poolPlan{}, &TensorError{Tensor: t.Name, Err: ErrUnsupportedType, Detail: "ggml type " + t.Type.String()}
		}
		rb, err := t.Type.RowSize(t.Cols)
		if err != nil {
			return poolPlan{}, &TensorError{Tensor: t.Name, Err: err}
		}
		if t.Rows < 0 {
			return poolPlan{}, &TensorError{Tensor: t.Name, Err: fmt.Errorf("cuda: %d rows", t.Rows)}
		}
		size := int64(t.Rows) * int64(rb)
		p.Tensors = append(p.Tensors, placement{poolTensor: t, RowBytes: int64(rb), Offset: p.Size, Size: size})
		p.Size = alignUp(p.Size+size, poolAlign)
	}
	return p, nil
}

func alignUp(n, a int64) int64 { return (n + a - 1) / a * a }
