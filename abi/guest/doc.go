// Package guest is the Go SDK for writing realizar-host plugins (abi/ABI.md,
// versions 1 and 2) that compile with GOOS=wasip1 GOARCH=wasm -buildmode=c-shared.
//
// A plugin is a main package that defines the exports of its kind with
// //go:wasmexport (the marker, realizar_init, realizar_reset and the step
// export) and uses this package for the rest:
//
//   - the host functions of ABI §7 (ConfigRaw, ConfigFloat, ConfigInt,
//     ConfigBool, ConfigStrings, VocabPiece, Prompt, LogMsg, ClockNs) and
//     of ABI 2, §11 (TokenAttrs, Accepted), with Mask and MaskAddress for
//     a mask-mode processor (plugins/processor/allow/wasm is one), and
//     DraftRegion for a drafter (§12: Accepted gives the tokens since its
//     last realizar_draft);
//   - the contract's arithmetic, from package abi (abi.NewRNG, abi.Exp,
//     abi.SortCandidates, abi.Softmax, abi.Draw), plus Log, the SDK's
//     natural logarithm, which the C SDK (abi/guest/c) computes with the same
//     operations so that policies in both languages agree bit for bit;
//   - SelectTop, the top-k of full logits eight entries per loop iteration;
//   - Address, which hands realizar_init the address of a Go slice's first
//     element (the Go heap does not move objects, so the address stays
//     valid while a global holds the slice);
//   - ParseStrings and ParseString, a JSON string reader (fmt and
//     encoding/json import os, whose wasip1 build imports WASI functions the
//     host refuses, so a guest cannot use them).
//   - ObjectKeys and CheckKeys, which refuse a config key the plugin does
//     not know: config_get cannot list keys, so a plugin that wants to
//     refuse typos exports realizar_alloc, receives the raw config at
//     realizar_init and checks its top-level keys (the C SDK has
//     realizar_json_keys, realizar_config_check_keys and
//     REALIZAR_ALLOC_EXPORT; both log the same line).
//
// Outside wasip1 (vet and tests on the build machine) the host functions
// answer as a host that gives nothing (no config key, no token, an empty
// prompt), so that code calling them builds natively; a plugin's behaviour
// is tested through the real host, package host.
//
// The C SDK is abi/guest/c/realizar.h and realizar.c; c_test.go checks its
// constants against package abi and runs its determinism vectors. The Rust
// SDK is abi/guest/rust/realizar.rs (no_std, plain rustc, no cargo);
// rust_test.go builds it natively and runs the same vectors through the same
// driver protocol. The AssemblyScript SDK, abi/guest/assemblyscript/realizar.ts,
// has the constants, host functions and config readers but not yet §9's
// arithmetic, so it suits stop policies. plugins/ holds a policy in each.
//
// Nothing in this package allocates per step: ConfigX and Prompt allocate,
// and are meant for realizar_init and realizar_reset.
package guest
