package guest_test

import (
	"os"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/realizar-host/realizar-host/abi"
)

// TestAssemblyScriptConstants checks the AssemblyScript SDK's constants and
// host imports against package abi. (Its policies run through the real
// host in plugins/.)
func TestAssemblyScriptConstants(t *testing.T) {
	src, err := os.ReadFile("assemblyscript/realizar.ts")
	require.NoError(t, err)
	defs := map[string]int64{}
	for _, m := range regexp.MustCompile(`(?m)^export const ([A-Z0-9_]+): i32 = (-?[0-9]+);$`).FindAllStringSubmatch(string(src), -1) {
		v, err := strconv.ParseInt(m[2], 10, 64)
		require.NoError(t, err, m[0])
		defs[m[1]] = v
	}
	for name, want := range map[string]int64{
		"ABI_VERSION": abi.Version, "MAX_TOP_N": abi.MaxTopN, "MAX_STOP_N": abi.MaxStopN,
		"ERR_FAILED": int64(abi.ErrFailed), "ERR_CONFIG": int64(abi.ErrConfig), "ERR_VOCAB": int64(abi.ErrVocab), "ERR_STATE": int64(abi.ErrState),
		"STOP_CONTINUE": int64(abi.StopContinue), "STOP_KEEP": int64(abi.StopKeep), "STOP_TRIM": int64(abi.StopTrim),
		"LOG_DEBUG": int64(abi.LogDebug), "LOG_INFO": int64(abi.LogInfo), "LOG_WARN": int64(abi.LogWarn), "LOG_ERROR": int64(abi.LogError),
		"ERR_FEATURE": int64(abi.ErrFeature), "ABI_VERSION2": abi.Version2,
		"FEATURE_MASK": int64(abi.FeatureMask), "FEATURE_TOKEN_ATTRS": int64(abi.FeatureTokenAttrs), "FEATURE_ACCEPTED": int64(abi.FeatureAccepted),
		"OUTPUT_EDITS": int64(abi.OutputEdits), "OUTPUT_MASK": int64(abi.OutputMask),
		"ATTR_EOG": int64(abi.AttrEOG), "ATTR_CONTROL": int64(abi.AttrControl), "ATTR_BYTE": int64(abi.AttrByte),
	} {
		got, ok := defs[name]
		if assert.True(t, ok, "realizar.ts does not define %s", name) {
			assert.Equal(t, want, got, name)
		}
	}
	for _, name := range []string{abi.ImportConfigGet, abi.ImportVocabSize, abi.ImportVocabPiece,
		abi.ImportPromptGet, abi.ImportLog, abi.ImportClockNs, abi.ImportTokenAttrs, abi.ImportAcceptedGet} {
		assert.Contains(t, string(src), `@external("`+abi.ImportModule+`", "`+name+`")`)
	}
}
