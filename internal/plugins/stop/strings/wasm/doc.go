//go:build wasip1

// Command wasm is the strings stop policy built with the Go SDK (plugin
// "strings-go"): the same config and decisions as the C build
// (../c/strings.c, whose comment is the specification).
package main
