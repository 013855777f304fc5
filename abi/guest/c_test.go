package guest_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/abi"
	"github.com/realizar-host/realizar-host/abi/guest"
	"github.com/realizar-host/realizar-host/internal/testenv"
)

// TestCHeaderConstants parses realizar.h and checks every constant it
// defines against package abi.
func TestCHeaderConstants(t *testing.T) {
	src, err := os.ReadFile("c/realizar.h")
	require.NoError(t, err)
	defs := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^#define (REALIZAR_[A-Z0-9_]+) (.+?)\s*(?:/\*.*)?$`).FindAllStringSubmatch(string(src), -1) {
		defs[m[1]] = strings.Trim(m[2], "()")
	}
	num := func(name string) int64 {
		t.Helper()
		s, ok := defs[name]
		require.True(t, ok, "realizar.h does not define %s", name)
		v, err := strconv.ParseInt(strings.TrimSuffix(s, "ULL"), 0, 64)
		if err != nil {
			u, uerr := strconv.ParseUint(strings.TrimSuffix(s, "ULL"), 0, 64)
			require.NoError(t, uerr, "%s = %s", name, s)
			v = int64(u)
		}
		return v
	}
	flt := func(name string) float64 {
		t.Helper()
		v, err := strconv.ParseFloat(defs[name], 64)
		require.NoError(t, err, name)
		return v
	}
	assert.EqualValues(t, abi.Version, num("REALIZAR_ABI_VERSION"))
	assert.EqualValues(t, abi.MaxTopN, num("REALIZAR_MAX_TOP_N"))
	assert.EqualValues(t, abi.MaxDraft, num("REALIZAR_MAX_DRAFT"))
	assert.EqualValues(t, abi.MaxStopN, num("REALIZAR_MAX_STOP_N"))
	assert.EqualValues(t, abi.ErrFailed, num("REALIZAR_ERR_FAILED"))
	assert.EqualValues(t, abi.ErrConfig, num("REALIZAR_ERR_CONFIG"))
	assert.EqualValues(t, abi.ErrVocab, num("REALIZAR_ERR_VOCAB"))
	assert.EqualValues(t, abi.ErrState, num("REALIZAR_ERR_STATE"))
	assert.EqualValues(t, abi.ErrFeature, num("REALIZAR_ERR_FEATURE"))
	assert.EqualValues(t, abi.Version2, num("REALIZAR_ABI_VERSION2"))
	assert.EqualValues(t, abi.FeatureMask, num("REALIZAR_FEATURE_MASK"))
	assert.EqualValues(t, abi.FeatureTokenAttrs, num("REALIZAR_FEATURE_TOKEN_ATTRS"))
	assert.EqualValues(t, abi.FeatureAccepted, num("REALIZAR_FEATURE_ACCEPTED"))
	assert.EqualValues(t, abi.OutputEdits, num("REALIZAR_OUTPUT_EDITS"))
	assert.EqualValues(t, abi.OutputMask, num("REALIZAR_OUTPUT_MASK"))
	assert.EqualValues(t, abi.AttrEOG, num("REALIZAR_ATTR_EOG"))
	assert.EqualValues(t, abi.AttrControl, num("REALIZAR_ATTR_CONTROL"))
	assert.EqualValues(t, abi.AttrByte, num("REALIZAR_ATTR_BYTE"))
	assert.EqualValues(t, abi.StopContinue, num("REALIZAR_STOP_CONTINUE"))
	assert.EqualValues(t, abi.StopKeep, num("REALIZAR_STOP_KEEP"))
	assert.EqualValues(t, abi.StopTrim, num("REALIZAR_STOP_TRIM"))
	assert.EqualValues(t, abi.LogDebug, num("REALIZAR_LOG_DEBUG"))
	assert.EqualValues(t, abi.LogInfo, num("REALIZAR_LOG_INFO"))
	assert.EqualValues(t, abi.LogWarn, num("REALIZAR_LOG_WARN"))
	assert.EqualValues(t, abi.LogError, num("REALIZAR_LOG_ERROR"))
	assert.EqualValues(t, abi.RandomGetSalt, uint64(num("REALIZAR_RANDOM_GET_SALT")))
	assert.Equal(t, abi.ExpMax, flt("REALIZAR_EXP_MAX"))
	assert.Equal(t, abi.ExpMin, flt("REALIZAR_EXP_MIN"))
	// The marker macro spells abi's marker names.
	assert.Contains(t, string(src), `"`+strings.TrimSuffix(abi.KindSampler.Marker(), "sampler")+`" #kind`)
	assert.Contains(t, string(src), `"`+strings.TrimSuffix(abi.KindSampler.MarkerV(abi.Version2), "sampler")+`" #kind`)
	for _, name := range []string{abi.ImportConfigGet, abi.ImportVocabSize, abi.ImportVocabPiece,
		abi.ImportPromptGet, abi.ImportLog, abi.ImportClockNs, abi.ImportTokenAttrs, abi.ImportAcceptedGet} {
		assert.Contains(t, string(src), `REALIZAR_IMPORT("`+name+`")`)
	}
}

// cVectors builds the C SDK's native vector driver with gcc. The contract
// allows a native check: realizar.c's arithmetic is plain C99 binary64
// (-ffp-contract=off, no -ffast-math), the same on x86-64 and wasm32. The
// wasm32 builds are checked against the Go guests through the real host in
// plugins/.
func cVectors(t *testing.T) string {
	t.Helper()
	gcc := testenv.Tool(t, "gcc", "the C SDK's vector check needs gcc (apt install gcc)")
	bin := filepath.Join(t.TempDir(), "vectors")
	out, err := exec.Command(gcc, "-std=c11", "-O2", "-ffp-contract=off", "-fno-fast-math", "-Wall", "-Werror",
		"-fno-builtin", "-o", bin, "c/testdata/vectors_main.c", "c/realizar.c").CombinedOutput()
	require.NoError(t, err, "%s", out)
	return bin
}

// runC sends commands to a vector driver (the C SDK's, or the Rust SDK's,
// which speaks the same protocol) and returns its answers, one per line.
func runC(t *testing.T, bin string, cmds []string) []string {
	t.Helper()
	cmd := exec.Command(bin)
	cmd.Stdin = strings.NewReader(strings.Join(cmds, "\n") + "\n")
	out, err := cmd.Output()
	require.NoError(t, err)
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		lines = append(lines, strings.TrimSpace(sc.Text()))
	}
	require.Len(t, lines, len(cmds))
	return lines
}

type vectors struct {
	RNG []struct {
		Seed    string   `json:"seed"`
		Next    []string `json:"next"`
		Uniform []string `json:"uniform"`
	} `json:"rng"`
	Exp []struct {
		X, Y string
	} `json:"exp"`
	Order []struct {
		Ids    []int32  `json:"ids"`
		Logits []string `json:"logits"`
		Sorted []int32  `json:"sorted"`
	} `json:"order"`
	Softmax []struct {
		Logits []string `json:"logits"`
		Temp   string   `json:"temp"`
		Probs  []string `json:"probs"`
		Sum    string   `json:"sum"`
		Seed   string   `json:"seed"`
		Draws  []int    `json:"draws"`
	} `json:"softmax"`
}

func loadVectors(t *testing.T) vectors {
	t.Helper()
	raw, err := os.ReadFile("../testdata/determinism.json")
	require.NoError(t, err)
	var v vectors
	require.NoError(t, json.Unmarshal(raw, &v))
	require.NotEmpty(t, v.RNG)
	return v
}

func hexU(t *testing.T, s string) uint64 {
	t.Helper()
	v, err := strconv.ParseUint(s, 0, 64)
	require.NoError(t, err)
	return v
}

// TestCVectors runs the committed determinism vectors through the C SDK.
func TestCVectors(t *testing.T) {
	bin := cVectors(t)
	cmds, want := vectorCommands(loadVectors(t))
	got := runC(t, bin, cmds)
	for i := range cmds {
		assert.Equal(t, want[i], got[i], cmds[i])
	}
}

// vectorCommands turns the determinism vectors into driver commands
// (rng, exp, sort, softmax) and the answers they must get.
func vectorCommands(v vectors) (cmds, want []string) {
	for _, r := range v.RNG {
		cmds = append(cmds, "rng "+r.Seed)
		want = append(want, strings.Join(append(append([]string{}, r.Next...), r.Uniform...), " "))
	}
	for _, e := range v.Exp {
		cmds = append(cmds, "exp "+e.X)
		want = append(want, e.Y)
	}
	for _, o := range v.Order {
		c := fmt.Sprintf("sort %d", len(o.Ids))
		for _, id := range o.Ids {
			c += fmt.Sprintf(" %d", id)
		}
		c += " " + strings.Join(o.Logits, " ")
		cmds = append(cmds, c)
		var w []string
		for _, id := range o.Sorted {
			w = append(w, strconv.Itoa(int(id)))
		}
		want = append(want, strings.Join(w, " "))
	}
	for _, s := range v.Softmax {
		cmds = append(cmds, fmt.Sprintf("softmax %d %s %s %s", len(s.Logits), s.Temp, s.Seed, strings.Join(s.Logits, " ")))
		w := append(append([]string{}, s.Probs...), s.Sum)
		for _, d := range s.Draws {
			w = append(w, strconv.Itoa(d))
		}
		want = append(want, strings.Join(w, " "))
	}
	return cmds, want
}

// TestGoVectors runs the same vectors through what a Go guest calls.
func TestGoVectors(t *testing.T) {
	v := loadVectors(t)
	for _, r := range v.RNG {
		g := abi.NewRNG(hexU(t, r.Seed))
		for _, w := range r.Next {
			assert.Equal(t, hexU(t, w), g.Next())
		}
		for _, w := range r.Uniform {
			assert.Equal(t, hexU(t, w), math.Float64bits(g.Uniform()))
		}
	}
	for _, e := range v.Exp {
		assert.Equal(t, hexU(t, e.Y), math.Float64bits(abi.Exp(math.Float64frombits(hexU(t, e.X)))), e.X)
	}
	for _, s := range v.Softmax {
		logits := make([]float32, len(s.Logits))
		for i, l := range s.Logits {
			logits[i] = math.Float32frombits(uint32(hexU(t, l)))
		}
		probs := make([]float64, len(logits))
		sum := abi.Softmax(probs, logits, math.Float64frombits(hexU(t, s.Temp)))
		for i, p := range s.Probs {
			assert.Equal(t, hexU(t, p), math.Float64bits(probs[i]))
		}
		assert.Equal(t, hexU(t, s.Sum), math.Float64bits(sum))
		r := abi.NewRNG(hexU(t, s.Seed))
		for _, d := range s.Draws {
			assert.Equal(t, d, abi.Draw(probs, sum, r.Uniform()))
		}
	}
}

// logInputs are edge cases and random points over the whole range.
func logInputs() []float64 {
	xs := []float64{0, math.Copysign(0, -1), -1, math.NaN(), math.Inf(1), math.Inf(-1), 1, 2, 0.5,
		math.E, 10, 1e-300, 5e-324, 2.2250738585072014e-308, 2.225073858507201e-308, math.MaxFloat64,
		0x1.6a09e667f3bcdp+0, 0x1.6a09e667f3bcep+0, 0x1.6a09e667f3bccp-1, 1 - 0x1p-53, 1 + 0x1p-52, 0.05, 0.95, 1e-10}
	r := abi.NewRNG(11)
	for range 2000 {
		xs = append(xs, math.Float64frombits(r.Next()&^(1<<63)))
		xs = append(xs, r.Uniform())
	}
	return xs
}

// TestLog checks Log against math.Log (within 1 ulp) and the C SDK's
// realizar_log (bit for bit).
func TestLog(t *testing.T) {
	xs := logInputs()
	for _, x := range xs {
		got, want := guest.Log(x), math.Log(x)
		if x > 0 && x < 0x1p-1022 {
			// Go's amd64 math.Log does not scale subnormals; compare with
			// the scaled value instead.
			want = math.Log(x*0x1p54) - 54*math.Ln2
			assert.InEpsilon(t, want, got, 1e-15, "Log(%v)", x)
			continue
		}
		if math.IsNaN(want) {
			assert.True(t, math.IsNaN(got), "Log(%v)", x)
			continue
		}
		if math.IsInf(want, 0) || want == 0 {
			assert.Equal(t, want, got, "Log(%v)", x)
			continue
		}
		ulp := math.Abs(math.Nextafter(want, math.Inf(1)) - want)
		assert.LessOrEqual(t, math.Abs(got-want), ulp, "Log(%v) = %v, want %v", x, got, want)
	}
	bin := cVectors(t)
	var cmds []string
	for _, x := range xs {
		cmds = append(cmds, fmt.Sprintf("log 0x%016x", math.Float64bits(x)))
	}
	got := runC(t, bin, cmds)
	for i, x := range xs {
		g := guest.Log(x)
		if math.IsNaN(g) {
			c := math.Float64frombits(hexU(t, got[i]))
			assert.True(t, math.IsNaN(c), "C log(%v)", x)
			continue
		}
		assert.Equal(t, fmt.Sprintf("0x%016x", math.Float64bits(g)), got[i], "log(%v)", x)
	}
}

// TestCParseFloat checks that realizar_parse_f64 gives strconv.ParseFloat's
// value whenever it accepts, and accepts the usual config numbers.
func TestCParseFloat(t *testing.T) {
	bin := cVectors(t)
	texts := []string{"0", "-0", "1", "0.8", "0.95", "0.05", "1.0", "40", "-100", "1e-3", "2.5E+2", "1.75", "5.0",
		"0.1", "123456789012345", "9007199254740993", "1e23", "1e-30", "12345678901234567890", "abc", "1.", ".5", "-", "1e", "0.30000000000000004"}
	accept := map[string]bool{"0": true, "-0": true, "1": true, "0.8": true, "0.95": true, "0.05": true, "1.0": true, "40": true,
		"-100": true, "1e-3": true, "2.5E+2": true, "1.75": true, "5.0": true, "0.1": true, "123456789012345": true, "1.": true, ".5": true}
	var cmds []string
	for _, s := range texts {
		cmds = append(cmds, "parse "+s)
	}
	got := runC(t, bin, cmds)
	for i, s := range texts {
		if !accept[s] {
			if got[i] != "err" { // accepted anyway: then it must be exact
				want, err := strconv.ParseFloat(s, 64)
				require.NoError(t, err, s)
				assert.Equal(t, fmt.Sprintf("0x%016x", math.Float64bits(want)), got[i], s)
			}
			continue
		}
		want, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimPrefix(s, "."), "."), 64)
		if s == ".5" {
			want = 0.5
		}
		assert.Equal(t, fmt.Sprintf("0x%016x", math.Float64bits(want)), got[i], s)
	}
}
