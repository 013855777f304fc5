package main

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/realizar-host/realizar-host/internal/arch"

	"github.com/realizar-host/realizar-host/gguf"
	"github.com/realizar-host/realizar-host/internal/fixture"
	"github.com/realizar-host/realizar-host/internal/quantize"
	"github.com/spf13/cobra"
)

func newFixtureCmd() *cobra.Command {
	var preset, out, vocabPath, fileType string
	var seed uint64
	var threads int
	cmd := &cobra.Command{
		Use:   "fixture --preset NAME --out FILE [--type TYPE] [--vocab FILE] [--seed N]",
		Short: "Write a random-weight GGUF model for tests and benchmarks",
		Long: "Write a random-weight GGUF model of a preset's shape, in the preset's float type, or with\n" +
			"--type quantized directly (" + strings.Join(quantize.FileTypes(), ", ") + "): each tensor is drawn and\n" +
			"quantized in memory, and the file equals `quantize` of the float one, byte for byte, without\n" +
			"the float file (llama2-7b: 3.9 GB of Q4_K_M instead of 13.5 GB of F16 first).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, ok := fixture.Preset(preset)
			if !ok {
				return &cmdError{code: exitUsage, err: fmt.Errorf("fixture: unknown preset %q (want one of %s)",
					preset, strings.Join(fixture.PresetNames(), ", "))}
			}
			var ft quantize.FileType
			if fileType != "" {
				var err error
				if ft, err = quantize.ParseFileType(fileType); err != nil {
					return &cmdError{code: exitUsage, err: err}
				}
			}
			if threads < 0 {
				return &cmdError{code: exitUsage, err: fmt.Errorf("fixture: --threads %d is negative", threads)}
			}
			if cmd.Flags().Changed("seed") {
				cfg.Seed = seed
			}
			vocab, err := openVocab(cfg.Arch, vocabPath)
			if err != nil {
				return badFile(err)
			}
			defer vocab.Close()
			if fileType != "" {
				rep, err := fixture.GenerateQuantizedFile(out, cfg, vocab, quantize.Options{FileType: ft, Threads: threads})
				if err != nil {
					return failure(err)
				}
				if err := writeQuantizeSummary(cmd.OutOrStdout(), out, rep, true); err != nil {
					return failure(err)
				}
				return nil
			}
			if err := fixture.GenerateFile(out, cfg, vocab); err != nil {
				return failure(err)
			}
			st, err := os.Stat(out)
			if err != nil {
				return failure(err)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "%s: preset %s, %.1f MB\n", out, preset, float64(st.Size())/1e6)
			return err
		},
	}
	cmd.Flags().StringVar(&preset, "preset", "", "model shape: "+strings.Join(fixture.PresetNames(), ", "))
	cmd.Flags().StringVar(&out, "out", "", "output GGUF path")
	cmd.Flags().StringVar(&vocabPath, "vocab", "", "vocab-only GGUF to copy the tokenizer from "+
		"(default: "+vocabDefaults()+", from $LLAMAREF_DIR/vocab or <repository>/.cache/llamaref/vocab)")
	cmd.Flags().Uint64Var(&seed, "seed", 0, "weight seed (default: the preset's)")
	cmd.Flags().StringVar(&fileType, "type", "", "write quantized directly: "+strings.Join(quantize.FileTypes(), ", ")+" (default: the preset's float type)")
	cmd.Flags().IntVar(&threads, "threads", 0, "quantization workers with --type (default: all CPUs)")
	_ = cmd.MarkFlagRequired("preset")
	_ = cmd.MarkFlagRequired("out")
	return cmd
}

// vocabDefaults says which vocabulary each registered architecture's
// presets carry (arch.Arch.Vocab): "the embedded llama SPM vocab for gemma3
// and llama; ggml-vocab-phi-3.gguf for phi3; …".
func vocabDefaults() string {
	byVocab := map[string][]string{}
	for _, n := range arch.Names() {
		v := fixture.VocabFile(n)
		byVocab[v] = append(byVocab[v], n)
	}
	vocabs := slices.Sorted(maps.Keys(byVocab))
	parts := make([]string, 0, len(vocabs))
	for _, v := range vocabs {
		label := v
		if v == "" {
			label = "the embedded llama SPM vocab"
		}
		parts = append(parts, label+" for "+arch.List(byVocab[v], "and"))
	}
	return strings.Join(parts, "; ")
}

// openVocab opens the vocab file at path, or the default one for arch:
// the embedded llama vocabulary, or llama.cpp's fixture.VocabFile(arch)
// looked up in $LLAMAREF_DIR/vocab and then
// <repository>/.cache/llamaref/vocab (repoRoots).
func openVocab(arch, path string) (*gguf.File, error) {
	if path != "" {
		return gguf.Open(path)
	}
	name := fixture.VocabFile(arch)
	if name == "" {
		return fixture.LlamaVocab()
	}
	var tried []string
	if d := os.Getenv("LLAMAREF_DIR"); d != "" {
		tried = append(tried, filepath.Join(d, "vocab", name))
	}
	for _, root := range repoRoots() {
		tried = append(tried, filepath.Join(root, ".cache", "llamaref", "vocab", name))
	}
	for _, p := range tried {
		if _, err := os.Stat(p); err == nil {
			return gguf.Open(p)
		}
	}
	return nil, fmt.Errorf("fixture: no vocab for %s: pass --vocab, set LLAMAREF_DIR, or install the llama.cpp reference with make ref-install (looked for %s)",
		arch, strings.Join(tried, ", "))
}

// repoRoots are the directories whose .cache/llamaref may hold the
// reference: the nearest ancestor of the working directory that holds a
// go.mod naming this module, else the working directory itself.
func repoRoots() []string {
	wd, err := os.Getwd()
	if err != nil {
		return []string{"."}
	}
	for d := wd; ; {
		if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil && strings.Contains(string(b), "module "+repoModule+"\n") {
			return []string{d}
		}
		parent := filepath.Dir(d)
		if parent == d {
			return []string{wd}
		}
		d = parent
	}
}

// repoModule is the Go module of this repository, as its go.mod names it.
const repoModule = "github.com/realizar-host/realizar-host"
