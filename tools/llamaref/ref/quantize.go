package ref

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/hybridgroup/yzma/pkg/llama"
)

// ErrUnknownFileType reports a file type name [Lib.Quantize] does not know.
var ErrUnknownFileType = errors.New("unknown llama.cpp file type")

// ErrQuantize reports that llama_model_quantize failed.
var ErrQuantize = errors.New("llama.cpp quantization failed")

// fileTypes maps llama-quantize's names to enum llama_ftype.
var fileTypes = map[string]llama.Ftype{
	"F32":    llama.FtypeAllF32,
	"F16":    llama.FtypeMostlyF16,
	"BF16":   llama.FtypeMostlyBF16,
	"Q4_0":   llama.FtypeMostlyQ4_0,
	"Q5_0":   llama.FtypeMostlyQ5_0,
	"Q8_0":   llama.FtypeMostlyQ8_0,
	"Q4_K_S": llama.FtypeMostlyQ4_K_S,
	"Q4_K_M": llama.FtypeMostlyQ4_K_M,
	"Q5_K_S": llama.FtypeMostlyQ5_K_S,
	"Q5_K_M": llama.FtypeMostlyQ5_K_M,
	"Q6_K":   llama.FtypeMostlyQ6_K,
}

// FileTypes lists the file type names [Lib.Quantize] accepts, sorted.
func FileTypes() []string {
	names := make([]string, 0, len(fileTypes))
	for n := range fileTypes {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// quantizeThreads is the thread count of llama_model_quantize. Its output
// does not depend on it (rows are quantized independently); 2 matches CI.
const quantizeThreads = 2

// Quantize writes to out the GGUF file in (F32, F16 or BF16 weights)
// quantized by llama.cpp's own quantizer, llama_model_quantize, to ftype —
// llama-quantize's name for it, case-insensitive: Q4_K_M, Q4_K_S, Q8_0, Q4_0,
// F16, BF16 (see [FileTypes]). No importance matrix is used; tensors whose
// rows do not fit the chosen type fall back as llama.cpp decides.
//
// Errors: [ErrUnknownFileType], a missing input (an *fs.PathError), or
// [ErrQuantize] naming both files.
func (l *Lib) Quantize(in, out, ftype string) error {
	ft, ok := fileTypes[strings.ToUpper(ftype)]
	if !ok {
		return fmt.Errorf("%w: %q (known: %s)", ErrUnknownFileType, ftype, strings.Join(FileTypes(), ", "))
	}
	if _, err := os.Stat(in); err != nil {
		return err
	}
	p := llama.ModelQuantizeDefaultParams()
	p.Ftype = ft
	p.NThread = quantizeThreads
	if rc := llama.ModelQuantize(in, out, &p); rc != 0 {
		return fmt.Errorf("%w: %s -> %s (%s): status %d", ErrQuantize, in, out, ftype, rc)
	}
	return nil
}
