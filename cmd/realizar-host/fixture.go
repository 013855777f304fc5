package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/realizar-host/realizar-host/fixture"
	"github.com/realizar-host/realizar-host/gguf"
	"github.com/spf13/cobra"
)

// qwen2VocabName is llama.cpp's qwen2 vocab file, looked up in
// $LLAMAREF_DIR/vocab and then .cache/llamaref/vocab.
const qwen2VocabName = "ggml-vocab-qwen2.gguf"

func newFixtureCmd() *cobra.Command {
	var preset, out, vocabPath string
	var seed uint64
	cmd := &cobra.Command{
		Use:    "fixture --preset NAME --out FILE [--vocab FILE] [--seed N]",
		Short:  "Write a random-weight GGUF model for tests and benchmarks",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, ok := fixture.Preset(preset)
			if !ok {
				return &cmdError{code: exitUsage, err: fmt.Errorf("fixture: unknown preset %q (want one of %s)",
					preset, strings.Join(fixture.PresetNames(), ", "))}
			}
			if cmd.Flags().Changed("seed") {
				cfg.Seed = seed
			}
			vocab, err := openVocab(cfg.Arch, vocabPath)
			if err != nil {
				return badFile(err)
			}
			defer vocab.Close()
			if err := fixture.GenerateFile(out, cfg, vocab); err != nil {
				return failure(err)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&preset, "preset", "", "model shape: "+strings.Join(fixture.PresetNames(), ", "))
	cmd.Flags().StringVar(&out, "out", "", "output GGUF path")
	cmd.Flags().StringVar(&vocabPath, "vocab", "", "vocab-only GGUF to copy the tokenizer from "+
		"(default: the embedded llama SPM vocab for llama; "+qwen2VocabName+" from $LLAMAREF_DIR/vocab or .cache/llamaref/vocab for qwen2)")
	cmd.Flags().Uint64Var(&seed, "seed", 0, "weight seed (default: the preset's)")
	_ = cmd.MarkFlagRequired("preset")
	_ = cmd.MarkFlagRequired("out")
	return cmd
}

// openVocab opens the vocab file at path, or the default one for arch.
func openVocab(arch, path string) (*gguf.File, error) {
	if path != "" {
		return gguf.Open(path)
	}
	if arch == "llama" {
		return fixture.LlamaVocab()
	}
	var tried []string
	if d := os.Getenv("LLAMAREF_DIR"); d != "" {
		tried = append(tried, filepath.Join(d, "vocab", qwen2VocabName))
	}
	tried = append(tried, filepath.Join(".cache", "llamaref", "vocab", qwen2VocabName))
	for _, p := range tried {
		if _, err := os.Stat(p); err == nil {
			return gguf.Open(p)
		}
	}
	return nil, fmt.Errorf("fixture: no vocab for %s: pass --vocab, or install the llama.cpp reference (looked for %s)",
		arch, strings.Join(tried, ", "))
}
