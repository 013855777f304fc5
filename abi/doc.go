// Package abi is the plugin contract, versions 1 and 2: the constants,
// encodings and reference arithmetic that a realizar-host plugin and the
// host agree on. Version 2 (v2.go) adds the host's features at init, the
// allowed-token mask output, token attributes and the tokens accepted
// since the previous step.
//
// The normative text is ABI.md in this directory; this package is its Go
// transcription. It imports nothing outside the standard library (and no
// wazero), so guests compiled with GOOS=wasip1 may import it.
//
// Contents:
//   - names: the import module, the exports each kind must provide, the
//     marker export, the metadata custom section, the WASI allow-list;
//   - encodings: the packed results of realizar_init and realizar_check,
//     the error codes;
//   - determinism: the RNG (SplitMix64-seeded xoshiro256**), the uniform
//     float, Exp, Softmax, Draw and the candidate order. testdata/determinism.json
//     holds the vectors every SDK must reproduce bit for bit.
package abi
