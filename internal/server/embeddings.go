package server

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"

	"github.com/realizar-host/realizar-host/forward"
	"github.com/realizar-host/realizar-host/internal/tenancy"
	"github.com/realizar-host/realizar-host/tokenizer"
)

// Embedder makes one input's embedding (embedding.Embedder): the model's
// final hidden states pooled and normalized. Safe for concurrent use.
type Embedder interface {
	// Embed returns the embedding of tokens, [Dims]float32. Errors:
	// forward.ErrBadToken, forward.ErrContextExceeded, or another failure.
	Embed(tokens []int32) ([]float32, error)
	// Dims is the length of every embedding.
	Dims() int
	// ContextLength is the most tokens one input may have.
	ContextLength() int
}

// Bounds of one embeddings request, OpenAI's: at most 2048 inputs and
// 300,000 tokens over all of them (each input within ContextLength).
const (
	maxEmbeddingInputs = 2048
	maxEmbeddingTokens = 300_000
)

// embeddingsRequest is POST /v1/embeddings's body (OpenAI's shape).
type embeddingsRequest struct {
	Input          json.RawMessage `json:"input"`
	Model          string          `json:"model"`
	EncodingFormat string          `json:"encoding_format"`
	Dimensions     *int            `json:"dimensions"`
	User           string          `json:"user"`
}

// embeddingInput is one input: a text to tokenize, or tokens.
type embeddingInput struct {
	text   *string
	tokens []int32
}

// parseEmbeddingInput reads input as OpenAI defines it: a string, an array
// of strings, an array of token ids (one input) or an array of arrays of
// token ids. An empty input, an empty array, an array mixing the forms or
// more than maxEmbeddingInputs inputs is a 400 naming input.
func parseEmbeddingInput(raw json.RawMessage) ([]embeddingInput, error) {
	const shape = "input must be a string, an array of strings, an array of token ids or an array of arrays of token ids"
	raw = bytes.TrimSpace(raw)
	if !present(raw) {
		return nil, badRequest("input", "input is required")
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []embeddingInput{{text: &one}}, nil
	}
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return nil, badRequest("input", shape)
	}
	if len(items) == 0 {
		return nil, badRequest("input", "input is an empty array")
	}
	if ids, ok := tokenIDs(raw); ok {
		return []embeddingInput{{tokens: ids}}, nil
	}
	if len(items) > maxEmbeddingInputs {
		return nil, badRequest("input", "input holds %d inputs; at most %d", len(items), maxEmbeddingInputs)
	}
	out := make([]embeddingInput, len(items))
	texts := 0
	for i, it := range items {
		var s string
		if json.Unmarshal(it, &s) == nil {
			out[i].text = &s
			texts++
			continue
		}
		ids, ok := tokenIDs(it)
		if !ok {
			return nil, badRequest(fmt.Sprintf("input[%d]", i), shape)
		}
		out[i].tokens = ids
	}
	if texts != 0 && texts != len(out) {
		return nil, badRequest("input", "input mixes strings and token arrays; "+shape)
	}
	return out, nil
}

// tokenIDs reads raw as an array of token ids (JSON integers within
// int32), or reports false.
func tokenIDs(raw json.RawMessage) ([]int32, bool) {
	var nums []json.Number
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if dec.Decode(&nums) != nil {
		return nil, false
	}
	ids := make([]int32, len(nums))
	for i, n := range nums {
		v, err := n.Int64()
		if err != nil || v < math.MinInt32 || v > math.MaxInt32 {
			return nil, false
		}
		ids[i] = int32(v)
	}
	return ids, true
}

// embeddingsResponse is the response body (OpenAI's list of embeddings).
type embeddingsResponse struct {
	Object string          `json:"object"`
	Data   []embeddingItem `json:"data"`
	Model  string          `json:"model"`
	Usage  embeddingsUsage `json:"usage"`
}

type embeddingItem struct {
	Object    string `json:"object"`
	Index     int    `json:"index"`
	Embedding any    `json:"embedding"` // []float32, or a base64 string of little-endian float32s
}

type embeddingsUsage struct {
	PromptTokens int `json:"prompt_tokens"`
	TotalTokens  int `json:"total_tokens"`
}

// errNoEmbeddings is the 400 of a server whose model makes no embeddings.
var errNoEmbeddings = &APIError{Status: http.StatusBadRequest, Type: typeInvalidRequest, Code: "embeddings_unsupported",
	Message: "this server's model makes no embeddings: its file declares no pooling type (mean, cls or last), and the server was started without one"}

// handleEmbeddings is POST /v1/embeddings. Admission comes first, as for
// generation (the tenant's max_concurrent and rate, then its share of the
// queue, held while the request runs), then the body is read and
// validated; the inputs are tokenized and embedded in the tenant's share
// of the preparation pool (the cores), one input after another, and the
// request ends at the first input after its client has gone.
func (s *Server) handleEmbeddings(w http.ResponseWriter, r *http.Request, t *tenancy.Tenant) error {
	body, _, admitted, err := s.admitBody(w, r, t)
	if err != nil {
		return err
	}
	defer admitted()
	var req embeddingsRequest
	if err := decodeBody(body, &req); err != nil {
		return err
	}
	e := s.model.Embedder
	switch {
	case req.Model != "" && req.Model != s.model.ID:
		return notFound("model_not_found", "model %q does not exist; this server serves %q", req.Model, s.model.ID)
	case e == nil:
		return errNoEmbeddings
	case req.EncodingFormat != "" && req.EncodingFormat != "float" && req.EncodingFormat != "base64":
		return badRequest("encoding_format", "encoding_format %q is not float or base64", req.EncodingFormat)
	case req.Dimensions != nil && *req.Dimensions != e.Dims():
		return badRequest("dimensions", "this model's embeddings have %d dimensions; dimensions must be %d or absent (no truncation)", e.Dims(), e.Dims())
	}
	inputs, err := parseEmbeddingInput(req.Input)
	if err != nil {
		return err
	}
	for i, in := range inputs {
		if in.text != nil {
			if err := s.checkPromptBytes(fmt.Sprintf("input[%d]", i), len(*in.text)); err != nil {
				return err
			}
		}
	}
	ctx := r.Context()
	waitCtx, cancel := context.WithTimeout(ctx, prepareTimeout)
	release, err := s.prep.acquire(waitCtx, t.Name)
	cancel()
	if err != nil {
		return prepareError(waitCtx, err)
	}
	defer release()
	tokens, err := s.embeddingTokens(inputs, min(e.ContextLength(), s.model.Forward.ContextLength()))
	if err != nil {
		return err
	}
	res := embeddingsResponse{Object: "list", Model: s.model.ID, Data: make([]embeddingItem, len(tokens))}
	for i, toks := range tokens {
		if err := ctx.Err(); err != nil {
			return err
		}
		v, err := e.Embed(toks)
		if err != nil {
			return embedError(i, err)
		}
		item := embeddingItem{Object: "embedding", Index: i, Embedding: v}
		if req.EncodingFormat == "base64" {
			item.Embedding = base64Floats(v)
		}
		res.Data[i] = item
		res.Usage.PromptTokens += len(toks)
	}
	res.Usage.TotalTokens = res.Usage.PromptTokens
	s.metrics.embeddedTokens.WithLabelValues(t.Name).Add(float64(res.Usage.PromptTokens))
	writeJSON(w, http.StatusOK, res)
	return nil
}

// embeddingTokens tokenizes the text inputs as prompts are (BOS added,
// special tokens parsed, as llama-server's embeddings) and checks every
// input: not empty, ids within the vocabulary, at most contextLength
// tokens, at most maxEmbeddingTokens together.
func (s *Server) embeddingTokens(inputs []embeddingInput, contextLength int) ([][]int32, error) {
	out := make([][]int32, len(inputs))
	total := 0
	vocab := int32(s.model.Tokenizer.Size())
	for i, in := range inputs {
		param := fmt.Sprintf("input[%d]", i)
		if len(inputs) == 1 {
			param = "input"
		}
		toks := in.tokens
		if in.text != nil {
			if *in.text == "" {
				return nil, badRequest(param, "%s is empty", param)
			}
			toks = s.model.Tokenizer.Encode(*in.text, tokenizer.EncodeOptions{AddSpecial: true, ParseSpecial: true})
		}
		if len(toks) == 0 {
			return nil, badRequest(param, "%s holds no tokens", param)
		}
		for _, id := range toks {
			if id < 0 || id >= vocab {
				return nil, badRequest(param, "%s holds token %d; the vocabulary has %d", param, id, vocab)
			}
		}
		if len(toks) > contextLength {
			return nil, &APIError{Status: http.StatusBadRequest, Type: typeInvalidRequest, Param: param, Code: "context_length_exceeded",
				Message: fmt.Sprintf("%s is %d tokens; the context holds %d", param, len(toks), contextLength)}
		}
		if total += len(toks); total > maxEmbeddingTokens {
			return nil, badRequest("input", "input holds over %d tokens in all; at most %d", total, maxEmbeddingTokens)
		}
		out[i] = toks
	}
	return out, nil
}

// embedError maps an Embedder's failure on input i: a bad token or an
// input past the context (which embeddingTokens already refuses, so only
// an Embedder with a shorter context than it reports gives them) is a 400
// naming the input; anything else is the server's own failure (a 500
// whose detail stays in the log).
func embedError(i int, err error) error {
	if errors.Is(err, forward.ErrBadToken) || errors.Is(err, forward.ErrContextExceeded) {
		return badRequest(fmt.Sprintf("input[%d]", i), "input[%d]: %v", i, err)
	}
	return fmt.Errorf("embedding input %d: %w", i, err)
}

// base64Floats is v as OpenAI's base64 encoding_format: the float32s'
// little-endian bytes in standard base64.
func base64Floats(v []float32) string {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return base64.StdEncoding.EncodeToString(b)
}
