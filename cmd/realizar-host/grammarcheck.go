package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/realizar-host/realizar-host/internal/grammar"
	"github.com/realizar-host/realizar-host/tokenizer"
)

func newGrammarCmd() *cobra.Command {
	return groupCmd("grammar", "Work with grammars and JSON schemas", newGrammarCheckCmd())
}

type grammarCheckOptions struct {
	model, schema, gbnf string
	asJSON              bool
	reuse               bool // one matcher per schema, reset between instances
}

func newGrammarCheckCmd() *cobra.Command {
	var o grammarCheckOptions
	cmd := &cobra.Command{
		Use:   "check --model M.gguf [--json-schema S.json | --grammar G.gbnf|GBNF] [--json] FILE...",
		Short: "Walk JSON instances token by token through a schema's or grammar's mask",
		Long: "Compile each FILE's schema (a MaskBench test file: {schema, tests: [{valid, data}]}; its own\n" +
			"schema unless --json-schema or --grammar is given) or the given one (for a bare JSON instance),\n" +
			"serialize each instance compactly (object keys in the schema's properties order, then the\n" +
			"rest in file order), tokenize it with --model's vocabulary (a vocab-only GGUF will do) and walk\n" +
			"its tokens through the allowed-token mask: an instance is accepted when every token and then\n" +
			"end of generation are allowed. TTFM is the time to the first mask (compile and first mask,\n" +
			"not the once-per-vocabulary preparation), TBM the time of one token's mask, pooled over every\n" +
			"token of every file. Each instance starts a fresh matcher (its states computed anew; the masks\n" +
			"that the schema's earlier matchers computed are shared through the compiled grammar, as for\n" +
			"concurrent requests on one compiled schema); with --reuse one matcher per schema is reset\n" +
			"between its instances, keeping the states and masks it has computed, as the embedded grammar\n" +
			"processor does between a kept sampler's turns.",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.model == "" {
				return usage(errors.New("grammar check: --model is required"))
			}
			if o.schema != "" && o.gbnf != "" {
				return usage(errors.New("grammar check: --json-schema and --grammar exclude each other"))
			}
			rep, err := grammarCheck(&o, args)
			if err != nil {
				return err
			}
			for _, w := range rep.warnings {
				fmt.Fprintln(cmd.ErrOrStderr(), w)
			}
			if o.asJSON {
				return encodeJSON(cmd, rep)
			}
			rep.writeText(cmd.OutOrStdout())
			return nil
		},
	}
	cmd.Flags().StringVar(&o.model, "model", "", "GGUF model or vocab-only GGUF whose vocabulary to mask")
	cmd.Flags().StringVar(&o.schema, "json-schema", "", "JSON Schema for every FILE: a file, or the schema inline (as run --json-schema)")
	cmd.Flags().StringVar(&o.gbnf, "grammar", "", "GBNF grammar for every FILE: a file or inline GBNF, told apart by its \"::=\" (as run --grammar)")
	cmd.Flags().BoolVar(&o.asJSON, "json", false, "print one JSON document")
	cmd.Flags().BoolVar(&o.reuse, "reuse", false, "one matcher per schema, reset between its instances (the processor's way)")
	return cmd
}

type grammarCheckTest struct {
	Valid    bool   `json:"valid"`
	Accepted bool   `json:"accepted"`
	Error    string `json:"error,omitempty"`
}

type grammarCheckFile struct {
	File     string             `json:"file"`
	SchemaOK bool               `json:"schema_ok"`
	Error    string             `json:"error,omitempty"`
	TTFMus   float64            `json:"ttfm_us"`
	Tests    []grammarCheckTest `json:"tests"`
}

type grammarCheckReport struct {
	Files []grammarCheckFile `json:"files"`
	TBMus struct {
		P50 float64 `json:"p50"`
		P99 float64 `json:"p99"`
		Max float64 `json:"max"`
	} `json:"tbm_us"`
	TTFMus struct {
		P50 float64 `json:"p50"`
		P99 float64 `json:"p99"`
	} `json:"ttfm_us"`
	tokens int
	// warnings are the one-line warnings, for stderr as run prints
	// them, of the keywords a schema has that its grammar does not
	// enforce (grammar.Warning): --json-schema's once, after the flag, and
	// each MaskBench file's own schema's, after the file.
	warnings []string
}

func grammarCheck(o *grammarCheckOptions, files []string) (*grammarCheckReport, error) {
	tok, err := tokenizer.Open(o.model)
	if err != nil {
		return nil, badFile(err)
	}
	vocab := grammar.VocabFromTokenizer(tok)
	greedyPieces = nil
	// The schema or grammar of --json-schema or --grammar is the user's
	// input: one that does not compile is an error (input.refuse's exit
	// status), not a file of the report refused; a MaskBench file's own
	// schema that the engine refuses is a result, reported.
	rep := &grammarCheckReport{Files: []grammarCheckFile{}}
	var fixedSchema, fixedGBNF []byte
	if o.schema != "" {
		in, err := schemaSource(o.schema)
		if err != nil {
			return nil, err
		}
		_, ws, err := compileSchema(in)
		if err != nil {
			return nil, err
		}
		fixedSchema = in.text
		rep.warnings = schemaWarningLines("--json-schema", ws)
	}
	if o.gbnf != "" {
		in, err := grammarSource(o.gbnf)
		if err != nil {
			return nil, err
		}
		if _, err := compileGBNF(in); err != nil {
			return nil, err
		}
		fixedGBNF = in.text
	}
	var tbm, ttfm []time.Duration
	for _, path := range files {
		in, err := readInput("grammar check", path)
		if err != nil {
			return nil, err
		}
		data := in.text
		f := grammarCheckFile{File: path, Tests: []grammarCheckTest{}}
		schema, tests, err := readCheckFile(data)
		if err != nil {
			return nil, badFile(fmt.Errorf("%s: %w", path, err))
		}
		if fixedSchema != nil || fixedGBNF != nil {
			schema = fixedSchema
		}
		if schema == nil && fixedGBNF == nil {
			return nil, usage(fmt.Errorf("%s is a bare instance: give --json-schema or --grammar", path))
		}
		t0 := time.Now()
		var g *grammar.Grammar
		src := string(fixedGBNF)
		if fixedGBNF == nil {
			var ws []grammar.Warning
			src, ws, err = grammar.FromJSONSchemaWarnings(schema)
			if fixedSchema == nil { // --json-schema's were said once, above
				rep.warnings = append(rep.warnings, schemaWarningLines(path, ws)...)
			}
		}
		if err == nil {
			g, err = grammar.Compile(src)
		}
		if err != nil {
			f.Error = err.Error()
			rep.Files = append(rep.Files, f)
			continue
		}
		first := grammar.NewMatcher(g, vocab)
		first.Mask()
		d := time.Since(t0)
		ttfm = append(ttfm, d)
		f.SchemaOK, f.TTFMus = true, us(d)
		for _, tc := range tests {
			res := grammarCheckTest{Valid: tc.valid}
			text, err := grammar.SerializeInstance(schema, tc.data)
			if err != nil {
				res.Error = err.Error()
				f.Tests = append(f.Tests, res)
				continue
			}
			ids := encodeExact(tok, text)
			m := first
			if o.reuse {
				m.Reset()
			} else {
				m = grammar.NewMatcher(g, vocab)
			}
			res.Accepted = true
			for _, id := range append(ids, -1) {
				if id == -2 {
					res.Accepted, res.Error = false, "the vocabulary cannot write the instance"
					break
				}
				t := time.Now()
				mk := m.Mask()
				tbm = append(tbm, time.Since(t))
				rep.tokens++
				if id < 0 {
					if !m.Done() {
						res.Accepted, res.Error = false, "end of generation not allowed"
					}
					break
				}
				if mk[id/32]&(1<<(id%32)) == 0 {
					res.Accepted, res.Error = false, fmt.Sprintf("token %d %q not allowed", id, tok.Piece(id))
					break
				}
				if err := m.Accept(id); err != nil {
					res.Accepted, res.Error = false, err.Error()
					break
				}
			}
			f.Tests = append(f.Tests, res)
		}
		rep.Files = append(rep.Files, f)
	}
	rep.TBMus.P50, rep.TBMus.P99, rep.TBMus.Max = pct(tbm, 50), pct(tbm, 99), pct(tbm, 100)
	rep.TTFMus.P50, rep.TTFMus.P99 = pct(ttfm, 50), pct(ttfm, 99)
	return rep, nil
}

// schemaWarningLines are ws as one-line warnings for stderr, after the
// schema's source (a flag or a file), as run prints --json-schema's.
func schemaWarningLines(source string, ws []grammar.Warning) []string {
	var out []string
	for _, w := range ws {
		out = append(out, "warning: "+source+": "+w.String())
	}
	return out
}

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }

// pct is the p-th percentile (nearest rank) in µs; 0 for no samples.
func pct(ds []time.Duration, p int) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	i = min(max(i-1, 0), len(s)-1)
	return us(s[i])
}

type checkInstance struct {
	valid bool
	data  []byte
}

// readCheckFile reads a MaskBench test file (its schema and tests) or a
// bare JSON instance (no schema, one test marked valid).
func readCheckFile(data []byte) ([]byte, []checkInstance, error) {
	var mb struct {
		Schema json.RawMessage `json:"schema"`
		Tests  []struct {
			Valid bool            `json:"valid"`
			Data  json.RawMessage `json:"data"`
		} `json:"tests"`
	}
	if !json.Valid(data) {
		return nil, nil, errors.New("not JSON")
	}
	if bytes.HasPrefix(bytes.TrimSpace(data), []byte("{")) && json.Unmarshal(data, &mb) == nil && mb.Schema != nil && mb.Tests != nil {
		var tests []checkInstance
		for _, t := range mb.Tests {
			tests = append(tests, checkInstance{t.Valid, t.Data})
		}
		return mb.Schema, tests, nil
	}
	return nil, []checkInstance{{true, data}}, nil
}

func (r *grammarCheckReport) writeText(w io.Writer) {
	compiled, valid, validRej, invalid, invalidAcc := 0, 0, 0, 0, 0
	for _, f := range r.Files {
		if !f.SchemaOK {
			fmt.Fprintf(w, "%s: refused: %s\n", filepath.Base(f.File), f.Error)
			continue
		}
		compiled++
		fmt.Fprintf(w, "%s: ttfm %.0f µs;", filepath.Base(f.File), f.TTFMus)
		for _, t := range f.Tests {
			mark := "ok"
			switch {
			case t.Valid && !t.Accepted:
				mark = "VALID REJECTED"
				validRej++
			case !t.Valid && t.Accepted:
				mark = "INVALID ACCEPTED"
				invalidAcc++
			}
			if t.Valid {
				valid++
			} else {
				invalid++
			}
			fmt.Fprintf(w, " %s", mark)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "compiled %d/%d; valid rejected %d/%d; invalid accepted %d/%d\n", compiled, len(r.Files), validRej, valid, invalidAcc, invalid)
	fmt.Fprintf(w, "TBM (%d masks) p50 %.1f µs, p99 %.1f µs, max %.1f µs; TTFM p50 %.0f µs, p99 %.0f µs\n",
		r.tokens, r.TBMus.P50, r.TBMus.P99, r.TBMus.Max, r.TTFMus.P50, r.TTFMus.P99)
}

// greedyPieces maps each text token's piece to its id (built on first use).
var greedyPieces map[string]int32

// encodeExact tokenizes text as the model would when that gives back
// exactly text; otherwise (SentencePiece vocabularies add a leading space
// to a text run) it takes the longest piece at each position.
func encodeExact(tok *tokenizer.Tokenizer, text string) []int32 {
	ids := tok.Encode(text, tokenizer.EncodeOptions{})
	var pieces []byte
	for _, id := range ids {
		pieces = append(pieces, tok.Piece(id)...)
	}
	if string(pieces) == text {
		return ids
	}
	maxLen := 0
	if greedyPieces == nil {
		greedyPieces = map[string]int32{}
		for id := range int32(tok.Size()) {
			if tok.IsControl(id) || tok.IsEOG(id) {
				continue
			}
			p := string(tok.Piece(id))
			if _, dup := greedyPieces[p]; p != "" && !dup {
				greedyPieces[p] = id
			}
		}
	}
	for p := range greedyPieces {
		maxLen = max(maxLen, len(p))
	}
	ids = ids[:0]
	for i := 0; i < len(text); {
		n := min(maxLen, len(text)-i)
		for ; n > 0; n-- {
			if id, ok := greedyPieces[text[i:i+n]]; ok {
				ids = append(ids, id)
				break
			}
		}
		if n == 0 { // no piece: the byte cannot be written
			return append(ids, -2)
		}
		i += n
	}
	return ids
}
