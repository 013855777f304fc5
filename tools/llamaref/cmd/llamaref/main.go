package main

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/realizar-host/realizar-host/tools/llamaref/ref"
)

const usage = `usage: llamaref COMMAND [flags] ARGS

commands:
  quantize IN OUT FTYPE         quantize with llama_model_quantize (FTYPE: %s)
  tensors [-json] FILE          tensor table and type histogram, as ggml's gguf reader sees them
  dequant [-n N] [-o OUT] FILE TENSOR
                                decode a tensor with ggml's to_float; -o writes raw little-endian
                                float32, else the first N values are printed
  tokenize [-special=false] [-parse-special] MODEL TEXT
                                token ids, one line
  detokenize MODEL ID...        text of ids
  logits [-ctx N] [-top K] [-o OUT] MODEL TEXT
                                teacher-forced logits of every position; -o writes raw float32
                                [positions][n_vocab], else the top K per position are printed
  greedy [-ctx N] [-n N] [-ignore-eog] MODEL PROMPT
                                greedy continuation: ids and text
  bench [-ctx N] [-p P] [-g G] [-t 1,2] [-sleep] MODEL
                                prefill P / decode G tokens per second at each thread count
`

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "llamaref:", err)
		os.Exit(1)
	}
}

var errUsage = errors.New("bad usage (llamaref help)")

func run(args []string, w io.Writer) error {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprintf(w, usage, strings.Join(ref.FileTypes(), ", "))
		return nil
	}
	cmd, args := args[0], args[1:]
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	commands := map[string]func(*flag.FlagSet, []string, io.Writer) error{
		"quantize": cmdQuantize, "tensors": cmdTensors, "dequant": cmdDequant,
		"tokenize": cmdTokenize, "detokenize": cmdDetokenize, "logits": cmdLogits,
		"greedy": cmdGreedy, "bench": cmdBench,
	}
	f, ok := commands[cmd]
	if !ok {
		return fmt.Errorf("unknown command %q: %w", cmd, errUsage)
	}
	return f(fs, args, w)
}

func parse(fs *flag.FlagSet, args []string, nargs int, atLeast bool) ([]string, error) {
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	rest := fs.Args()
	if len(rest) < nargs || (!atLeast && len(rest) != nargs) {
		return nil, fmt.Errorf("%s wants %d arguments, got %d: %w", fs.Name(), nargs, len(rest), errUsage)
	}
	return rest, nil
}

func cmdQuantize(fs *flag.FlagSet, args []string, w io.Writer) error {
	a, err := parse(fs, args, 3, false)
	if err != nil {
		return err
	}
	l, err := ref.OpenDefault()
	if err != nil {
		return err
	}
	if err := l.Quantize(a[0], a[1], a[2]); err != nil {
		return err
	}
	fmt.Fprintf(w, "%s -> %s (%s)\n", a[0], a[1], a[2])
	return nil
}

func cmdTensors(fs *flag.FlagSet, args []string, w io.Writer) error {
	asJSON := fs.Bool("json", false, "print JSON")
	a, err := parse(fs, args, 1, false)
	if err != nil {
		return err
	}
	l, err := ref.OpenDefault()
	if err != nil {
		return err
	}
	f, err := l.ReadGGUF(a[0])
	if err != nil {
		return err
	}
	hist := f.Histogram(l)
	if *asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			*ref.GGUFFile
			Histogram map[string]int `json:"histogram"`
		}{f, hist})
	}
	fmt.Fprintf(w, "GGUF v%d, architecture %q, %d keys, %d tensors, data at byte %d\n",
		f.Version, f.Architecture, f.KVCount, len(f.Tensors), f.DataOffset)
	for _, t := range f.Tensors {
		info, _ := l.TypeInfo(t.Type)
		fmt.Fprintf(w, "  %-32s %-6s %v\n", t.Name, info.Name, t.Dims)
	}
	names := make([]string, 0, len(hist))
	for n := range hist {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "%s: %d\n", n, hist[n])
	}
	return nil
}

func cmdDequant(fs *flag.FlagSet, args []string, w io.Writer) error {
	n := fs.Int("n", 16, "values to print")
	out := fs.String("o", "", "write all values as raw little-endian float32 to this file")
	a, err := parse(fs, args, 2, false)
	if err != nil {
		return err
	}
	l, err := ref.OpenDefault()
	if err != nil {
		return err
	}
	f, err := l.ReadGGUF(a[0])
	if err != nil {
		return err
	}
	var ti *ref.TensorInfo
	for i := range f.Tensors {
		if f.Tensors[i].Name == a[1] {
			ti = &f.Tensors[i]
		}
	}
	if ti == nil {
		return fmt.Errorf("%s: no tensor %q", a[0], a[1])
	}
	data, err := readAt(a[0], ti.Offset, ti.Size)
	if err != nil {
		return err
	}
	count := 1
	for _, d := range ti.Dims {
		count *= int(d)
	}
	vals, err := l.Dequantize(ti.Type, data, count)
	if err != nil {
		return fmt.Errorf("%s: %w", ti.Name, err)
	}
	if *out != "" {
		return writeF32(*out, vals)
	}
	for i := 0; i < min(*n, len(vals)); i++ {
		fmt.Fprintln(w, vals[i])
	}
	return nil
}

func readAt(path string, off, size int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, size)
	if _, err := f.ReadAt(buf, off); err != nil {
		return nil, fmt.Errorf("%s: %d bytes at %d: %w", path, size, off, err)
	}
	return buf, nil
}

func writeF32(path string, vals []float32) error {
	buf := make([]byte, 4*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(v))
	}
	return os.WriteFile(path, buf, 0o644)
}

// openModel loads a model; vocabOnly loads only its vocabulary.
func openModel(path string, vocabOnly bool) (*ref.Model, error) {
	l, err := ref.OpenDefault()
	if err != nil {
		return nil, err
	}
	if vocabOnly {
		return l.LoadVocab(path)
	}
	return l.LoadModel(path)
}

func cmdTokenize(fs *flag.FlagSet, args []string, w io.Writer) error {
	special := fs.Bool("special", true, "add BOS/EOS as the file says")
	parseSpecial := fs.Bool("parse-special", false, "parse special-token text into ids")
	a, err := parse(fs, args, 2, false)
	if err != nil {
		return err
	}
	m, err := openModel(a[0], true)
	if err != nil {
		return err
	}
	defer m.Close()
	ids, err := m.Tokenize(a[1], *special, *parseSpecial)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, joinIDs(ids))
	return nil
}

func cmdDetokenize(fs *flag.FlagSet, args []string, w io.Writer) error {
	a, err := parse(fs, args, 2, true)
	if err != nil {
		return err
	}
	m, err := openModel(a[0], true)
	if err != nil {
		return err
	}
	defer m.Close()
	ids := make([]int32, 0, len(a)-1)
	for _, s := range a[1:] {
		v, err := strconv.ParseInt(s, 10, 32)
		if err != nil {
			return fmt.Errorf("token id %q: %w", s, err)
		}
		ids = append(ids, int32(v))
	}
	text, err := m.Detokenize(ids, false, true)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, text)
	return nil
}

func newContext(path string, nctx, threads int) (*ref.Model, *ref.Context, error) {
	m, err := openModel(path, false)
	if err != nil {
		return nil, nil, err
	}
	c, err := m.NewContext(ref.ContextConfig{NCtx: nctx, Threads: threads})
	if err != nil {
		m.Close()
		return nil, nil, err
	}
	return m, c, nil
}

func cmdLogits(fs *flag.FlagSet, args []string, w io.Writer) error {
	nctx := fs.Int("ctx", 512, "context length")
	top := fs.Int("top", 3, "logits to print per position")
	out := fs.String("o", "", "write raw float32 [positions][n_vocab] to this file")
	a, err := parse(fs, args, 2, false)
	if err != nil {
		return err
	}
	m, c, err := newContext(a[0], *nctx, 0)
	if err != nil {
		return err
	}
	defer m.Close()
	defer c.Close()
	ids, err := m.Tokenize(a[1], true, false)
	if err != nil {
		return err
	}
	logits, err := c.Logits(ids)
	if err != nil {
		return err
	}
	if *out != "" {
		var all []float32
		for _, row := range logits {
			all = append(all, row...)
		}
		return writeF32(*out, all)
	}
	for pos, row := range logits {
		idx := make([]int, len(row))
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(i, j int) bool { return row[idx[i]] > row[idx[j]] })
		fmt.Fprintf(w, "%d\t%d", pos, ids[pos])
		for _, i := range idx[:min(*top, len(idx))] {
			fmt.Fprintf(w, "\t%d:%.6g", i, row[i])
		}
		fmt.Fprintln(w)
	}
	return nil
}

func cmdGreedy(fs *flag.FlagSet, args []string, w io.Writer) error {
	nctx := fs.Int("ctx", 512, "context length")
	n := fs.Int("n", 60, "tokens to generate")
	ignoreEOG := fs.Bool("ignore-eog", false, "keep going past end-of-generation tokens")
	a, err := parse(fs, args, 2, false)
	if err != nil {
		return err
	}
	m, c, err := newContext(a[0], *nctx, 0)
	if err != nil {
		return err
	}
	defer m.Close()
	defer c.Close()
	prompt, err := m.Tokenize(a[1], true, false)
	if err != nil {
		return err
	}
	gen, err := c.Greedy(prompt, *n, *ignoreEOG)
	if err != nil {
		return err
	}
	text, err := m.Detokenize(append(prompt, gen...), true, false)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, joinIDs(gen))
	fmt.Fprintln(w, text)
	return nil
}

func cmdBench(fs *flag.FlagSet, args []string, w io.Writer) error {
	nctx := fs.Int("ctx", 512, "context length")
	p := fs.Int("p", 128, "prefill tokens")
	g := fs.Int("g", 32, "decode tokens")
	threads := fs.String("t", "1,2", "comma-separated thread counts")
	sleep := fs.Bool("sleep", false, "idle ggml threads sleep instead of busy-waiting (for loaded machines)")
	a, err := parse(fs, args, 1, false)
	if err != nil {
		return err
	}
	m, err := openModel(a[0], false)
	if err != nil {
		return err
	}
	defer m.Close()
	fmt.Fprintf(w, "%s\nthreads\tprefill %d tok/s\tdecode %d tok/s\n", m.Desc(), *p, *g)
	for _, s := range strings.Split(*threads, ",") {
		t, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || t <= 0 {
			return fmt.Errorf("thread count %q: %w", s, errUsage)
		}
		c, err := m.NewContext(ref.ContextConfig{NCtx: *nctx, Threads: t, SleepIdle: *sleep})
		if err != nil {
			return err
		}
		tm, err := c.Bench(*p, *g)
		c.Close()
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "%d\t%.1f\t%.1f\n", t, tm.PrefillTokPerSec(), tm.DecodeTokPerSec())
	}
	return nil
}

func joinIDs(ids []int32) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Itoa(int(id))
	}
	return strings.Join(s, " ")
}
