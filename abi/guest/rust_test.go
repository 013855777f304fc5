package guest_test

import (
	"encoding/hex"
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
	"github.com/realizar-host/realizar-host/internal/testenv"
)

// rustc is Debian's compiler, called by path as plugins/build.sh does
// (scripts/guests-install.sh rust installs it).
const rustc = "/usr/bin/rustc"

// rustVectors builds the Rust SDK's native vector driver. Like the C SDK's,
// the arithmetic is plain binary64 (rustc never fuses), the same natively
// and on wasm32; the wasm32 builds run through the real host in plugins/.
func rustVectors(t *testing.T) string {
	t.Helper()
	testenv.Tool(t, rustc, "the Rust SDK's vector check needs rustc: scripts/guests-install.sh rust")
	dir := t.TempDir()
	lib := filepath.Join(dir, "librealizar.rlib")
	bin := filepath.Join(dir, "vectors")
	for _, args := range [][]string{
		{"--crate-type", "rlib", "--crate-name", "realizar", "-o", lib, "rust/realizar.rs"},
		{"--crate-type", "bin", "--extern", "realizar=" + lib, "-o", bin, "rust/testdata/vectors_main.rs"},
	} {
		out, err := exec.Command(rustc, append([]string{"--edition", "2021", "-C", "opt-level=2", "-D", "warnings"}, args...)...).CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	return bin
}

// TestRustSDK builds the Rust SDK's driver once and runs its checks.
func TestRustSDK(t *testing.T) {
	bin := rustVectors(t)
	t.Run("vectors", func(t *testing.T) { rustDeterminism(t, bin) })
	t.Run("parse_f64", func(t *testing.T) { rustParseFloat(t, bin) })
	t.Run("object_members", func(t *testing.T) { rustObjectKeys(t, bin) })
}

// rustDeterminism runs the committed determinism vectors through the Rust SDK.
func rustDeterminism(t *testing.T, bin string) {
	cmds, want := vectorCommands(loadVectors(t))
	got := runC(t, bin, cmds)
	for i := range cmds {
		assert.Equal(t, want[i], got[i], cmds[i])
	}
}

// rustParseFloat: parse_f64 gives strconv.ParseFloat's value for every
// JSON number, and refuses what is not one (Rust's own parser takes "inf").
func rustParseFloat(t *testing.T, bin string) {
	accept := []string{"0", "-0", "1", "0.8", "0.95", "0.05", "1.0", "40", "-100", "1e-3", "2.5E+2", "1.75", "0.1",
		"9007199254740993", "1e23", "1e-30", "12345678901234567890", "0.30000000000000004", "5e-324", "1.7976931348623157e308"}
	refuse := []string{"inf", "-inf", "NaN", "infinity", ".5", "+1", "-", "abc", "1e400", "0x10", "1_0"}
	var cmds []string
	for _, s := range append(append([]string{}, accept...), refuse...) {
		cmds = append(cmds, "parse "+s)
	}
	got := runC(t, bin, cmds)
	for i, s := range accept {
		want, err := strconv.ParseFloat(s, 64)
		require.NoError(t, err, s)
		assert.Equal(t, fmt.Sprintf("0x%016x", math.Float64bits(want)), got[i], s)
	}
	for i, s := range refuse {
		assert.Equal(t, "err", got[len(accept)+i], s)
	}
}

// rustObjectKeys: object_members finds the keys ObjectKeys finds in
// every valid object whose keys have no escapes (Rust gives a key as
// written; the host has checked the JSON, so invalid input never reaches it).
func rustObjectKeys(t *testing.T, bin string) {
	var cmds, want, names []string
	for _, tt := range objectKeysInputs {
		if !tt.ok || strings.Contains(tt.in, `\`) {
			continue
		}
		cmds = append(cmds, "keys "+hex.EncodeToString([]byte(tt.in)))
		w := strconv.Itoa(len(tt.want))
		for _, k := range tt.want {
			w += " " + hex.EncodeToString([]byte(k))
		}
		want, names = append(want, w), append(names, tt.in)
	}
	require.NotEmpty(t, cmds)
	got := runC(t, bin, cmds)
	for i := range cmds {
		assert.Equal(t, want[i], got[i], names[i])
	}
}

// TestRustConstants checks the SDK's constants against package abi.
func TestRustConstants(t *testing.T) {
	src, err := os.ReadFile("rust/realizar.rs")
	require.NoError(t, err)
	defs := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^pub const ([A-Z0-9_]+): [a-z0-9]+ = (.+);$`).FindAllStringSubmatch(string(src), -1) {
		defs[m[1]] = strings.ReplaceAll(m[2], "_", "")
	}
	num := func(name string) int64 {
		t.Helper()
		s, ok := defs[name]
		require.True(t, ok, "realizar.rs does not define %s", name)
		v, err := strconv.ParseInt(s, 0, 64)
		if err != nil {
			u, uerr := strconv.ParseUint(s, 0, 64)
			require.NoError(t, uerr, "%s = %s", name, s)
			v = int64(u)
		}
		return v
	}
	assert.EqualValues(t, abi.Version, num("ABI_VERSION"))
	assert.EqualValues(t, abi.MaxTopN, num("MAX_TOP_N"))
	assert.EqualValues(t, abi.MaxStopN, num("MAX_STOP_N"))
	assert.EqualValues(t, abi.ErrFailed, num("ERR_FAILED"))
	assert.EqualValues(t, abi.ErrConfig, num("ERR_CONFIG"))
	assert.EqualValues(t, abi.ErrVocab, num("ERR_VOCAB"))
	assert.EqualValues(t, abi.ErrState, num("ERR_STATE"))
	assert.EqualValues(t, abi.ErrFeature, num("ERR_FEATURE"))
	assert.EqualValues(t, abi.Version2, num("ABI_VERSION2"))
	assert.EqualValues(t, abi.FeatureMask, num("FEATURE_MASK"))
	assert.EqualValues(t, abi.FeatureTokenAttrs, num("FEATURE_TOKEN_ATTRS"))
	assert.EqualValues(t, abi.FeatureAccepted, num("FEATURE_ACCEPTED"))
	assert.EqualValues(t, abi.OutputEdits, num("OUTPUT_EDITS"))
	assert.EqualValues(t, abi.OutputMask, num("OUTPUT_MASK"))
	assert.EqualValues(t, abi.AttrEOG, num("ATTR_EOG"))
	assert.EqualValues(t, abi.AttrControl, num("ATTR_CONTROL"))
	assert.EqualValues(t, abi.AttrByte, num("ATTR_BYTE"))
	assert.EqualValues(t, abi.StopContinue, num("STOP_CONTINUE"))
	assert.EqualValues(t, abi.StopKeep, num("STOP_KEEP"))
	assert.EqualValues(t, abi.StopTrim, num("STOP_TRIM"))
	assert.EqualValues(t, abi.LogDebug, num("LOG_DEBUG"))
	assert.EqualValues(t, abi.LogError, num("LOG_ERROR"))
	assert.EqualValues(t, abi.RandomGetSalt, uint64(num("RANDOM_GET_SALT")))
	assert.Equal(t, fmt.Sprint(abi.ExpMax), strings.TrimSuffix(defs["EXP_MAX"], ".0"))
	assert.Equal(t, fmt.Sprint(abi.ExpMin), strings.TrimSuffix(defs["EXP_MIN"], ".0"))
	// The host imports: one extern block of module "realizar", named as abi's.
	assert.Contains(t, string(src), `#[link(wasm_import_module = "`+abi.ImportModule+`")]`)
	for _, name := range []string{abi.ImportConfigGet, abi.ImportVocabSize, abi.ImportVocabPiece,
		abi.ImportPromptGet, abi.ImportLog, abi.ImportClockNs, abi.ImportTokenAttrs, abi.ImportAcceptedGet} {
		assert.Contains(t, string(src), "pub fn "+name+"(")
	}
	// The marker macros spell abi's marker names.
	for _, k := range []abi.Kind{abi.KindSampler, abi.KindProcessor, abi.KindStop} {
		assert.Contains(t, string(src), "pub extern \"C\" fn "+k.Marker()+"()")
		assert.Contains(t, string(src), "pub extern \"C\" fn "+k.MarkerV(abi.Version2)+"()")
	}
}
