package quantize

import (
	"fmt"
	"sort"
	"strings"

	"github.com/realizar-host/realizar-host/gguf"
)

// FileType is a llama.cpp file type: the mixture of tensor types a
// quantized file holds. Its value is llama.cpp's LLAMA_FTYPE number, which
// the output records as general.file_type.
type FileType uint32

// The file types File writes.
const (
	F16   FileType = 1  // LLAMA_FTYPE_MOSTLY_F16
	Q4_0  FileType = 2  // LLAMA_FTYPE_MOSTLY_Q4_0
	Q8_0  FileType = 7  // LLAMA_FTYPE_MOSTLY_Q8_0
	Q4_KS FileType = 14 // LLAMA_FTYPE_MOSTLY_Q4_K_S
	Q4_KM FileType = 15 // LLAMA_FTYPE_MOSTLY_Q4_K_M
	BF16  FileType = 32 // LLAMA_FTYPE_MOSTLY_BF16
)

type fileTypeInfo struct {
	name string
	base gguf.TensorType // llama.cpp's default tensor type for the file type
}

var fileTypes = map[FileType]fileTypeInfo{
	F16:   {"F16", gguf.TypeF16},
	Q4_0:  {"Q4_0", gguf.TypeQ4_0},
	Q8_0:  {"Q8_0", gguf.TypeQ8_0},
	Q4_KS: {"Q4_K_S", gguf.TypeQ4_K},
	Q4_KM: {"Q4_K_M", gguf.TypeQ4_K},
	BF16:  {"BF16", gguf.TypeBF16},
}

// FileTypes returns the names ParseFileType accepts, sorted.
func FileTypes() []string {
	names := make([]string, 0, len(fileTypes))
	for _, fi := range fileTypes {
		names = append(names, fi.name)
	}
	sort.Strings(names)
	return names
}

// ParseFileType returns the file type named s, as llama-quantize names it
// ("Q4_K_M", "q8_0"; case-insensitive). It fails with an error wrapping
// ErrFileType.
func ParseFileType(s string) (FileType, error) {
	for ft, fi := range fileTypes {
		if strings.EqualFold(s, fi.name) {
			return ft, nil
		}
	}
	return 0, fmt.Errorf("%w: %q (known: %s)", ErrFileType, s, strings.Join(FileTypes(), ", "))
}

// String returns llama-quantize's name of ft ("Q4_K_M"), or "FileType(N)".
func (ft FileType) String() string {
	if fi, ok := fileTypes[ft]; ok {
		return fi.name
	}
	return fmt.Sprintf("FileType(%d)", uint32(ft))
}

// known reports whether File can write ft.
func (ft FileType) known() bool {
	_, ok := fileTypes[ft]
	return ok
}

// quantized reports whether ft's default type is a block type (not F16/BF16).
func (ft FileType) quantized() bool {
	b := fileTypes[ft].base
	return b != gguf.TypeF16 && b != gguf.TypeBF16
}
