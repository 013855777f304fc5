// Package guest is the Go SDK for writing realizar-host plugins (abi/ABI.md,
// version 1) that compile with GOOS=wasip1 GOARCH=wasm -buildmode=c-shared.
//
// A plugin is a main package that defines the exports of its kind with
// //go:wasmexport (the marker, realizar_init, realizar_reset and the step
// export) and uses this package for the rest:
//
//   - the host functions of ABI §7 (ConfigRaw, ConfigFloat, ConfigInt,
//     ConfigBool, ConfigStrings, VocabPiece, Prompt, LogMsg, ClockNs);
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
//
// Outside wasip1 (tests on the build machine) the host functions read a
// Fake that the test fills in, so a plugin's logic is testable natively.
//
// The C SDK is abi/guest/c/realizar.h and realizar.c; c_test.go checks its
// constants against package abi and runs its determinism vectors.
//
// Nothing in this package allocates per step: ConfigX and Prompt allocate,
// and are meant for realizar_init and realizar_reset.
package guest
