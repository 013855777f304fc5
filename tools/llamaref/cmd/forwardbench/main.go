// Command forwardbench times realizar-host's CPU forward (package model)
// against llama.cpp on the same file and thread counts, and prints decode
// and prefill rates, their ratios, and our prefill/decode ratio.
//
//	forwardbench [-p 128] [-g 64] [-t 1,2] [-cache DIR] [-ftype Q4_K_M] [-sleep] [-ref=false] MODEL.gguf|PRESET...
//
// Each side runs -n times and its best rates are reported: on a shared
// machine the best of a few runs is the least disturbed one. An argument
// naming a fixture preset (m110, tinyllama-1b, tiny, odd) is
// generated with package fixture into the cache folder (default
// <repo>/.cache/bench), then quantized to -ftype by llama.cpp; the files are
// kept for later runs. Both sides prefill P tokens from an empty cache in one
// pass, then decode G tokens one at a time from an empty cache, with the
// same pseudo-random token ids.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/realizar-host/realizar-host/gguf"
	"github.com/realizar-host/realizar-host/internal/fixture"
	"github.com/realizar-host/realizar-host/model"
	"github.com/realizar-host/realizar-host/tools/llamaref/ref"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "forwardbench:", err)
		os.Exit(1)
	}
}

func run(args []string, w io.Writer) error {
	fs := flag.NewFlagSet("forwardbench", flag.ContinueOnError)
	p := fs.Int("p", 128, "prefill tokens")
	g := fs.Int("g", 64, "decode tokens")
	threads := fs.String("t", "1,2", "comma-separated thread counts")
	cache := fs.String("cache", "", "folder for generated fixtures (default <repo>/.cache/bench)")
	ftype := fs.String("ftype", "Q4_K_M", "llama.cpp file type presets are quantized to")
	sleep := fs.Bool("sleep", false, "llama.cpp's idle threads sleep instead of spinning (loaded machines)")
	withRef := fs.Bool("ref", true, "also time llama.cpp (false: ours only, e.g. to read peak RSS)")
	reps := fs.Int("n", 3, "repetitions; the best rate of each side is reported (shared machines)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return errors.New("usage: forwardbench [flags] MODEL.gguf|PRESET...")
	}
	var counts []int
	for _, s := range strings.Split(*threads, ",") {
		t, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || t < 1 {
			return fmt.Errorf("thread count %q", s)
		}
		counts = append(counts, t)
	}
	l, err := ref.OpenDefault()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "model\tthreads\tours decode\tllama.cpp decode\tratio\tours prefill\tllama.cpp prefill\tratio\tours prefill/decode\n")
	for _, arg := range fs.Args() {
		path, err := resolve(l, arg, *cache, *ftype)
		if err != nil {
			return err
		}
		for _, t := range counts {
			var ours, theirs best
			for range max(*reps, 1) {
				tm, err := benchOurs(path, t, *p, *g)
				if err != nil {
					return err
				}
				ours.add(tm)
				if *withRef {
					if tm, err = benchRef(l, path, t, *p, *g, *sleep); err != nil {
						return err
					}
					theirs.add(tm)
				}
			}
			fmt.Fprintf(w, "%s\t%d\t%.2f\t%.2f\t%.2f\t%.1f\t%.1f\t%.2f\t%.1f\n", filepath.Base(path), t,
				ours.DecodeTokPerSec(), theirs.DecodeTokPerSec(), ours.DecodeTokPerSec()/theirs.DecodeTokPerSec(),
				ours.PrefillTokPerSec(), theirs.PrefillTokPerSec(), ours.PrefillTokPerSec()/theirs.PrefillTokPerSec(),
				ours.PrefillTokPerSec()/ours.DecodeTokPerSec())
		}
	}
	return nil
}

// best keeps the fastest prefill and decode over repetitions.
type best struct{ prefill, decode float64 }

func (b *best) add(t ref.Timing) {
	b.prefill = max(b.prefill, t.PrefillTokPerSec())
	b.decode = max(b.decode, t.DecodeTokPerSec())
}

func (b best) PrefillTokPerSec() float64 { return b.prefill }
func (b best) DecodeTokPerSec() float64  { return b.decode }

// resolve returns arg if it is a file, or generates and quantizes the
// fixture preset it names.
func resolve(l *ref.Lib, arg, cache, ftype string) (string, error) {
	if _, err := os.Stat(arg); err == nil {
		return arg, nil
	}
	cfg, ok := fixture.Preset(arg)
	if !ok {
		return "", fmt.Errorf("%s: no such file or fixture preset (presets: %s)", arg, strings.Join(fixture.PresetNames(), ", "))
	}
	if cache == "" {
		root, err := ref.RepoRoot()
		if err != nil {
			return "", err
		}
		cache = filepath.Join(root, ".cache", "bench")
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", err
	}
	src := filepath.Join(cache, cfg.Name+".gguf")
	out := filepath.Join(cache, cfg.Name+"-"+ftype+".gguf")
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	if _, err := os.Stat(src); err != nil {
		if fixture.VocabFile(cfg.Arch) != "" {
			return "", fmt.Errorf("%s: only presets with the embedded llama vocabulary are generated here", arg)
		}
		vocab, err := fixture.LlamaVocab()
		if err != nil {
			return "", err
		}
		err = fixture.GenerateFile(src, cfg, vocab)
		vocab.Close()
		if err != nil {
			return "", err
		}
	}
	return out, l.Quantize(src, out, ftype)
}

// benchToks is a fixed pseudo-random sequence over the vocabulary.
func benchToks(n, vocab int) []int32 {
	out := make([]int32, n)
	x := uint32(0x2545f491)
	for i := range out {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		out[i] = int32(x % uint32(vocab))
	}
	return out
}

// benchOurs times model the way ref.Context.Bench times llama.cpp.
func benchOurs(path string, threads, prefill, decode int) (ref.Timing, error) {
	t := ref.Timing{Threads: threads, PrefillTokens: prefill, DecodeTokens: decode}
	f, err := gguf.Open(path)
	if err != nil {
		return t, err
	}
	defer f.Close()
	m, err := model.Load(f, model.Options{Threads: threads, BatchSize: max(prefill, 1)})
	if err != nil {
		return t, err
	}
	defer m.Close()
	toks := benchToks(max(prefill, decode, 1), m.Config().Vocab)
	s := m.NewSequence()
	if _, err := s.Reserve(max(prefill, decode, 1)); err != nil {
		return t, err
	}
	if _, err := s.Step(toks[0], 0); err != nil { // warm-up
		return t, err
	}
	if prefill > 0 {
		s.Reset()
		start := time.Now()
		if _, err := s.Prefill(toks[:prefill], 0); err != nil {
			return t, err
		}
		t.PrefillTime = time.Since(start)
	}
	s.Reset()
	start := time.Now()
	for i := range decode {
		if _, err := s.Step(toks[i], i); err != nil {
			return t, err
		}
	}
	t.DecodeTime = time.Since(start)
	return t, nil
}

func benchRef(l *ref.Lib, path string, threads, prefill, decode int, sleep bool) (ref.Timing, error) {
	m, err := l.LoadModel(path)
	if err != nil {
		return ref.Timing{}, err
	}
	defer m.Close()
	c, err := m.NewContext(ref.ContextConfig{NCtx: max(prefill, decode, 1), Threads: threads, SleepIdle: sleep})
	if err != nil {
		return ref.Timing{}, err
	}
	defer c.Close()
	return c.Bench(prefill, decode)
}
