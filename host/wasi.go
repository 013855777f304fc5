package host

import (
	"context"
	"encoding/binary"

	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"

	"github.com/realizar-host/realizar-host/abi"
)

// wasiFuncs are the WASI preview 1 functions of abi.WASIAllowList(), written
// here rather than taken from wazero's wasi_snapshot_preview1 so that the
// module offers exactly these: no preopened directories, empty args and
// environment, stdout and stderr into the instance log, random_get from the
// turn's seed, and clocks from the instance's (possibly fake) clock. Every
// fd other than 1 and 2 answers EBADF.
var wasiFuncs = []hostFunc{
	{"args_get", []api.ValueType{i32, i32}, []api.ValueType{i32}, emptyGet},
	{"args_sizes_get", []api.ValueType{i32, i32}, []api.ValueType{i32}, emptySizesGet},
	{"environ_get", []api.ValueType{i32, i32}, []api.ValueType{i32}, emptyGet},
	{"environ_sizes_get", []api.ValueType{i32, i32}, []api.ValueType{i32}, emptySizesGet},
	{"clock_time_get", []api.ValueType{i32, i64, i32}, []api.ValueType{i32}, clockTimeGet},
	{"fd_write", []api.ValueType{i32, i32, i32, i32}, []api.ValueType{i32}, fdWrite},
	{"fd_close", []api.ValueType{i32}, []api.ValueType{i32}, fdStdioOnly},
	{"fd_fdstat_get", []api.ValueType{i32, i32}, []api.ValueType{i32}, fdFdstatGet},
	{"fd_fdstat_set_flags", []api.ValueType{i32, i32}, []api.ValueType{i32}, fdStdioOnly},
	{"fd_prestat_get", []api.ValueType{i32, i32}, []api.ValueType{i32}, badf},
	{"fd_prestat_dir_name", []api.ValueType{i32, i32, i32}, []api.ValueType{i32}, badf},
	{"poll_oneoff", []api.ValueType{i32, i32, i32, i32}, []api.ValueType{i32}, pollOneoff},
	{"proc_exit", []api.ValueType{i32}, nil, procExit},
	{"random_get", []api.ValueType{i32, i32}, []api.ValueType{i32}, randomGet},
	{"sched_yield", nil, []api.ValueType{i32}, success},
}

func errno(stack []uint64, e uint32) { stack[0] = uint64(e) }

func isStdio(fd uint32) bool { return fd == 1 || fd == 2 }

func success(_ context.Context, _ api.Module, stack []uint64) { errno(stack, abi.ErrnoSuccess) }

func badf(_ context.Context, _ api.Module, stack []uint64) { errno(stack, abi.ErrnoBadf) }

// emptyGet writes nothing: there are no args and no environment.
func emptyGet(_ context.Context, _ api.Module, stack []uint64) { errno(stack, abi.ErrnoSuccess) }

func emptySizesGet(_ context.Context, mod api.Module, stack []uint64) {
	m := mod.Memory()
	if !m.WriteUint32Le(uint32(stack[0]), 0) || !m.WriteUint32Le(uint32(stack[1]), 0) {
		errno(stack, abi.ErrnoFault)
		return
	}
	errno(stack, abi.ErrnoSuccess)
}

// clockTimeGet answers every clock (realtime, monotonic, process and thread
// CPU time) with the instance's monotonic clock, so a guest learns nothing
// about the host's wall time.
func clockTimeGet(ctx context.Context, mod api.Module, stack []uint64) {
	if uint32(stack[0]) > 3 {
		errno(stack, abi.ErrnoInval)
		return
	}
	if !mod.Memory().WriteUint64Le(uint32(stack[2]), uint64(stateOf(ctx).now())) {
		errno(stack, abi.ErrnoFault)
		return
	}
	errno(stack, abi.ErrnoSuccess)
}

func fdWrite(ctx context.Context, mod api.Module, stack []uint64) {
	fd, iovs, n, nwritten := uint32(stack[0]), uint32(stack[1]), uint32(stack[2]), uint32(stack[3])
	if !isStdio(fd) {
		errno(stack, abi.ErrnoBadf)
		return
	}
	if n > abi.WASIMaxIovecs {
		errno(stack, abi.ErrnoInval)
		return
	}
	m := mod.Memory()
	log := stateOf(ctx).log
	var total uint32
	for i := uint32(0); i < n; i++ {
		if i%64 == 63 {
			checkDeadline(ctx)
		}
		ptr, ok1 := m.ReadUint32Le(iovs + 8*i)
		size, ok2 := m.ReadUint32Le(iovs + 8*i + 4)
		b, ok3 := m.Read(ptr, size)
		if !ok1 || !ok2 || !ok3 {
			errno(stack, abi.ErrnoFault)
			return
		}
		log.write(b)
		total += size
	}
	if !m.WriteUint32Le(nwritten, total) {
		errno(stack, abi.ErrnoFault)
		return
	}
	errno(stack, abi.ErrnoSuccess)
}

// fdStdioOnly serves fd_close and fd_fdstat_set_flags: a no-op on stdout
// and stderr, EBADF elsewhere.
func fdStdioOnly(_ context.Context, _ api.Module, stack []uint64) {
	if !isStdio(uint32(stack[0])) {
		errno(stack, abi.ErrnoBadf)
		return
	}
	errno(stack, abi.ErrnoSuccess)
}

// fdFdstatGet describes stdout and stderr as write-only character devices.
func fdFdstatGet(_ context.Context, mod api.Module, stack []uint64) {
	if !isStdio(uint32(stack[0])) {
		errno(stack, abi.ErrnoBadf)
		return
	}
	b, ok := mod.Memory().Read(uint32(stack[1]), 24)
	if !ok {
		errno(stack, abi.ErrnoFault)
		return
	}
	clear(b)
	b[0] = 2                                        // filetype: character_device
	binary.LittleEndian.PutUint64(b[8:], 1<<6|1<<3) // rights: fd_write, fd_fdstat_set_flags
	errno(stack, abi.ErrnoSuccess)
}

// pollOneoff completes every subscription at once: clock subscriptions
// with success (the host does not sleep; time does not advance), fd
// subscriptions with EBADF.
func pollOneoff(_ context.Context, mod api.Module, stack []uint64) {
	in, out, nsub, nevents := uint32(stack[0]), uint32(stack[1]), uint32(stack[2]), uint32(stack[3])
	if nsub == 0 || nsub > 1<<16 {
		errno(stack, abi.ErrnoInval)
		return
	}
	m := mod.Memory()
	subs, ok1 := m.Read(in, nsub*48)
	events, ok2 := m.Read(out, nsub*32)
	if !ok1 || !ok2 {
		errno(stack, abi.ErrnoFault)
		return
	}
	for i := uint32(0); i < nsub; i++ {
		sub, ev := subs[48*i:], events[32*i:32*i+32]
		tag := sub[8]
		clear(ev)
		copy(ev[0:8], sub[0:8]) // userdata
		ev[10] = tag
		if tag != 0 {
			binary.LittleEndian.PutUint16(ev[8:], abi.ErrnoBadf)
		}
	}
	if !m.WriteUint32Le(nevents, nsub) {
		errno(stack, abi.ErrnoFault)
		return
	}
	errno(stack, abi.ErrnoSuccess)
}

// procExit ends the instance; the host reports ErrPluginTrap with the code.
func procExit(ctx context.Context, mod api.Module, stack []uint64) {
	code := uint32(stack[0])
	_ = mod.CloseWithExitCode(ctx, code)
	panic(sys.NewExitError(code))
}

func randomGet(ctx context.Context, mod api.Module, stack []uint64) {
	b, ok := mod.Memory().Read(uint32(stack[0]), uint32(stack[1]))
	if !ok {
		errno(stack, abi.ErrnoFault)
		return
	}
	r := &stateOf(ctx).random
	for i := 0; len(b) >= 8; i++ {
		if i%8192 == 8191 { // every 64 KiB
			checkDeadline(ctx)
		}
		binary.LittleEndian.PutUint64(b, r.Next())
		b = b[8:]
	}
	if len(b) > 0 {
		var last [8]byte
		binary.LittleEndian.PutUint64(last[:], r.Next())
		copy(b, last[:])
	}
	errno(stack, abi.ErrnoSuccess)
}
