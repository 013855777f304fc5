package cuda

import (
	"fmt"

	"github.com/realizar-host/realizar-host/model"
	"github.com/realizar-host/realizar-host/q4k"
)

// CheckArch reports whether the GPU forward computes c's architecture: the
// llama block, with qwen2's biases and NEOX RoPE. qwen3's per-head Q/K
// RMSNorm, qwen3moe's experts, YaRN's RoPE and phi3's block (fused
// projections, LongRoPE, the query scaled before attention) have no kernels
// here.
//
// Errors: wraps ErrUnsupportedArch naming the architecture.
func CheckArch(c model.Config) error {
	if c.QKNorm || c.MoE() || c.ScaleQ || c.FusedFFN || (c.Arch != "llama" && c.Arch != "qwen2") {
		return fmt.Errorf("%w %q (the GPU forward runs llama and qwen2; the CPU forward runs it)", ErrUnsupportedArch, c.Arch)
	}
	if c.RopeYaRN || c.RopeAttnFactor != 1 {
		return fmt.Errorf("%w %q with YaRN RoPE scaling or a RoPE attn_factor (the GPU's RoPE has neither; the CPU forward runs it)",
			ErrUnsupportedArch, c.Arch)
	}
	return nil
}

// PoolAlign is the alignment in bytes of every tensor's offset in the
// pooled device allocation (the driver's allocation granularity for
// coalesced loads).
const PoolAlign = 256

// PoolTensor is one tensor to place in the pool: Rows rows of Cols values
// of ggml type Type (a vector is one row).
type PoolTensor struct {
	Name string
	Type q4k.Type
	Rows int
	Cols int
}

// Placement is where a tensor lives in the pool: bytes [Offset,
// Offset+Size).
type Placement struct {
	PoolTensor
	RowBytes int64 // bytes per row
	Offset   int64 // a multiple of PoolAlign
	Size     int64 // Rows*RowBytes
}

// Plan lays out tensors back to back in one allocation of Size bytes.
type Plan struct {
	Tensors []Placement // in the order given
	Size    int64       // total bytes, a multiple of PoolAlign
}

// PlanPool places ts in order, each at the next PoolAlign-aligned offset.
//
// Errors: a *TensorError naming the first tensor whose type has no GPU
// kernel (wrapping ErrUnsupportedType) or whose row length is not whole
// blocks of its type (wrapping the q4k row-length error).
func PlanPool(ts []PoolTensor) (Plan, error) {
	p := Plan{Tensors: make([]Placement, 0, len(ts))}
	for _, t := range ts {
		if _, ok := KernelTypes[t.Type]; !ok {
			return Plan{}, &TensorError{Tensor: t.Name, Err: ErrUnsupportedType, Detail: "ggml type " + t.Type.String()}
		}
		rb, err := t.Type.RowSize(t.Cols)
		if err != nil {
			return Plan{}, &TensorError{Tensor: t.Name, Err: err}
		}
		if t.Rows < 0 {
			return Plan{}, &TensorError{Tensor: t.Name, Err: fmt.Errorf("cuda: %d rows", t.Rows)}
		}
		size := int64(t.Rows) * int64(rb)
		p.Tensors = append(p.Tensors, Placement{PoolTensor: t, RowBytes: int64(rb), Offset: p.Size, Size: size})
		p.Size = alignUp(p.Size+size, PoolAlign)
	}
	return p, nil
}

func alignUp(n, a int64) int64 { return (n + a - 1) / a * a }
