package host

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tetratelabs/wazero"

	"github.com/realizar-host/realizar-host/abi"
)

// BenchmarkDeadlineChecks measures what wazero's per-iteration deadline
// checks (WithCloseOnContextDone, ABI §6) cost a guest loop over the whole
// vocabulary: testdata/greedy.wasm's argmax over 151,936 logits, one
// iteration per token, compiled with and without the checks. It is the
// other design issue 16 names for a fast mask (trusted processors without
// checks, under an outer deadline), against the mask kept in guest memory
// and returned by pointer (BenchmarkMaskStage), which needs no such loop.
//
//	go test -run '^$' -bench DeadlineChecks ./host
func BenchmarkDeadlineChecks(b *testing.B) {
	const n = 151936
	wasm, err := os.ReadFile("testdata/greedy.wasm")
	require.NoError(b, err)
	for _, tc := range []struct {
		name   string
		checks bool
	}{{"checks", true}, {"no-checks", false}} {
		b.Run("vocab=151936/"+tc.name, func(b *testing.B) {
			st := &instState{vocab: benchVocab(n), log: newLogBuffer(1024), nanotime: func() int64 { return 0 }}
			ctx := context.WithValue(context.Background(), stateKey{}, st)
			rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCloseOnContextDone(tc.checks))
			defer rt.Close(ctx)
			_, err := instantiateHostModule(ctx, rt, abi.ImportModule, realizarFuncs)
			require.NoError(b, err)
			mod, err := rt.InstantiateWithConfig(ctx, wasm, wazero.NewModuleConfig().WithName(""))
			require.NoError(b, err)
			stack := []uint64{n, 8, 0, 0}
			require.NoError(b, mod.ExportedFunction(abi.ExportInit).CallWithStack(ctx, stack))
			addr, _, _, ok := abi.UnpackInit(int64(stack[0]))
			require.True(b, ok)
			logits := make([]float32, n)
			for i := range logits {
				logits[i] = float32(i % 1013)
			}
			region, ok := mod.Memory().Read(addr, 4*n)
			require.True(b, ok)
			putF32s(region, logits)
			sample := mod.ExportedFunction(abi.ExportSample)
			for b.Loop() {
				stack[0], stack[1] = 0, n
				if err := sample.CallWithStack(ctx, stack); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
