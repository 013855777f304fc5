package gguf_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/realizar-host/realizar-host/gguf"
)

func Example() {
	dir, err := os.MkdirTemp("", "gguf-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "tiny.gguf")

	// A 2×3 F32 matrix: 3 rows of 2 elements (Dims[0] is the row length).
	err = gguf.WriteFile(path,
		[]gguf.KV{{Key: "general.architecture", Value: "llama"}, {Key: "llama.block_count", Value: uint32(2)}},
		[]gguf.Tensor{{Name: "w", Type: gguf.TypeF32, Dims: []int64{2, 3}, Data: make([]byte, 24)}})
	if err != nil {
		log.Fatal(err)
	}

	f, err := gguf.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	arch, _ := f.String("general.architecture")
	layers, _ := f.Uint32("llama.block_count")
	_, err = f.Uint32("llama.context_length")
	fmt.Println(arch, layers, err)
	for _, t := range f.Tensors {
		data, _ := f.TensorData(t.Name)
		fmt.Println(t.Name, t.Type, t.Dims, len(data))
	}
	// Output:
	// llama 2 gguf: key "llama.context_length" not found
	// w F32 [2 3] 24
}
