// Package wasmfile reads the parts of a WebAssembly binary that identify a
// realizar-host plugin (imports, exports, memories, custom sections) and
// writes its metadata section. It does not validate or compile code; the
// host does that with wazero after these checks pass.
//
// Parse returns ErrNotWasm for a wrong magic and a *FormatError carrying the
// byte offset for anything malformed. SetCustomSection and the wasmmeta
// command (abi/cmd/wasmmeta) append the "realizar.meta" section
// reproducibly: the same input and Meta give the same output bytes.
package wasmfile
