package ref

import (
	"sync"

	"github.com/jupiterrider/ffi"
)

// libffi's ffi_prep_cif stores the address of the argument-type array in
// the cif, out of the Go collector's sight; every array handed to it is kept
// here for the life of the process. Binding happens once, in Open.
var (
	keptMu   sync.Mutex
	keptArgs [][]*ffi.Type
)

func keep(args []*ffi.Type) []*ffi.Type {
	keptMu.Lock()
	defer keptMu.Unlock()
	kept := append([]*ffi.Type(nil), args...)
	keptArgs = append(keptArgs, kept)
	return kept
}

// prep binds symbol name of lib with the given signature.
func prep(lib ffi.Lib, name string, ret *ffi.Type, args ...*ffi.Type) (ffi.Fun, error) {
	return lib.Prep(name, ret, keep(args)...)
}

// prepCif prepares a call interface for function pointers of this signature.
func prepCif(cif *ffi.Cif, ret *ffi.Type, args ...*ffi.Type) ffi.Status {
	kept := keep(args)
	return ffi.PrepCif(cif, ffi.DefaultAbi, uint32(len(kept)), ret, kept...)
}
