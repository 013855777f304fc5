package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/realizar-host/realizar-host/embedding"
	"github.com/realizar-host/realizar-host/forward"
	"github.com/realizar-host/realizar-host/tokenizer"
)

// poolingFlagUsage is --pooling's help, shared by embed and serve.
const poolingFlagUsage = "pooling of the final hidden states into one embedding: mean, cls or last (default: the file's {arch}.pooling_type, as llama.cpp's --pooling); none turns embeddings off"

// checkPoolingFlag is a usage error unless flag is empty or one of
// llama.cpp's --pooling names this host embeds with (mean, cls, last) or
// none. The error for an unknown name lists only the names the command
// takes: none only where it means something (serve: embeddings off;
// noneOK), never rank.
func checkPoolingFlag(flag string, noneOK bool) error {
	if flag == "" {
		return nil
	}
	p, err := embedding.ParsePooling(flag)
	if err != nil {
		valid := "mean, cls or last"
		if noneOK {
			valid = "mean, cls, last or none (embeddings off)"
		}
		return usage(fmt.Errorf("--pooling %q: choose %s", flag, valid))
	}
	if p == embedding.PoolingRank {
		return usage(errors.New("--pooling rank (a reranker's score) is not supported: choose mean, cls or last"))
	}
	return nil
}

// embedderFor is the Embedder over l's weights with --pooling's type, or
// the file's when the flag is empty. reason is why there is none (nil
// Embedder, nil error): the flag says none, or the file declares no
// pooling type (or none) and the flag is empty. flag has passed
// checkPoolingFlag; a malformed pooling_type is a bad file.
func embedderFor(l *loaded, flag string) (e *embedding.Embedder, reason string, err error) {
	var p embedding.Pooling
	switch flag {
	case "":
		var declared bool
		if p, declared, err = embedding.PoolingOf(l.file); err != nil {
			return nil, "", badFile(err)
		}
		if !declared {
			return nil, "the model declares no pooling type (a generative model, as llama.cpp reads it): choose one with --pooling mean, cls or last", nil
		}
	default:
		if p, err = embedding.ParsePooling(flag); err != nil {
			return nil, "", usage(fmt.Errorf("--pooling: %w", err))
		}
	}
	switch p {
	case embedding.PoolingNone:
		return nil, "pooling type none makes one vector per token, not an embedding: choose --pooling mean, cls or last", nil
	case embedding.PoolingRank:
		return nil, "the model's pooling type is rank (a reranker), which is not supported: choose --pooling mean, cls or last", nil
	}
	e, err = embedding.New(l.model, p)
	if err != nil {
		return nil, "", failure(err)
	}
	return e, "", nil
}

func newEmbedCmd() *cobra.Command {
	var (
		mf      modelFlags
		pooling string
		file    string
		asJSON  bool
	)
	cmd := &cobra.Command{
		Use:   "embed --model M.gguf [--pooling mean|cls|last] (TEXT... | --file F) [--json]",
		Short: "Print the embedding of each text: the final hidden states pooled and normalized, as llama.cpp's",
		Long: "Embed each TEXT (or each line of --file, empty lines skipped): tokenize it with BOS, run it\n" +
			"through the model, pool the output-normed final hidden states by the pooling type (--pooling,\n" +
			"or the file's {arch}.pooling_type) and scale the vector to unit Euclidean length, as\n" +
			"llama-server's /v1/embeddings does. Prints one line per input: its values separated by\n" +
			"spaces; --json prints one document in the shape of OpenAI's embeddings response instead.",
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := mf.resolve(); err != nil {
				return err
			}
			inputs := args
			if file != "" {
				if len(args) > 0 {
					return usage(errors.New("give texts as arguments or --file, not both"))
				}
				in, err := readInput("--file", file)
				if err != nil {
					return err
				}
				b := in.text
				sc := bufio.NewScanner(bytes.NewReader(b))
				sc.Buffer(nil, len(b)+1)
				for sc.Scan() {
					if line := strings.TrimSuffix(sc.Text(), "\r"); line != "" {
						inputs = append(inputs, line)
					}
				}
			}
			if len(inputs) == 0 {
				return usage(errors.New("nothing to embed: pass texts as arguments or --file FILE"))
			}
			for i, in := range inputs {
				if in == "" {
					return usage(fmt.Errorf("input %d is empty (inputs count from 0, as --json's index)", i))
				}
			}
			if err := checkPoolingFlag(pooling, false); err != nil {
				return err
			}
			m, err := loadModel(&mf, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer m.Close()
			e, reason, err := embedderFor(m, pooling)
			if err != nil {
				return err
			}
			if e == nil {
				return usage(errors.New(reason))
			}
			doc := embedDoc{Object: "list", Model: modelID(mf.path), Pooling: e.Pooling().String()}
			out := bufio.NewWriter(cmd.OutOrStdout())
			for i, in := range inputs {
				toks := m.tok.Encode(in, tokenizer.EncodeOptions{AddSpecial: true, ParseSpecial: true})
				if n := m.fwd.ContextLength(); len(toks) > n {
					return turnError(fmt.Errorf("input %d (counting from 0, as --json's index) is %d tokens, the context %d: %w", i, len(toks), n, forward.ErrContextExceeded))
				}
				v, err := e.Embed(toks)
				if err != nil {
					return turnError(fmt.Errorf("input %d (counting from 0, as --json's index): %w", i, err))
				}
				doc.Usage.PromptTokens += len(toks)
				if asJSON {
					doc.Data = append(doc.Data, embedItem{Object: "embedding", Index: i, Embedding: v})
					continue
				}
				line := make([]byte, 0, 12*len(v))
				for j, x := range v {
					if j > 0 {
						line = append(line, ' ')
					}
					line = strconv.AppendFloat(line, float64(x), 'g', -1, 32)
				}
				line = append(line, '\n')
				if _, err := out.Write(line); err != nil {
					return failure(err)
				}
			}
			if asJSON {
				doc.Usage.TotalTokens = doc.Usage.PromptTokens
				return encodeJSON(cmd, doc)
			}
			if err := out.Flush(); err != nil {
				return failure(err)
			}
			return nil
		},
	}
	mf.register(cmd)
	cmd.Flags().StringVar(&pooling, "pooling", "", poolingFlagUsage)
	cmd.Flags().StringVar(&file, "file", "", "embed each non-empty line of FILE")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON document in the shape of OpenAI's embeddings response")
	return cmd
}

// embedDoc is embed --json's document: OpenAI's embeddings response, with
// the pooling type used.
type embedDoc struct {
	Object  string      `json:"object"`
	Data    []embedItem `json:"data"`
	Model   string      `json:"model"`
	Pooling string      `json:"pooling"`
	Usage   struct {
		PromptTokens int `json:"prompt_tokens"`
		TotalTokens  int `json:"total_tokens"`
	} `json:"usage"`
}

type embedItem struct {
	Object    string    `json:"object"`
	Index     int       `json:"index"`
	Embedding []float32 `json:"embedding"`
}
