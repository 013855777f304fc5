package abi

import "strconv"

// Version is ABI version 1, the first. This package describes it and
// version 2 (Version2, v2.go), which adds to it.
const Version = 1

// Kind is what a plugin does.
type Kind uint8

const (
	// KindSampler chooses a token id from logits (or top-N candidates).
	KindSampler Kind = iota + 1
	// KindProcessor edits logits before a sampler sees them.
	KindProcessor
	// KindStop decides from a token's id and bytes whether generation stops.
	KindStop
	// KindDrafter proposes the tokens a sequence is likely to generate next
	// (speculative decoding's drafts); ABI 2 only (ABI.md §12, drafter.go).
	KindDrafter
)

// String returns "sampler", "processor", "stop" or "drafter".
func (k Kind) String() string {
	switch k {
	case KindSampler:
		return "sampler"
	case KindProcessor:
		return "processor"
	case KindStop:
		return "stop"
	case KindDrafter:
		return "drafter"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// ParseKind is the inverse of Kind.String; ok is false for any other string.
func ParseKind(s string) (k Kind, ok bool) {
	switch s {
	case "sampler":
		return KindSampler, true
	case "processor":
		return KindProcessor, true
	case "stop":
		return KindStop, true
	case "drafter":
		return KindDrafter, true
	}
	return 0, false
}

// Marker is the name of the marker export for kind at ABI version 1, e.g.
// "realizar_abi_v1_sampler". The export is a function of type () -> () that
// the host never calls; its presence declares the kind and the version.
func (k Kind) Marker() string { return MarkerPrefix + "1_" + k.String() }

// MarkerPrefix starts every marker export; the version digits and "_<kind>"
// follow ("realizar_abi_v1_stop"). A module exporting a marker of another
// version is refused with the host's ErrABIVersion.
const MarkerPrefix = "realizar_abi_v"

// MetaSection is the name of the custom section that holds a plugin's
// metadata as JSON (wasmfile.Meta). It is appended after linking, by
// abi/cmd/wasmmeta, and read by the host before compiling.
const MetaSection = "realizar.meta"

// ImportModule is the module name of the host functions.
const ImportModule = "realizar"

// WASIModule is the module name of the allow-listed WASI functions.
const WASIModule = "wasi_snapshot_preview1"

// Exports every plugin provides, with their WebAssembly types.
const (
	// ExportMemory is the guest's linear memory (index 0).
	ExportMemory = "memory"
	// ExportInit: (n_vocab i32, max_piece i32, config_ptr i32, config_len i32) -> i64,
	// called once per instance; the result is PackInit's or a negative ErrCode.
	ExportInit = "realizar_init"
	// ExportReset: (seed i64, n_prompt i32) -> i32, called once per turn;
	// 0 or a negative ErrCode.
	ExportReset = "realizar_reset"
	// ExportAlloc (optional): (size i32) -> i32, called at most once, before
	// ExportInit, to place the config bytes; returns the address.
	ExportAlloc = "realizar_alloc"
	// ExportSample (sampler): (prev i32, count i32) -> i32, returns the token id.
	ExportSample = "realizar_sample"
	// ExportProcess (processor): (prev i32, count i32) -> i32, returns the
	// number of edits written to the output region or a negative ErrCode.
	ExportProcess = "realizar_process"
	// ExportCheck (stop): (token i32, len i32) -> i32, returns PackStop's
	// value or a negative ErrCode.
	ExportCheck = "realizar_check"
	// ExportInitialize is the WASI reactor start function (Go's
	// -buildmode=c-shared, wasi-libc's crt1-reactor). The host calls it at
	// instantiation when it is exported.
	ExportInitialize = "_initialize"
)

// Host functions in ImportModule, with their WebAssembly types. Lengths and
// limits are in bytes unless stated; "true length" means the full size of
// the value even when limit cut the copy short (http-wasm style).
const (
	// ImportConfigGet: (key_ptr, key_len, buf_ptr, buf_limit i32) -> i32.
	// Copies min(len, buf_limit) bytes of the value of top-level config key
	// into buf and returns its true length, or -1 if the key is absent.
	// A JSON string value is given unquoted (its decoded UTF-8 bytes); any
	// other value as its compact JSON text ("0.8", "true", "[1,2]").
	ImportConfigGet = "config_get"
	// ImportVocabSize: () -> i32, n_vocab.
	ImportVocabSize = "vocab_size"
	// ImportVocabPiece: (id, buf_ptr, buf_limit i32) -> i32. Copies the raw
	// bytes of token id and returns their true length, -1 for an id out of range.
	ImportVocabPiece = "vocab_piece"
	// ImportPromptGet: (buf_ptr, limit i32) -> i32. Copies the first
	// min(n, limit) prompt tokens (i32 little-endian) and returns n. Only
	// meaningful during realizar_reset; returns 0 elsewhere.
	ImportPromptGet = "prompt_get"
	// ImportLog: (level, msg_ptr, msg_len i32) -> (). Appends a line to the
	// instance's bounded log. Levels: LogDebug..LogError.
	ImportLog = "log"
	// ImportClockNs: () -> i64, monotonic nanoseconds since the instance was
	// created (the host may substitute a fake clock).
	ImportClockNs = "clock_ns"
)

// Log levels for ImportLog.
const (
	LogDebug = 0
	LogInfo  = 1
	LogWarn  = 2
	LogError = 3
)

// WASIAllowList returns every WASI preview 1 function a plugin may import
// (a fresh slice): what Go's wasip1 runtime needs and nothing more. Any
// other import is refused.
func WASIAllowList() []string { return append([]string(nil), wasiAllowList[:]...) }

var wasiAllowList = [...]string{
	"args_get", "args_sizes_get", "environ_get", "environ_sizes_get",
	"clock_time_get", "fd_write", "fd_close", "fd_fdstat_get",
	"fd_fdstat_set_flags", "fd_prestat_get", "fd_prestat_dir_name",
	"poll_oneoff", "proc_exit", "random_get", "sched_yield",
}

// WASI errno values the host returns.
const (
	ErrnoSuccess = 0
	ErrnoBadf    = 8
	ErrnoFault   = 21
	ErrnoInval   = 28
	ErrnoNosys   = 52
)

// WASIMaxIovecs is the most iovecs one fd_write may pass (POSIX's IOV_MAX
// on Linux); more is EINVAL, so that no host call's work grows with a
// guest-chosen count.
const WASIMaxIovecs = 1024

// Limits.
const (
	// MaxTopN is the largest N a sampler or processor may ask for.
	MaxTopN = 4096
	// MaxStopN is the largest hold-back or trim a stop policy can encode.
	MaxStopN = 1<<29 - 1
)

// ErrCode is a negative result a guest returns from realizar_init,
// realizar_reset, realizar_process or realizar_check. (realizar_sample has
// no error channel: any result outside [0, n_vocab) is a bad token.)
type ErrCode int32

const (
	// ErrFailed: unspecified failure; the guest should log why first.
	ErrFailed ErrCode = -1
	// ErrConfig: the config is invalid (the host reports ErrBadConfig).
	ErrConfig ErrCode = -2
	// ErrVocab: the guest cannot work with this n_vocab or max_piece.
	ErrVocab ErrCode = -3
	// ErrState: called out of order (e.g. realizar_sample before reset).
	ErrState ErrCode = -4
)

// String names the code ("config"); other negative values print as "code(-7)".
func (c ErrCode) String() string {
	switch c {
	case ErrFailed:
		return "failed"
	case ErrConfig:
		return "config"
	case ErrVocab:
		return "vocab"
	case ErrState:
		return "state"
	case ErrFeature:
		return "feature"
	}
	return "code(" + strconv.Itoa(int(c)) + ")"
}
