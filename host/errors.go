package host

import (
	"errors"
	"fmt"
)

// Sentinel errors, wrapped by every error this package returns; test with
// errors.Is. Load errors come as *LoadError, per-turn errors as
// *PluginError.
var (
	// ErrNotWasm: the bytes are not a valid WebAssembly module.
	ErrNotWasm = errors.New("host: not a valid WebAssembly module")
	// ErrTooLarge: the module is over Config's module size cap.
	ErrTooLarge = errors.New("host: module too large")
	// ErrMetadata: the realizar.meta section is missing or malformed, or
	// disagrees with the marker export.
	ErrMetadata = errors.New("host: missing or invalid plugin metadata")
	// ErrABIVersion: the module is built for another ABI version.
	ErrABIVersion = errors.New("host: unsupported plugin ABI version")
	// ErrKind: the plugin is not of the kind the caller asked for.
	ErrKind = errors.New("host: wrong plugin kind")
	// ErrMissingExport: a required export (marker, memory, realizar_*) is
	// absent or has the wrong type.
	ErrMissingExport = errors.New("host: missing or mistyped export")
	// ErrForbiddenImport: the module imports something outside the allow-list.
	ErrForbiddenImport = errors.New("host: forbidden import")
	// ErrBadConfig: the config is not a JSON object, is over the size cap, or
	// the plugin refused it (abi.ErrConfig).
	ErrBadConfig = errors.New("host: bad plugin config")
	// ErrHashMismatch: a manifest's sha256 pin does not match the module.
	ErrHashMismatch = errors.New("host: module sha256 does not match the pin")
	// ErrUnknownModule: a manifest pins a sha256 without a path, and no
	// module with that sha256 has been loaded by this Host.
	ErrUnknownModule = errors.New("host: unknown module")
	// ErrPluginTrap: the guest trapped (unreachable, out-of-bounds access,
	// stack overflow) or exited (proc_exit).
	ErrPluginTrap = errors.New("host: plugin trapped")
	// ErrPluginTimeout: a call ran past its deadline.
	ErrPluginTimeout = errors.New("host: plugin timed out")
	// ErrPluginMemory: the guest asked for memory past its page cap, or
	// declares more initial memory than the cap.
	ErrPluginMemory = errors.New("host: plugin memory limit exceeded")
	// ErrPluginFailed: the guest returned a negative abi.ErrCode.
	ErrPluginFailed = errors.New("host: plugin reported failure")
	// ErrBadResult: the guest returned a value the ABI does not allow (an
	// input address outside its memory, a top-N over abi.MaxTopN, a stop
	// action that does not exist, too many edits).
	ErrBadResult = errors.New("host: plugin returned an invalid result")
	// ErrNoInstance: the instance was discarded after an error in this turn;
	// the next Reset instantiates a new one.
	ErrNoInstance = errors.New("host: no live plugin instance (call Reset)")
	// ErrClosed: the Host, the adapter, or the Plugin given to a new
	// adapter, is closed.
	ErrClosed = errors.New("host: closed")
)

// LoadError is a module refused by Load: which module and why. It unwraps
// to one of the sentinels above (and possibly a lower-level cause).
type LoadError struct {
	Source string // the file path, or "sha256:<hex>" for bytes
	Err    error
}

func (e *LoadError) Error() string { return fmt.Sprintf("host: load %s: %v", e.Source, e.Err) }
func (e *LoadError) Unwrap() error { return e.Err }

func loadErr(src string, sentinel error, format string, args ...any) error {
	return &LoadError{Source: src, Err: fmt.Errorf("%w: %s", sentinel, fmt.Sprintf(format, args...))}
}

// PluginError is a plugin's failure during a turn: its init (a fresh
// instance at Reset), its reset, or a step. It unwraps to the cause: one of
// the sentinels above, forward.ErrBadToken or engine.ErrNoTokenAllowed. The
// Session wraps it in an *engine.PolicyError naming the policy's role;
// errors.As finds either.
type PluginError struct {
	// Plugin is the plugin's label, kind, name, version and sha256 prefix:
	// "sampler standard 1.0.0 (sha256 2b5644047386)".
	Plugin string
	// Phase is the call that failed: "init", "reset", "step" (a sampler's
	// or a processor's) or "check" (a stop policy's).
	Phase string
	// LastLog is the last line the plugin logged before the failure, as it
	// logged it ("[error] config: top_p must be in [0, 1]"; its first 512
	// bytes); "" when it logged none.
	LastLog string
	// Crash is the first line of a Go guest's runtime crash report, when
	// the failing instance wrote one to stderr ("panic: assignment to entry
	// in nil map", "fatal error: out of memory"; its first 512 bytes): the
	// cause, where LastLog is then the traceback's last frame. "" otherwise.
	Crash string
	Err   error
}

// Error names the plugin, the call and the cause, then Crash when there
// is one, else LastLog.
func (e *PluginError) Error() string {
	msg := fmt.Sprintf("plugin %s: %s: %v", e.Plugin, e.Phase, e.Err)
	switch {
	case e.Crash != "":
		msg += fmt.Sprintf(" (guest %q)", e.Crash)
	case e.LastLog != "":
		msg += fmt.Sprintf(" (last log line: %q)", e.LastLog)
	}
	return msg
}

func (e *PluginError) Unwrap() error { return e.Err }
