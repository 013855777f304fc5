package arch_test

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/gguf"
	"github.com/realizar-host/realizar-host/internal/arch"
	"github.com/realizar-host/realizar-host/internal/fixture"
	"github.com/realizar-host/realizar-host/internal/gguftest"
	"github.com/realizar-host/realizar-host/internal/quantize"
	"github.com/realizar-host/realizar-host/model"
)

// smallest is a's preset with the fewest weights (Embd·FF·Layers), the
// one these tests generate.
func smallest(a arch.Arch) arch.Fixture {
	return slices.MinFunc(a.Presets, func(x, y arch.Fixture) int {
		return x.Embd*x.FF*x.Layers - y.Embd*y.FF*y.Layers
	})
}

// TestRegistered checks that every registered architecture has all its
// parts, and that each part's consumer accepts them: a preset that
// validates and generates, a config package model decodes with the
// registered features and tensors it loads, llama.cpp's type rules in
// package quantize, a vocabulary name, and a unique preset name. (cuda's
// TestCheckArchRegistry checks GPU, cmd's TestInspectRegistered inspect.)
func TestRegistered(t *testing.T) {
	names := arch.Names()
	require.NotEmpty(t, names)
	seen := map[string]string{}
	vocab := gguftest.Vocab(t, 512)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			a, ok := arch.Lookup(name)
			require.True(t, ok)
			assert.Equal(t, name, a.Name)
			assert.NotEmpty(t, a.Family)
			require.NotEmpty(t, a.Presets, "every architecture registers a fixture preset")
			for _, p := range a.Presets {
				assert.Equal(t, name, p.Arch)
				require.NoError(t, p.Validate())
				other, dup := seen[p.PresetName()]
				assert.False(t, dup, "preset %q of %s is also %s's", p.PresetName(), name, other)
				seen[p.PresetName()] = name
				got, ok := fixture.Preset(p.PresetName())
				require.True(t, ok)
				assert.Equal(t, p, got)
			}
			if a.Vocab != "" {
				assert.Regexp(t, `^ggml-vocab-[a-z0-9-]+\.gguf$`, a.Vocab)
			}
			assert.Equal(t, a.Vocab, fixture.VocabFile(name))

			var buf bytes.Buffer
			require.NoError(t, fixture.Generate(&buf, smallest(a), vocab))
			f, err := gguf.NewFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
			require.NoError(t, err)

			c, err := model.ReadConfig(f)
			require.NoError(t, err, "model decodes the preset")
			assert.Equal(t, name, c.Arch)
			assert.Equal(t, a.QKNorm, c.QKNorm)
			assert.Equal(t, a.MoE, c.MoE())
			assert.Equal(t, a.Rope == arch.RopeNeox, c.RopeType == model.RopeNeox)
			assert.Equal(t, a.Block == arch.BlockPhi3, c.FusedFFN)
			assert.Equal(t, a.Block == arch.BlockGemma3, c.GELU)
			assert.Equal(t, a.Sliding == arch.SlidingLayers, c.SlidingLayers != nil)
			assert.Contains(t, model.Architectures(), name)
			m, err := model.Load(f, model.Options{Threads: 1})
			require.NoError(t, err, "model loads the preset's tensors")
			require.NoError(t, m.Close())

			plan, err := quantize.Plan(f, quantize.Q4_KM)
			require.NoError(t, err, "quantize has type rules for it")
			assert.NotEmpty(t, plan)
		})
	}
}

func TestLookupUnknown(t *testing.T) {
	_, ok := arch.Lookup("no-such-arch")
	assert.False(t, ok)
	err := fixture.Config{Arch: "no-such-arch"}.Validate()
	require.ErrorIs(t, err, fixture.ErrConfig)
	for _, n := range arch.Names() {
		assert.Contains(t, err.Error(), n)
	}
}

func TestRegisterRejects(t *testing.T) {
	good := arch.Fixture{Name: "fixture-x", Embd: 8, FF: 8, Layers: 1, Heads: 1, HeadsKV: 1, Context: 8,
		RopeBase: 1, RMSEps: 1, Type: gguf.TypeF32}
	for _, tc := range []struct {
		name string
		a    arch.Arch
	}{
		{"no name", arch.Arch{Family: "X", Models: "X"}},
		{"no family", arch.Arch{Name: "x", Models: "X"}},
		{"no models", arch.Arch{Name: "x", Family: "X"}},
		{"twice", arch.Arch{Name: arch.Names()[0], Family: "X", Models: "X"}},
		{"preset of another arch", arch.Arch{Name: "x", Family: "X", Models: "X", Presets: []arch.Fixture{{Name: "fixture-x", Arch: "y"}}}},
		{"preset name", arch.Arch{Name: "x", Family: "X", Models: "X", Presets: []arch.Fixture{{Name: "x"}}}},
		{"invalid preset", arch.Arch{Name: "x", Family: "X", Models: "X", Presets: []arch.Fixture{{Name: "fixture-x"}}}},
		{"experts without MoE", arch.Arch{Name: "x", Family: "X", Models: "X", Presets: []arch.Fixture{func() arch.Fixture {
			p := good
			p.Experts, p.ExpertsUsed, p.ExpertFF = 2, 1, 8
			return p
		}()}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				r := recover()
				require.NotNil(t, r, "Register accepted a malformed registration")
				err, ok := r.(error)
				require.True(t, ok)
				assert.ErrorIs(t, err, arch.ErrRegistration)
			}()
			arch.Register(tc.a)
		})
	}
	_, ok := arch.Lookup("x")
	assert.False(t, ok, "a refused registration is not registered")
}

func TestList(t *testing.T) {
	assert.Equal(t, "", arch.List(nil, "and"))
	assert.Equal(t, "a", arch.List([]string{"a"}, "and"))
	assert.Equal(t, "a or b", arch.List([]string{"a", "b"}, "or"))
	assert.Equal(t, "a, b and c", arch.List([]string{"a", "b", "c"}, "and"))
}

// otherNamespaces are the packages whose string literals may equal an
// architecture's name because they name something else: tokenizer models
// and pre-tokenizers (tokenizer.ggml.model "llama", tokenizer.ggml.pre
// "qwen2"), which gguftest writes too.
var otherNamespaces = []string{"tokenizer", filepath.Join("internal", "gguftest")}

// TestNoListsOutside checks that nothing outside this package lists
// architectures: no non-test Go file of the module (tools/llamaref
// included) has a string literal that is a registered architecture's name
// or names two of them, so a new architecture is this package's file plus
// the code of any new block, never another list.
func TestNoListsOutside(t *testing.T) {
	root := filepath.Join("..", "..")
	names := arch.Names()
	word := regexp.MustCompile(`[a-z0-9]+`)
	fset := token.NewFileSet()
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if rel == filepath.Join("internal", "arch") || (strings.HasPrefix(d.Name(), ".") && rel != ".") || d.Name() == "testdata" || d.Name() == "node_modules" {
				return filepath.SkipDir
			}
			for _, ns := range otherNamespaces {
				if rel == ns {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		file, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		checked++
		ast.Inspect(file, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			var found []string
			for _, w := range word.FindAllString(s, -1) {
				if slices.Contains(names, w) && !slices.Contains(found, w) {
					found = append(found, w)
				}
			}
			if slices.Contains(names, s) || len(found) >= 2 {
				t.Errorf("%s: %s names architectures (%s): ask package arch", fset.Position(lit.Pos()), lit.Value, strings.Join(found, ", "))
			}
			return true
		})
		return nil
	})
	require.NoError(t, err)
	assert.Greater(t, checked, 100, "the walk found the module's files")
}
