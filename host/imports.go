package host

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"

	"github.com/realizar-host/realizar-host/abi"
)

const (
	i32 = api.ValueTypeI32
	i64 = api.ValueTypeI64
)

// hostFunc is one function the host exports to plugins.
type hostFunc struct {
	name            string
	params, results []api.ValueType
	fn              api.GoModuleFunc
}

// realizarFuncs are the functions of module "realizar" (abi.Import*).
var realizarFuncs = []hostFunc{
	{abi.ImportConfigGet, []api.ValueType{i32, i32, i32, i32}, []api.ValueType{i32}, configGet},
	{abi.ImportVocabSize, nil, []api.ValueType{i32}, vocabSize},
	{abi.ImportVocabPiece, []api.ValueType{i32, i32, i32}, []api.ValueType{i32}, vocabPiece},
	{abi.ImportPromptGet, []api.ValueType{i32, i32}, []api.ValueType{i32}, promptGet},
	{abi.ImportLog, []api.ValueType{i32, i32, i32}, nil, logLine},
	{abi.ImportClockNs, nil, []api.ValueType{i64}, clockNs},
	// ABI 2 (checkImports refuses them in a v1 module).
	{abi.ImportTokenAttrs, []api.ValueType{i32, i32, i32}, []api.ValueType{i32}, tokenAttrs},
	{abi.ImportAcceptedGet, []api.ValueType{i32, i32}, []api.ValueType{i32}, acceptedGet},
}

// trap aborts the guest's call: wazero turns a panic in a host function
// into the call's error, and the host then discards the instance.
func trap(format string, args ...any) {
	panic(fmt.Errorf(format, args...))
}

// read returns a view of guest memory [ptr, ptr+n) or traps.
func read(mod api.Module, fn string, ptr, n uint32) []byte {
	b, ok := mod.Memory().Read(ptr, n)
	if !ok {
		trap("realizar.%s: range [%d, +%d) is outside guest memory", fn, ptr, n)
	}
	return b
}

// copyOut copies value into guest memory at buf (at most limit bytes) and
// returns len(value), the true length.
func copyOut(mod api.Module, fn string, value []byte, buf, limit uint32) uint64 {
	n := uint32(len(value))
	if n > limit {
		n = limit
	}
	copy(read(mod, fn, buf, n), value[:n])
	return uint64(uint32(len(value)))
}

func configGet(ctx context.Context, mod api.Module, stack []uint64) {
	st := stateOf(ctx)
	key := read(mod, abi.ImportConfigGet, uint32(stack[0]), uint32(stack[1]))
	v, ok := st.config[string(key)]
	if !ok {
		stack[0] = uint64(0xffffffff) // -1
		return
	}
	stack[0] = copyOut(mod, abi.ImportConfigGet, v, uint32(stack[2]), uint32(stack[3]))
}

func vocabSize(ctx context.Context, _ api.Module, stack []uint64) {
	stack[0] = uint64(uint32(stateOf(ctx).vocab.Size()))
}

func vocabPiece(ctx context.Context, mod api.Module, stack []uint64) {
	v := stateOf(ctx).vocab
	id := int32(stack[0])
	if id < 0 || int(id) >= v.Size() {
		stack[0] = uint64(0xffffffff)
		return
	}
	stack[0] = copyOut(mod, abi.ImportVocabPiece, v.Piece(id), uint32(stack[1]), uint32(stack[2]))
}

func promptGet(ctx context.Context, mod api.Module, stack []uint64) {
	copyTokens(mod, abi.ImportPromptGet, stateOf(ctx).prompt, stack)
}

func acceptedGet(ctx context.Context, mod api.Module, stack []uint64) {
	copyTokens(mod, abi.ImportAcceptedGet, stateOf(ctx).accepted, stack)
}

// copyTokens copies the first min(len(p), limit) tokens of p to buf as
// little-endian i32 and answers len(p): (buf, limit i32) -> i32.
func copyTokens(mod api.Module, fn string, p []int32, stack []uint64) {
	buf, limit := uint32(stack[0]), uint32(stack[1])
	n := uint32(len(p))
	if n > limit {
		n = limit
	}
	dst := read(mod, fn, buf, n*4)
	for i, t := range p[:n] {
		binary.LittleEndian.PutUint32(dst[4*i:], uint32(t))
	}
	stack[0] = uint64(uint32(len(p)))
}

func tokenAttrs(ctx context.Context, mod api.Module, stack []uint64) {
	st := stateOf(ctx)
	first, buf, count := int32(stack[0]), uint32(stack[1]), int32(stack[2])
	nv := int32(st.vocab.Size())
	if first < 0 || first >= nv {
		stack[0] = uint64(0xffffffff)
		return
	}
	n := min(max(count, 0), nv-first)
	dst := read(mod, abi.ImportTokenAttrs, buf, uint32(n)*4)
	for i, a := range st.tokenAttrs()[first : first+n] {
		binary.LittleEndian.PutUint32(dst[4*i:], uint32(a))
	}
	stack[0] = uint64(uint32(n))
}

func logLine(ctx context.Context, mod api.Module, stack []uint64) {
	msg := read(mod, abi.ImportLog, uint32(stack[1]), uint32(stack[2]))
	stateOf(ctx).log.line(int32(stack[0]), msg)
}

func clockNs(ctx context.Context, _ api.Module, stack []uint64) {
	stack[0] = uint64(stateOf(ctx).now())
}

// deadlineChecked is fn after a check of the call's deadline: wazero
// checks it only in guest code, so a guest calling the host in a loop of
// host calls (or one long host call) would otherwise run past it.
func deadlineChecked(fn api.GoModuleFunc) api.GoModuleFunc {
	return func(ctx context.Context, mod api.Module, stack []uint64) {
		checkDeadline(ctx)
		fn(ctx, mod, stack)
	}
}

// checkDeadline ends the guest's call, as wazero does at a deadline, when
// the call's context is done (the instance's watchdog cancelled it: the
// host reports ErrPluginTimeout).
func checkDeadline(ctx context.Context) {
	if ctx.Err() != nil {
		panic(sys.NewExitError(sys.ExitCodeDeadlineExceeded))
	}
}

// instantiateHostModule defines and instantiates module name in rt and
// returns the types of its functions, keyed by function name.
func instantiateHostModule(ctx context.Context, rt wazero.Runtime, name string, funcs []hostFunc) (map[string]api.FunctionDefinition, error) {
	b := rt.NewHostModuleBuilder(name)
	for _, f := range funcs {
		b.NewFunctionBuilder().WithGoModuleFunction(deadlineChecked(f.fn), f.params, f.results).Export(f.name)
	}
	compiled, err := b.Compile(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := rt.InstantiateModule(ctx, compiled, wazero.NewModuleConfig()); err != nil {
		return nil, err
	}
	return compiled.ExportedFunctions(), nil
}
