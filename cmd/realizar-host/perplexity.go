package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/spf13/cobra"

	"github.com/realizar-host/realizar-host/engine"
	"github.com/realizar-host/realizar-host/tokenizer"
)

func newPerplexityCmd() *cobra.Command {
	var (
		mf     modelFlags
		file   string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "perplexity --model M.gguf --file TEXT [--ctx-size N]",
		Short: "Score a text teacher-forced and print the model's perplexity on it",
		Long: "Tokenize the file (with BOS), cut it into chunks of the context size, run each chunk\n" +
			"through the model teacher-forced and print exp(mean negative log-likelihood) of every\n" +
			"token after the first of each chunk, with the scoring speed.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := mf.resolve(); err != nil {
				return err
			}
			if file == "" {
				return usage(errors.New("no text: pass --file FILE"))
			}
			if mf.ctxSize == 1 {
				// A chunk scores every token after its first: one position predicts nothing.
				return usage(errors.New("--ctx-size 1 leaves no token to predict: perplexity needs at least 2 positions"))
			}
			in, err := readInput("--file", file)
			if err != nil {
				return err
			}
			text := in.text
			m, err := loadModel(&mf, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer m.Close()
			sess, err := engine.NewSession(m.fwd, m.tok)
			if err != nil {
				return failure(err)
			}
			tokens := m.tok.Encode(string(text), tokenizer.EncodeOptions{AddSpecial: true})
			if len(tokens) < 2 {
				return in.refuse(fmt.Errorf("--file %s: %d token(s), nothing to score (perplexity predicts every token after the first)", file, len(tokens)))
			}
			res, err := perplexity(cmd.Context(), sess, tokens, m.fwd.ContextLength())
			if err != nil {
				if errors.Is(err, engine.ErrCancelled) {
					return &cmdError{code: exitInterrupted, err: errors.New("interrupted")}
				}
				return turnError(err)
			}
			if asJSON {
				return encodeJSON(cmd, res)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "perplexity %.4f over %d tokens (%d chunk(s) of up to %d) | %.1f tok/s\n",
				res.Perplexity, res.Scored, res.Chunks, res.ChunkSize, res.TokPerSec)
			return nil
		},
	}
	mf.register(cmd)
	cmd.Flags().StringVar(&file, "file", "", "the text to score")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	_ = cmd.MarkFlagRequired("file")
	return cmd
}

// pplResult is perplexity's report.
type pplResult struct {
	Perplexity float64 `json:"perplexity"`
	NLL        float64 `json:"mean_nll"`   // mean negative log-likelihood, nats per token
	Scored     int     `json:"scored"`     // tokens predicted
	Tokens     int     `json:"tokens"`     // tokens in the text, BOS included
	Chunks     int     `json:"chunks"`     // chunks scored
	ChunkSize  int     `json:"chunk_size"` // the context size
	TokPerSec  float64 `json:"tok_per_s"`  // positions forwarded per second
}

// perplexity scores tokens in chunks of chunk tokens through sess.Score.
func perplexity(ctx context.Context, sess *engine.Session, tokens []int32, chunk int) (pplResult, error) {
	res := pplResult{Tokens: len(tokens), ChunkSize: chunk}
	if len(tokens) < 2 {
		return res, fmt.Errorf("the text has %d token(s); perplexity needs at least 2: %w", len(tokens), engine.ErrEmptyPrompt)
	}
	var nll float64
	var forwarded int
	start := time.Now()
	for lo := 0; lo < len(tokens)-1; lo += chunk {
		part := tokens[lo:min(lo+chunk, len(tokens))]
		if len(part) < 2 {
			break
		}
		err := sess.Score(part, func(i int, logits []float32) error {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("%w: %w", engine.ErrCancelled, err)
			}
			if i+1 < len(part) {
				nll -= engine.LogSoftmaxAt(logits, part[i+1])
				res.Scored++
			}
			return nil
		})
		if err != nil {
			return res, err
		}
		forwarded += len(part)
		res.Chunks++
	}
	res.NLL = nll / float64(res.Scored)
	res.Perplexity = math.Exp(res.NLL)
	res.TokPerSec = tokPerSec(forwarded, time.Since(start))
	return res, nil
}

// encodeJSON prints v indented on the command's stdout.
func encodeJSON(cmd *cobra.Command, v any) error {
	enc := json.NewEncoder(cmd.OutOrStdout())
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return failure(err)
	}
	return nil
}
