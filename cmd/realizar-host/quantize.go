package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/realizar-host/realizar-host/internal/arch"

	"github.com/realizar-host/realizar-host/gguf"
	"github.com/realizar-host/realizar-host/internal/quantize"
	"github.com/spf13/cobra"
)

func newQuantizeCmd() *cobra.Command {
	var threads int
	cmd := &cobra.Command{
		Use:   "quantize IN.gguf OUT.gguf TYPE",
		Short: "Quantize an F32/F16/BF16 GGUF model to " + strings.Join(quantize.FileTypes(), ", ") + " with llama.cpp's type rules",
		Long: "Quantize an F32, F16 or BF16 GGUF model (" + arch.List(arch.Names(), "or") + ") into OUT.gguf.\n" +
			"TYPE is one of " + strings.Join(quantize.FileTypes(), ", ") + " (case-insensitive);\n" +
			"each tensor gets the type llama.cpp's llama-quantize would give it, and the same bytes.",
		Args: cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			ft, err := quantize.ParseFileType(args[2])
			if err != nil {
				return &cmdError{code: exitUsage, err: err}
			}
			if threads < 0 {
				return &cmdError{code: exitUsage, err: fmt.Errorf("quantize: --threads %d is negative", threads)}
			}
			if _, err := os.Stat(args[0]); err != nil {
				return badFile(err)
			}
			if err := notDir(args[0]); err != nil {
				return err
			}
			rep, err := quantize.File(args[1], args[0], quantize.Options{FileType: ft, Threads: threads})
			if err != nil {
				return quantizeError(err)
			}
			if err := writeQuantizeSummary(cmd.OutOrStdout(), args[1], rep, false); err != nil {
				return failure(err)
			}
			return nil
		},
	}
	cmd.Flags().IntVar(&threads, "threads", 0, "worker threads (default: all CPUs)")
	return cmd
}

// quantizeError gives a quantize failure its exit status: a problem with
// the input model (malformed, or without type rules) is a bad file;
// anything else (creating or writing OUT) is a failure.
func quantizeError(err error) error {
	var fe *gguf.FormatError
	switch {
	case errors.As(err, &fe), errors.Is(err, quantize.ErrArchitecture), errors.Is(err, quantize.ErrMetadata),
		errors.Is(err, quantize.ErrSourceType):
		return badFile(err)
	}
	return failure(err)
}

// writeQuantizeSummary prints one line: the output, its tensor types and the
// sizes. drawn says the tensors were drawn and quantized in memory (fixture
// --type): the float size is then one never written, and says so.
func writeQuantizeSummary(w io.Writer, out string, rep quantize.Report, drawn bool) error {
	h := rep.Histogram()
	types := make([]gguf.TensorType, 0, len(h))
	for t := range h {
		types = append(types, t)
	}
	slices.Sort(types)
	parts := make([]string, len(types))
	for i, t := range types {
		parts[i] = fmt.Sprintf("%v %d", t, h[t])
	}
	sizes := fmt.Sprintf("%.1f MB -> %.1f MB", float64(rep.SourceBytes)/1e6, float64(rep.OutputBytes)/1e6)
	if drawn {
		sizes = fmt.Sprintf("%.1f MB (%.1f MB as floats, never written)", float64(rep.OutputBytes)/1e6, float64(rep.SourceBytes)/1e6)
	}
	_, err := fmt.Fprintf(w, "%s: %v, %d tensors (%s), %s in %.2fs\n",
		out, rep.FileType, len(rep.Tensors), strings.Join(parts, ", "), sizes, rep.Elapsed.Seconds())
	return err
}
